// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"encoding/json"
	"testing"
)

type layoutVector struct {
	Kind              string          `json:"kind"`
	Name              string          `json:"name"`
	StrideOrder       []int32         `json:"stride_order"`
	LayerViewOrder    []int32         `json:"layer_view_order"`
	IsLayerCompact    bool            `json:"is_layer_compact"`
	IsBlockContiguous bool            `json:"is_block_contiguous"`
	IsBlockCompact    bool            `json:"is_block_compact"`
	IsBlockOutermost  bool            `json:"is_block_outermost"`
	Order             int             `json:"order"`
	FlashInfer        *string         `json:"flashinfer"`
	Input             string          `json:"input"`
	Layout            string          `json:"layout"`
	Sizes             []int64         `json:"sizes"`
	Strides           []int64         `json:"strides"`
	PhysicalShape     []int64         `json:"physical_shape"`
	Numel             int64           `json:"numel"`
	Error             json.RawMessage `json:"error"`
}

func mustLayout(t *testing.T, name string) KVCacheLayout {
	t.Helper()
	l, err := KVCacheLayoutFromName(name)
	mustOK(t, err)
	return l
}

func TestKVCacheLayoutVectors(t *testing.T) {
	props, names, strides := 0, 0, 0
	for _, c := range loadCases[layoutVector](t, "kv_cache_layout") {
		switch c.Kind {
		case "properties":
			l := mustLayout(t, c.Name)
			p, err := l.Properties()
			mustOK(t, err)
			if p.Name != c.Name || p.Order != c.Order || KVCacheLayouts[p.Order] != l ||
				p.IsLayerCompact != c.IsLayerCompact || p.IsBlockContiguous != c.IsBlockContiguous ||
				p.IsBlockCompact != c.IsBlockCompact || p.IsBlockOutermost != c.IsBlockOutermost {
				t.Errorf("%s: properties %+v", c.Name, p)
			}
			for i, v := range c.StrideOrder {
				if p.StrideOrder[i] != v {
					t.Errorf("%s: stride order %v", c.Name, p.StrideOrder)
				}
			}
			for i, v := range c.LayerViewOrder {
				if p.LayerViewOrder[i] != v {
					t.Errorf("%s: layer view order %v", c.Name, p.LayerViewOrder)
				}
			}
			fi, err := l.FlashInferLayoutString()
			if c.FlashInfer == nil {
				wantError(t, err, StatusNotSupported, "has no FlashInfer equivalent")
			} else if mustOK(t, err); fi != *c.FlashInfer || p.FlashInferLayout != fi {
				t.Errorf("%s: FlashInfer %q", c.Name, fi)
			}
			props++
		case "from_name":
			l, err := KVCacheLayoutFromName(c.Input)
			if c.Layout == "error" {
				wantError(t, err, StatusInvalidArgument, "name is an unknown KV cache layout")
			} else {
				mustOK(t, err)
				p, err := l.Properties()
				mustOK(t, err)
				if p.Name != c.Layout {
					t.Errorf("%q: got %s, want %s", c.Input, p.Name, c.Layout)
				}
			}
			names++
		default:
			var sizes [5]int64
			copy(sizes[:], c.Sizes)
			got, err := mustLayout(t, c.Layout).Strides(sizes)
			if c.Error != nil {
				wantError(t, err, StatusInvalidArgument, "overflows int64")
			} else {
				mustOK(t, err)
				for i := range sizes {
					if got.Strides[i] != c.Strides[i] || got.PhysicalShape[i] != c.PhysicalShape[i] {
						t.Errorf("%s %v: got %+v", c.Layout, c.Sizes, got)
						break
					}
				}
				if got.Numel != c.Numel {
					t.Errorf("%s %v: numel %d", c.Layout, c.Sizes, got.Numel)
				}
			}
			strides++
		}
	}
	if props != 6 || names != 25 || strides != 354 {
		t.Errorf("counts %d %d %d", props, names, strides)
	}
}

type supportedVector struct {
	Name     string          `json:"name"`
	Backends [][]string      `json:"backends"`
	Layouts  json.RawMessage `json:"layouts"`
}

