// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "unsafe"

import "strings"

// The six physical layouts of vLLM's KVCacheLayout (since 1.1) as KVCacheLayout values: NHD is
// LBNHC and HND is LBHNC (the same numbers). The logical shape is [L, B, H, N, C] (layer, block,
// head, slot in the block, content). The 1.0 calls (GetKVCacheLayout, the override) still
// accept and return only Unset, NHD and HND.
const (
	KVCacheLayoutLBNHC KVCacheLayout = KVCacheLayoutNHD
	KVCacheLayoutLBHNC KVCacheLayout = KVCacheLayoutHND
	KVCacheLayoutLHBNC KVCacheLayout = 3
	KVCacheLayoutBLHNC KVCacheLayout = 4
	KVCacheLayoutBLNHC KVCacheLayout = 5
	KVCacheLayoutBHLNC KVCacheLayout = 6
)

// KVCacheLayouts lists the six layouts in vLLM's iteration order (CATTN_KV_CACHE_LAYOUTS_INIT),
// which breaks ties in GetSupportedKVCacheLayouts.
var KVCacheLayouts = [6]KVCacheLayout{KVCacheLayoutLBHNC, KVCacheLayoutLBNHC, KVCacheLayoutLHBNC,
	KVCacheLayoutBLHNC, KVCacheLayoutBLNHC, KVCacheLayoutBHLNC}

// KVCacheLayoutProperties are a layout's fixed properties (cattn_kv_cache_layout_properties_t).
type KVCacheLayoutProperties struct {
	StrideOrder       [5]int32 // the logical axis at each physical position, outermost first
	LayerViewOrder    [4]int32 // the physical order of the per-layer view [B, H, N, C]
	IsLayerCompact    bool     // L is outermost
	IsBlockContiguous bool     // H, N, C innermost, in that order
	IsBlockCompact    bool     // L and B are the two outermost
	IsBlockOutermost  bool     // B is outermost
	Order             int      // position in vLLM's iteration order
	Name              string   // canonical name ("LBNHC", never "NHD")
	FlashInferLayout  string   // "NHD"/"HND"; "" for LHBNC
}

// KVCacheLayoutStrides are the strides of a KV-cache view (cattn_kv_cache_layout_strides).
type KVCacheLayoutStrides struct {
	Strides       [5]int64 // element stride of each logical axis L, B, H, N, C
	PhysicalShape [5]int64 // the sizes in physical order
	Numel         int64
}

func nulError(f *frame, arg string) error {
	return f.argError(arg, "is an unknown KV cache layout", "a string with a NUL byte", "a layout name")
}

// KVCacheLayoutFromName parses a layout name as vLLM's _layout_from_name
// (cattn_kv_cache_layout_from_name): "NHD" and "HND" are aliases, otherwise one of the six
// names, exact and case-sensitive.
//
// See docs/api/kv_cache_layout.md.
func KVCacheLayoutFromName(name string) (KVCacheLayout, error) {
	f := newFrame("cattn_kv_cache_layout_from_name", "KVCacheLayoutFromName")
	defer f.free()
	if strings.IndexByte(name, 0) >= 0 {
		return KVCacheLayoutUnset, nulError(f, "name")
	}
	return f.kvCacheLayoutFromName(name)
}

// Properties describes the layout (cattn_kv_cache_layout_get_properties).
func (l KVCacheLayout) Properties() (KVCacheLayoutProperties, error) {
	f := newFrame("cattn_kv_cache_layout_get_properties", "KVCacheLayout.Properties")
	defer f.free()
	return f.kvCacheLayoutProperties(l)
}

// FlashInferLayoutString is FlashInfer's name of the layout, as vLLM's
// get_flashinfer_layout_string; StatusNotSupported for LHBNC.
//
// See docs/api/kv_cache_layout.md.
func (l KVCacheLayout) FlashInferLayoutString() (string, error) {
	f := newFrame("cattn_get_flashinfer_layout_string", "KVCacheLayout.FlashInferLayoutString")
	defer f.free()
	return f.flashInferLayoutString(l)
}

// Strides gives the strides of the logical [L, B, H, N, C] view of a compact buffer stored in
// the layout (cattn_kv_cache_layout_strides); an overflow of int64 is StatusInvalidArgument.
func (l KVCacheLayout) Strides(sizes [5]int64) (KVCacheLayoutStrides, error) {
	f := newFrame("cattn_kv_cache_layout_strides", "KVCacheLayout.Strides", "args->layout", "l",
		"args->sizes", "sizes")
	defer f.free()
	return f.kvCacheLayoutStrides(l, sizes)
}

