// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

func TestTranslateNames(t *testing.T) {
	n := &callNames{c: "cattn_x", goName: "X", renames: []string{
		"args->metadata", "md", "cu_num_tokens", "cuNumTokens",
		"args->dcp_rank", "args.Ranks", "args->dcp_rank", "args.Later"}}
	cases := []struct{ in, want string }{
		// The function, the default root and word by word conversion with initialisms.
		{"cattn_x: args->query_start_loc_cpu is NULL (got NULL, expected a DLTensor)",
			"cattn.X: args.QueryStartLocCPU is nil (got nil, expected a *Tensor)"},
		// A renamed root, and what follows it converted.
		{"cattn_x: args->metadata->seq_lens_cpu has the wrong size",
			"cattn.X: md.SeqLensCPU has the wrong size"},
		// A bare positional name; indices kept; a longer identifier is not the parameter.
		{"cattn_x: cu_num_tokens[3] decreases (got cu_num_tokens_2, expected x)",
			"cattn.X: cuNumTokens[3] decreases (got cu_num_tokens_2, expected x)"},
		// Of two renames of one path the later wins.
		{"cattn_x: args->dcp_rank is out of range (got 5, expected 0..1 or CATTN_DCP_ALL_RANKS (-1))",
			"cattn.X: args.Later is out of range (got 5, expected 0..1 or cattn.AllDCPRanks (-1))"},
		// Fields from goFieldNames, in the argument and elsewhere in the message.
		{"cattn_x: args->out->mlist exceeds args->pcp_world_size (got 3, expected args->q_head[0])",
			"cattn.X: args.Out.MList exceeds args.PCPWorldSize (got 3, expected args.QHead[0])"},
		// A path followed by other characters, or ending a sentence.
		{"cattn_x: args->q's rows exceed args->k_head.", "cattn.X: args.Q's rows exceed args.KHead."},
		// A field the table lacks keeps its C name under the Go root.
		{"cattn_x: args->no_such_field", "cattn.X: args.no_such_field"},
		// Any libcattn function leading the message is the Go entry point's (a one-call
		// helper makes several calls); prose and other roots are left alone.
		{"cattn_y: desc->products is 0 -> nothing (e.g. seq_lens' shape)",
			"cattn.X: desc->products is 0 -> nothing (e.g. seq_lens' shape)"},
		{"fn: args->q", "fn: args.Q"},
	}
	for _, c := range cases {
		wantEqual(t, c.in, n.translate(c.in), c.want)
	}
	var none *callNames
	wantEqual(t, "no names", none.translate("cattn_x: args->a"), "cattn_x: args->a")
}

// Errors from libcattn come back in Go terms, with the C text kept in CMessage.
func TestErrorsNameGoFields(t *testing.T) {
	_, err := MakeLocalAttentionVirtualBatches(8, 2,
		&CommonAttnMetadata{QueryStartLocCPU: Int64Tensor([]int64{0, 2})})
	e := wantError(t, err, StatusInvalidArgument)
	wantEqual(t, "Go message", e.Message,
		"cattn.MakeLocalAttentionVirtualBatches: metadata.SeqLensCPU is nil (got nil, expected a *Tensor)")
	wantEqual(t, "C message", e.CMessage, "cattn_make_local_attention_virtual_batches: "+
		"args->metadata->seq_lens_cpu is NULL (got NULL, expected a DLTensor)")

	err = GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: Int64Tensor([]int64{1}), DCPSize: 2,
		Ranks: DCPRank(5), Out: Int64Tensor([]int64{0})})
	wantError(t, err, StatusInvalidArgument, "cattn.GetDCPLocalSeqLens: args.Ranks is out of range (got 5,")
	err = GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: Int64Tensor([]int64{1}),
		InterleaveSize: -2, Out: Int64Tensor([]int64{0})})
	wantError(t, err, StatusInvalidArgument, "cattn.GetDCPLocalSeqLens: args.InterleaveSize ")

	err = FusedPCPQKVSelect(FusedPCPQKVSelectArgs{PCPWorldSize: -1})
	wantError(t, err, StatusInvalidArgument, "cattn.FusedPCPQKVSelect: args.")
	_, err = FusedPCPQKVSelectOf(PCPQKV[float32]{Q: make([]float32, 4), K: make([]float32, 4),
		V: make([]float32, 4), Heads: 1, QDim: 1, KDim: 1, VDim: 1}, []int32{0, 4}, -3, 0)
	e = wantError(t, err, StatusInvalidArgument)
	wantEqual(t, "Go message", e.Message, "cattn.FusedPCPQKVSelectOf: pcpWorldSize is out of range (got -3, expected >= 1)")
	wantEqual(t, "C message", e.CMessage, "cattn_fused_pcp_qkv_select_size: pcp_world_size is out of range (got -3, expected >= 1)")

	// Positional parameters by their Go names.
	_, err = GetPCPQueryRestoreIdxSize(Int64Tensor([]int64{0, 3}))
	wantError(t, err, StatusInvalidArgument, "cattn.GetPCPQueryRestoreIdxSize: cuNumTokens has")
	err = GetPCPQueryRestoreIdx(Int64Tensor([]int64{0, 2}), Int64Tensor(make([]int64, 1)), 0)
	wantError(t, err, StatusInsufficientSize, "cattn.GetPCPQueryRestoreIdx: restoreIdx ")
	_, err = SplitDecodesAndPrefills(SplitBatch{QueryStartLocCPU: Int64Tensor([]int64{0, 1}),
		NumReqs: 2}, SplitOptions{})
	wantError(t, err, StatusInvalidArgument, "cattn.SplitDecodesAndPrefills: b.QueryStartLocCPU ")

	// Checks made in Go use the same names.
	err = GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: Int64Tensor([]int64{1, 2}, 3),
		Out: Int64Tensor([]int64{0})})
	wantError(t, err, StatusInvalidArgument, "cattn.GetDCPLocalSeqLens: args.SeqLens does not fit its Go slice")
	plan := &LocalAttentionPlan{}
	_, _, err = plan.Shape()
	wantError(t, err, StatusInvalidArgument, "cattn.LocalAttentionPlan.Shape: plan is closed")
	_, err = (*Context)(nil).ResolvedKVCacheLayout()
	wantError(t, err, StatusInvalidArgument, "cattn.Context.ResolvedKVCacheLayout: ctx is nil")
	_, err = NewStepPlan(StepPlanDesc{Products: StepDCPLocalSeqLens, MaxNumReqs: 1,
		DCP: StepDCPParams{DCPSize: 2, Ranks: DCPRank(2)}})
	wantError(t, err, StatusInvalidArgument, "cattn.NewStepPlan: desc.DCP.Ranks ")
}

// goFieldNames pairs the C fields with the Go ones; the C fields no Go field matches by name
// are renamed per call (or are outputs Go returns otherwise).
func TestGoFieldNames(t *testing.T) {
	for c, g := range map[string]string{"pcp_world_size": "PCPWorldSize",
		"query_start_loc_cpu": "QueryStartLocCPU", "seq_lens": "SeqLens", "mlist": "MList",
		"num_actual_tokens": "NumActualTokens", "block_table_out": "BlockTableOut"} {
		if goFieldNames[c] != g {
			t.Errorf("%s: got %q, want %q", c, goFieldNames[c], g)
		}
	}
	t.Logf("%d C fields have no Go field of the same name (renamed per call, or outputs)", len(unmatchedCFields))
}
