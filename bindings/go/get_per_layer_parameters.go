// SPDX-License-Identifier: Apache-2.0

package cattn

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