// GetSupportedKVCacheLayouts combines one worker's backends' preferences, as vLLM's
// get_supported_kv_cache_layouts (cattn_get_supported_kv_cache_layouts). A nil entry is a
// backend that declares nothing; an empty non-nil one declares an empty list.
//
// See docs/api/get_supported_kv_cache_layouts.md.
func GetSupportedKVCacheLayouts(backends [][]KVCacheLayout) ([]KVCacheLayout, error) {
	counts := make([]int64, len(backends))
	var flat []int32
	first := -1
	for i, b := range backends {
		if b == nil {
			counts[i] = -1 // CATTN_KV_CACHE_LAYOUTS_NONE
			continue
		}
		if first < 0 {
			first = len(b)
		}
		counts[i] = int64(len(b))
		for _, l := range b {
			flat = append(flat, int32(l))
		}
	}
	capacity := len(KVCacheLayouts)
	if first > capacity {
		capacity = first
	}
	f := newFrame("cattn_get_supported_kv_cache_layouts", "GetSupportedKVCacheLayouts",
		"args->backend_counts", "backends", "args->layouts", "backends", "args->num_backends",
		"len(backends)", "args->out_capacity", "the result's capacity")
	defer f.free()
	return f.getSupportedKVCacheLayouts(counts, flat, capacity)
}

// HNCShape is one KV-cache spec's (num_heads, num_states, page_size_bytes).
type HNCShape struct {
	NumHeads, NumStates, PageSizeBytes int64
}

// ResolveKVCacheLayoutArgs are the inputs of Context.ResolveKVCacheLayout
// (cattn_resolve_kv_cache_layout_args_t).
type ResolveKVCacheLayoutArgs struct {
	Workers         [][]string // one list of layout names per worker; they must agree
	Specs           []HNCShape // the KV-cache specs' shapes
	UserSetting     *string    // vLLM's VLLM_KV_CACHE_LAYOUT; nil = unset
	ReadEnvironment bool       // read CATTN_KV_CACHE_LAYOUT when UserSetting is nil
	Connector       *string    // the KV connector's preferred layout; nil = none
}

// The C fields of cattn_resolve_kv_cache_layout_args_t as ResolveKVCacheLayoutArgs holds them.
var resolveRenames = []string{"args->num_workers", "len(args.Workers)",
	"args->worker_counts", "args.Workers", "args->worker_names", "args.Workers",
	"args->num_specs", "len(args.Specs)", "args->spec_num_heads", "args.Specs",
	"args->spec_num_states", "args.Specs", "args->spec_page_size_bytes", "args.Specs",
	"args->env_value", "args.UserSetting", "args->connector_layout", "args.Connector"}

// ResolvedKVCacheLayout is what Context.ResolveKVCacheLayout decided.
type ResolvedKVCacheLayout struct {
	Layout            KVCacheLayout
	ConnectorFellBack bool // the connector's layout was not a candidate (vLLM warns)
	FromPreset        bool // the context already held a layout, which won
}

func hasNUL(args *ResolveKVCacheLayoutArgs) bool {
	for _, w := range args.Workers {
		for _, n := range w {
			if strings.IndexByte(n, 0) >= 0 {
				return true
			}
		}
	}
	return (args.UserSetting != nil && strings.IndexByte(*args.UserSetting, 0) >= 0) ||
		(args.Connector != nil && strings.IndexByte(*args.Connector, 0) >= 0)
}

// withContext runs call with ctx's C handle and a frame for fn, holding the context for the
// call (a nil or closed Context is an error naming ctx).
func (ctx *Context) withContext(fn, goName string, call func(f *frame, c cContext) error,
	renames ...string) error {
	f := newFrame(fn, goName, renames...)
	defer f.free()
	if ctx == nil {
		return f.argError("ctx", "is NULL", "a nil *Context", "a Context")
	}
	c, err := ctx.acquire(f)
	if err != nil {
		return err
	}
	defer ctx.release()
	return call(f, c)
}

// ResolveKVCacheLayout resolves one layout for the model with vLLM's precedence
// (resolve_kv_cache_layout) and stores its canonical name in the context.
//
// See docs/api/resolve_kv_cache_layout.md.
func (ctx *Context) ResolveKVCacheLayout(args ResolveKVCacheLayoutArgs) (ResolvedKVCacheLayout, error) {
	var r ResolvedKVCacheLayout
	err := ctx.withContext("cattn_resolve_kv_cache_layout", "Context.ResolveKVCacheLayout",
		func(f *frame, c cContext) (err error) {
			if hasNUL(&args) {
				return nulError(f, "args")
			}
			r, err = f.resolveKVCacheLayout(c, &args)
			return err
		}, resolveRenames...)
	return r, err
}