func TestGetSupportedKVCacheLayoutsVectors(t *testing.T) {
	ok, errs := 0, 0
	for _, c := range loadCases[supportedVector](t, "get_supported_kv_cache_layouts") {
		backends := make([][]KVCacheLayout, len(c.Backends))
		for i, b := range c.Backends {
			if b == nil {
				continue // JSON null: a backend that declares nothing
			}
			backends[i] = []KVCacheLayout{}
			for _, n := range b {
				backends[i] = append(backends[i], mustLayout(t, n))
			}
		}
		got, err := GetSupportedKVCacheLayouts(backends)
		var want []string
		if json.Unmarshal(c.Layouts, &want) != nil {
			wantError(t, err, StatusInvalidArgument, "cattn_get_supported_kv_cache_layouts: args->")
			errs++
			continue
		}
		mustOK(t, err)
		if len(got) != len(want) {
			t.Fatalf("%s: got %v, want %v", c.Name, got, want)
		}
		for i := range got {
			if p, _ := got[i].Properties(); p.Name != want[i] {
				t.Errorf("%s: got %v, want %v", c.Name, got, want)
			}
		}
		ok++
	}
	if ok+errs != 322 || errs < 30 {
		t.Errorf("counts %d %d", ok, errs)
	}
}

type resolveVector struct {
	Kind      string     `json:"kind"`
	Name      string     `json:"name"`
	Preset    *string    `json:"preset"`
	Initial   *string    `json:"initial"`
	Input     string     `json:"input"`
	Workers   [][]string `json:"workers"`
	Specs     [][3]int64 `json:"specs"`
	Env       *string    `json:"env"`
	Connector *string    `json:"connector"`
	Layout    string     `json:"layout"`
	FellBack  bool       `json:"fell_back"`
	Error     *string    `json:"error"`
}

func TestResolveKVCacheLayoutVectors(t *testing.T) {
	resolved, failed, others := 0, 0, 0
	for _, c := range loadCases[resolveVector](t, "resolve_kv_cache_layout") {
		ctx, err := NewContext()
		mustOK(t, err)
		switch c.Kind {
		case "record", "get_resolved":
			mustOK(t, ctx.SetKVCacheLayoutPreset(c.Initial))
			if c.Kind == "record" {
				err = ctx.RecordKVCacheLayout(c.Input)
			} else {
				var l KVCacheLayout
				l, err = ctx.ResolvedKVCacheLayout()
				if err == nil {
					if p, _ := l.Properties(); p.Name != c.Layout {
						t.Errorf("get_resolved %v: %s", c.Initial, p.Name)
					}
				}
			}
			if (err != nil) != (c.Error != nil) {
				t.Errorf("%s %v %q: %v", c.Kind, c.Initial, c.Input, err)
			}
			others++
		default:
			mustOK(t, ctx.SetKVCacheLayoutPreset(c.Preset))
			specs := make([]HNCShape, len(c.Specs))
			for i, s := range c.Specs {
				specs[i] = HNCShape{s[0], s[1], s[2]}
			}
			r, err := ctx.ResolveKVCacheLayout(ResolveKVCacheLayoutArgs{Workers: c.Workers,
				Specs: specs, UserSetting: c.Env, Connector: c.Connector})
			if c.Error != nil {
				wantError(t, err, StatusInvalidArgument, "cattn_resolve_kv_cache_layout:")
				failed++
			} else {
				mustOK(t, err)
				if p, _ := r.Layout.Properties(); p.Name != c.Layout || r.ConnectorFellBack != c.FellBack {
					t.Errorf("%s: got %+v (%s)", c.Name, r, p.Name)
				}
				resolved++
			}
		}
		mustOK(t, ctx.Close())
	}
	if resolved+failed != 439 || others != 81 {
		t.Errorf("counts %d %d %d", resolved, failed, others)
	}
}

func TestResolveKVCacheLayoutHelpers(t *testing.T) {
	l, err := ResolveKVCacheLayout([]string{"BLNHC", "NHD"})
	mustOK(t, err)
	if l != KVCacheLayoutBLNHC {
		t.Errorf("got %v", l)
	}
	_, err = ResolveKVCacheLayout(nil)
	wantError(t, err, StatusInvalidArgument, "args->worker_counts[0]")
	ctx, err := NewContext()
	mustOK(t, err)
	defer ctx.Close()
	mustOK(t, ctx.RecordKVCacheLayout("HND"))
	got, err := ctx.ResolvedKVCacheLayout()
	mustOK(t, err)
	if got != KVCacheLayoutLBHNC {
		t.Errorf("got %v", got)
	}
	wantError(t, ctx.RecordKVCacheLayout("BLHNC"), StatusInvalidArgument, "already resolved to")
	_, err = KVCacheLayoutFromName("N\x00HD")
	wantError(t, err, StatusInvalidArgument, "NUL")
	_, err = (*Context)(nil).ResolveKVCacheLayout(ResolveKVCacheLayoutArgs{})
	wantError(t, err, StatusInvalidArgument, "ctx is NULL")
	_, err = KVCacheLayout(9).Properties()
	wantError(t, err, StatusInvalidArgument, "layout is not a KV-cache layout (got 9")
}
