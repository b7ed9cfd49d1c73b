// SPDX-License-Identifier: Apache-2.0

package cattn

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
	f := newFrame("cattn_kv_cache_layout_strides", "KVCacheLayout.Strides")
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
		"len(backends)")
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