// ResolveKVCacheLayout is the one-call helper: the layout every worker's supported names
// resolve to, with no specs, setting or connector, in a fresh context.
//
// See docs/api/resolve_kv_cache_layout.md.
func ResolveKVCacheLayout(supported []string) (KVCacheLayout, error) {
	ctx, err := NewContext()
	if err != nil {
		return KVCacheLayoutUnset, err
	}
	defer ctx.Close()
	r, err := ctx.ResolveKVCacheLayout(ResolveKVCacheLayoutArgs{Workers: [][]string{supported}})
	return r.Layout, err
}

// SetKVCacheLayoutPreset sets (or with nil clears) the context's layout name as written,
// vLLM's explicit cache_config.kv_cache_layout (cattn_context_set_kv_cache_layout_preset).
//
// See docs/api/resolve_kv_cache_layout.md.
func (ctx *Context) SetKVCacheLayoutPreset(name *string) error {
	return ctx.withContext("cattn_context_set_kv_cache_layout_preset",
		"Context.SetKVCacheLayoutPreset", func(f *frame, c cContext) error {
			if name != nil && strings.IndexByte(*name, 0) >= 0 {
				return nulError(f, "name")
			}
			return f.setKVCacheLayoutPreset(c, name)
		})
}

// RecordKVCacheLayout adopts a layout resolved elsewhere, as vLLM's record_kv_cache_layout.
func (ctx *Context) RecordKVCacheLayout(name string) error {
	return ctx.withContext("cattn_record_kv_cache_layout", "Context.RecordKVCacheLayout",
		func(f *frame, c cContext) error {
			if strings.IndexByte(name, 0) >= 0 {
				return nulError(f, "name")
			}
			return f.recordKVCacheLayout(c, name)
		})
}

// ResolvedKVCacheLayout is the context's resolved layout, as vLLM's
// CacheConfig.get_resolved_kv_cache_layout.
//
// See docs/api/resolve_kv_cache_layout.md.
func (ctx *Context) ResolvedKVCacheLayout() (KVCacheLayout, error) {
	l := KVCacheLayoutUnset
	err := ctx.withContext("cattn_get_resolved_kv_cache_layout", "Context.ResolvedKVCacheLayout",
		func(f *frame, c cContext) (err error) {
			l, err = f.resolvedKVCacheLayout(c)
			return err
		})
	return l, err
}

func (f *frame) kvCacheLayoutFromName(name string) (KVCacheLayout, error) {
	var l C.int32_t
	err := f.status(cKVCacheLayoutFromName(f.cstring(name), &l, f.msg))
	return KVCacheLayout(l), err
}

func (f *frame) kvCacheLayoutProperties(l KVCacheLayout) (KVCacheLayoutProperties, error) {
	p := cArgs[C.cattn_kv_cache_layout_properties_t](f)
	if err := f.status(cKVCacheLayoutGetProperties(C.int32_t(l), p, f.msg)); err != nil {
		return KVCacheLayoutProperties{}, err
	}
	var out KVCacheLayoutProperties
	for i := range out.StrideOrder {
		out.StrideOrder[i] = int32(p.stride_order[i])
	}
	for i := range out.LayerViewOrder {
		out.LayerViewOrder[i] = int32(p.layer_view_order[i])
	}
	out.IsLayerCompact = p.is_layer_compact != 0
	out.IsBlockContiguous = p.is_block_contiguous != 0
	out.IsBlockCompact = p.is_block_compact != 0
	out.IsBlockOutermost = p.is_block_outermost != 0
	out.Order = int(p.order)
	out.Name = C.GoString(p.name)
	if p.flashinfer_layout != nil {
		out.FlashInferLayout = C.GoString(p.flashinfer_layout)
	}
	return out, nil
}

func (f *frame) flashInferLayoutString(l KVCacheLayout) (string, error) {
	out := (**C.char)(f.alloc(unsafe.Sizeof(uintptr(0))))
	if err := f.status(cGetFlashinferLayoutString(C.int32_t(l), out, f.msg)); err != nil {
		return "", err
	}
	return C.GoString(*out), nil
}

