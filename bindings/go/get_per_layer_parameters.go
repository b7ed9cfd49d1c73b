// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "unsafe"

// AttentionLayer is what vLLM reads from one attention layer's impl
// (cattn_attention_layer_desc_t).
type AttentionLayer struct {
	SlidingWindow    [2]int64 // impl.sliding_window, used when HasSlidingWindow
	HasSlidingWindow bool     // false: impl.sliding_window is None
	LogitsSoftCap    float64  // used when HasLogitsSoftCap
	HasLogitsSoftCap bool     // false: impl.logits_soft_cap is None
	Scale            float64  // impl.scale
	HasSinks         bool     // impl.sinks is not None
}

// PerLayerParameters is vLLM's PerLayerParameters (cattn_per_layer_parameters_t).
type PerLayerParameters struct {
	WindowLeft       int64   // -1: no sliding window
	LogitsSoftCap    float64 // meaningful when HasLogitsSoftCap; 0 otherwise
	HasLogitsSoftCap bool    // false: None, which differs from a cap of 0
	SMScale          float64
	HasSinks         bool
}

// GlobalHyperparameters are the first layer's parameters and vLLM's two flags
// (cattn_global_hyperparameters_t).
type GlobalHyperparameters struct {
	PerLayerParameters
	HasSameWindowLefts bool // every layer's WindowLeft equals the first's
	HasSameAllParams   bool // every layer equals the first in all four fields
}

// GetPerLayerParameters converts layer descriptions into per-layer parameters, as vLLM's
// get_per_layer_parameters (cattn_get_per_layer_parameters): WindowLeft is SlidingWindow[0],
// or -1 without a window; a missing soft cap stays missing. No layers give an empty result.
//
// See docs/api/get_per_layer_parameters.md.
func GetPerLayerParameters(layers []AttentionLayer) ([]PerLayerParameters, error) {
	f := newFrame("cattn_get_per_layer_parameters", "GetPerLayerParameters")
	defer f.free()
	return f.getPerLayerParameters(layers)
}

// InferGlobalHyperparameters takes the first layer's parameters as global and reports whether
// every layer shares its window and all its parameters, as vLLM's
// infer_global_hyperparameters (cattn_infer_global_hyperparameters), comparing with ==
// (NaN equals nothing, -0.0 equals 0.0, a missing soft cap equals only a missing one; the
// first layer always equals itself). No layers is StatusInvalidArgument (vLLM asserts).
func InferGlobalHyperparameters(params []PerLayerParameters) (GlobalHyperparameters, error) {
	f := newFrame("cattn_infer_global_hyperparameters", "InferGlobalHyperparameters",
		"num_layers", "len(params)")
	defer f.free()
	return f.inferGlobalHyperparameters(params)
}

func (f *frame) perLayerArray(n int) []C.cattn_per_layer_parameters_t {
	if n == 0 {
		return nil
	}
	p := f.alloc(uintptr(n) * C.sizeof_cattn_per_layer_parameters_t)
	return unsafe.Slice((*C.cattn_per_layer_parameters_t)(p), n)
}

func (f *frame) getPerLayerParameters(layers []AttentionLayer) ([]PerLayerParameters, error) {
	n := len(layers)
	var descs []C.cattn_attention_layer_desc_t
	if n > 0 {
		p := f.alloc(uintptr(n) * C.sizeof_cattn_attention_layer_desc_t)
		descs = unsafe.Slice((*C.cattn_attention_layer_desc_t)(p), n)
	}
	for i, l := range layers {
		d := &descs[i]
		d.struct_size = C.sizeof_cattn_attention_layer_desc_t
		d.sliding_window_left = C.int64_t(l.SlidingWindow[0])
		d.sliding_window_right = C.int64_t(l.SlidingWindow[1])
		d.logits_soft_cap = C.double(l.LogitsSoftCap)
		d.scale = C.double(l.Scale)
		d.has_sliding_window = b2i(l.HasSlidingWindow)
		d.has_logits_soft_cap = b2i(l.HasLogitsSoftCap)
		d.has_sinks = b2i(l.HasSinks)
	}
	out := f.perLayerArray(n)
	for i := range out {
		out[i].struct_size = C.sizeof_cattn_per_layer_parameters_t
	}
	err := f.status(cGetPerLayerParameters(unsafe.SliceData(descs), C.size_t(n),
		unsafe.SliceData(out), f.msg))
	if err != nil {
		return nil, err
	}
	res := make([]PerLayerParameters, n)
	for i, p := range out {
		res[i] = PerLayerParameters{
			WindowLeft:       int64(p.window_left),
			LogitsSoftCap:    float64(p.logits_soft_cap),
			HasLogitsSoftCap: p.has_logits_soft_cap != 0,
			SMScale:          float64(p.sm_scale),
			HasSinks:         p.has_sinks != 0,
		}
	}
	return res, nil
}

func (f *frame) inferGlobalHyperparameters(params []PerLayerParameters) (GlobalHyperparameters, error) {
	in := f.perLayerArray(len(params))
	for i, p := range params {
		c := &in[i]
		c.struct_size = C.sizeof_cattn_per_layer_parameters_t
		c.window_left = C.int64_t(p.WindowLeft)
		c.logits_soft_cap = C.double(p.LogitsSoftCap)
		c.sm_scale = C.double(p.SMScale)
		c.has_logits_soft_cap = b2i(p.HasLogitsSoftCap)
		c.has_sinks = b2i(p.HasSinks)
	}
	out := cArgs[C.cattn_global_hyperparameters_t](f)
	err := f.status(cInferGlobalHyperparameters(unsafe.SliceData(in),
		C.size_t(len(params)), out, f.msg))
	if err != nil {
		return GlobalHyperparameters{}, err
	}
	return GlobalHyperparameters{
		PerLayerParameters: PerLayerParameters{
			WindowLeft:       int64(out.window_left),
			LogitsSoftCap:    float64(out.logits_soft_cap),
			HasLogitsSoftCap: out.has_logits_soft_cap != 0,
			SMScale:          float64(out.sm_scale),
			HasSinks:         out.has_sinks != 0,
		},
		HasSameWindowLefts: out.has_same_window_lefts != 0,
		HasSameAllParams:   out.has_same_all_params != 0,
	}, nil
}
