// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"math"
	"testing"
)

type perLayerCase struct {
	Name   string `json:"name"`
	Layers []struct {
		Window  *[2]int64 `json:"window"`
		SoftCap *jfloat   `json:"soft_cap"`
		Scale   jfloat    `json:"scale"`
		Sinks   bool      `json:"sinks"`
	} `json:"layers"`
	PerLayer []paramsJSON `json:"per_layer"`
	Global   struct {
		paramsJSON
		HasSameWindowLefts bool `json:"has_same_window_lefts"`
		HasSameAllParams   bool `json:"has_same_all_params"`
	} `json:"global"`
}

type paramsJSON struct {
	WindowLeft    int64   `json:"window_left"`
	LogitsSoftCap *jfloat `json:"logits_soft_cap"`
	SMScale       jfloat  `json:"sm_scale"`
	HasSinks      bool    `json:"has_sinks"`
}

func wantParams(t *testing.T, what string, got PerLayerParameters, want paramsJSON) {
	t.Helper()
	ok := got.WindowLeft == want.WindowLeft && got.HasSinks == want.HasSinks &&
		sameFloat(got.SMScale, float64(want.SMScale)) &&
		got.HasLogitsSoftCap == (want.LogitsSoftCap != nil)
	if want.LogitsSoftCap != nil {
		ok = ok && sameFloat(got.LogitsSoftCap, float64(*want.LogitsSoftCap))
	} else {
		ok = ok && got.LogitsSoftCap == 0
	}
	if !ok {
		t.Fatalf("%s: got %+v, want %+v", what, got, want)
	}
}

func TestGetPerLayerParametersVectors(t *testing.T) {
	cases := loadCases[perLayerCase](t, "get_per_layer_parameters")
	for _, c := range cases {
		layers := make([]AttentionLayer, len(c.Layers))
		for i, l := range c.Layers {
			layers[i] = AttentionLayer{Scale: float64(l.Scale), HasSinks: l.Sinks}
			if l.Window != nil {
				layers[i].HasSlidingWindow, layers[i].SlidingWindow = true, *l.Window
			}
			if l.SoftCap != nil {
				layers[i].HasLogitsSoftCap, layers[i].LogitsSoftCap = true, float64(*l.SoftCap)
			}
		}
		params, err := GetPerLayerParameters(layers)
		mustOK(t, err)
		wantEqual(t, c.Name+" count", len(params), len(c.PerLayer))
		for i := range params {
			wantParams(t, c.Name, params[i], c.PerLayer[i])
		}
		global, err := InferGlobalHyperparameters(params)
		mustOK(t, err)
		wantParams(t, c.Name+" global", global.PerLayerParameters, c.Global.paramsJSON)
		wantEqual(t, c.Name+" has_same_window_lefts", global.HasSameWindowLefts, c.Global.HasSameWindowLefts)
		wantEqual(t, c.Name+" has_same_all_params", global.HasSameAllParams, c.Global.HasSameAllParams)
	}
}

func TestGetPerLayerParametersEdges(t *testing.T) {
	params, err := GetPerLayerParameters(nil)
	mustOK(t, err)
	wantEqual(t, "no layers", len(params), 0)
	_, err = InferGlobalHyperparameters(nil)
	wantError(t, err, StatusInvalidArgument, "cattn_infer_global_hyperparameters", "num_layers")
	// NaN in a later layer clears has_same_all_params; the first layer always equals itself.
	nan := math.NaN()
	g, err := InferGlobalHyperparameters([]PerLayerParameters{{WindowLeft: -1, SMScale: nan}})
	mustOK(t, err)
	wantEqual(t, "one NaN layer", [2]bool{g.HasSameWindowLefts, g.HasSameAllParams}, [2]bool{true, true})
	g, err = InferGlobalHyperparameters([]PerLayerParameters{{SMScale: 1}, {SMScale: nan}})
	mustOK(t, err)
	wantEqual(t, "later NaN", [2]bool{g.HasSameWindowLefts, g.HasSameAllParams}, [2]bool{true, false})
}