func (f *frame) kvCacheLayoutStrides(l KVCacheLayout, sizes [5]int64) (KVCacheLayoutStrides, error) {
	a := cArgs[C.cattn_kv_cache_layout_strides_args_t](f)
	for i, s := range sizes {
		a.sizes[i] = C.int64_t(s)
	}
	a.layout = C.cattn_kv_cache_layout_t(l)
	if err := f.status(cKVCacheLayoutStrides(a, f.msg)); err != nil {
		return KVCacheLayoutStrides{}, err
	}
	var out KVCacheLayoutStrides
	for i := range out.Strides {
		out.Strides[i] = int64(a.strides[i])
		out.PhysicalShape[i] = int64(a.physical_shape[i])
	}
	out.Numel = int64(a.numel)
	return out, nil
}

func (f *frame) getSupportedKVCacheLayouts(counts []int64, layouts []int32, capacity int) ([]KVCacheLayout, error) {
	a := cArgs[C.cattn_get_supported_kv_cache_layouts_args_t](f)
	a.num_backends = C.int64_t(len(counts))
	a.backend_counts = f.int64s(counts)
	if len(layouts) > 0 {
		p := f.alloc(uintptr(len(layouts)) * 4)
		copy(unsafe.Slice((*int32)(p), len(layouts)), layouts)
		a.layouts = (*C.cattn_kv_cache_layout_t)(p)
	}
	out := f.alloc(uintptr(capacity) * 4)
	a.out = (*C.cattn_kv_cache_layout_t)(out)
	a.out_capacity = C.int64_t(capacity)
	if err := f.status(cGetSupportedKVCacheLayouts(a, f.msg)); err != nil {
		return nil, err
	}
	got := unsafe.Slice((*int32)(out), int(a.num_out))
	res := make([]KVCacheLayout, len(got))
	for i, v := range got {
		res[i] = KVCacheLayout(v)
	}
	return res, nil
}

func (f *frame) setKVCacheLayoutPreset(ctx cContext, name *string) error {
	var p *C.char
	if name != nil {
		p = f.cstring(*name)
	}
	return f.status(cContextSetKVCacheLayoutPreset(ctx, p, f.msg))
}

func (f *frame) resolveKVCacheLayout(ctx cContext, args *ResolveKVCacheLayoutArgs) (ResolvedKVCacheLayout, error) {
	a := cArgs[C.cattn_resolve_kv_cache_layout_args_t](f)
	counts := make([]int64, len(args.Workers))
	total := 0
	for i, w := range args.Workers {
		counts[i] = int64(len(w))
		total += len(w)
	}
	a.num_workers = C.int64_t(len(counts))
	a.worker_counts = f.int64s(counts)
	if total > 0 {
		names := unsafe.Slice((**C.char)(f.alloc(uintptr(total)*unsafe.Sizeof(uintptr(0)))), total)
		k := 0
		for _, w := range args.Workers {
			for _, n := range w {
				names[k] = f.cstring(n)
				k++
			}
		}
		a.worker_names = &names[0]
	}
	heads := make([]int64, len(args.Specs))
	states := make([]int64, len(args.Specs))
	pages := make([]int64, len(args.Specs))
	for i, s := range args.Specs {
		heads[i], states[i], pages[i] = s.NumHeads, s.NumStates, s.PageSizeBytes
	}
	a.num_specs = C.int64_t(len(args.Specs))
	a.spec_num_heads = f.int64s(heads)
	a.spec_num_states = f.int64s(states)
	a.spec_page_size_bytes = f.int64s(pages)
	if args.UserSetting != nil {
		a.env_value = f.cstring(*args.UserSetting)
	}
	a.read_environment = b2i(args.ReadEnvironment)
	if args.Connector != nil {
		a.connector_layout = f.cstring(*args.Connector)
	}
	if err := f.status(cResolveKVCacheLayout(ctx, a, f.msg)); err != nil {
		return ResolvedKVCacheLayout{}, err
	}
	return ResolvedKVCacheLayout{Layout: KVCacheLayout(a.layout),
		ConnectorFellBack: a.connector_fell_back != 0, FromPreset: a.from_preset != 0}, nil
}

func (f *frame) recordKVCacheLayout(ctx cContext, name string) error {
	return f.status(cRecordKVCacheLayout(ctx, f.cstring(name), f.msg))
}

func (f *frame) resolvedKVCacheLayout(ctx cContext) (KVCacheLayout, error) {
	var l C.int32_t
	err := f.status(cGetResolvedKVCacheLayout(ctx, &l, f.msg))
	return KVCacheLayout(l), err
}
