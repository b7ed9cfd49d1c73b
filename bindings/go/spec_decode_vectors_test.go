// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"testing"
)

// tests/vectors/spec_decode.json: vLLM's speculative-decoding helpers (vllm/v1/spec_decode/
// utils.py), one case per call, grouped by "function" (format: tests/gen/gen_spec_decode.py).
// Output buffers start as the case's "<name>_init" and are compared whole with "expected";
// unwritten marks what vLLM leaves alone. Flag outputs cannot hold it: they start at
// flagUnwritten, which the expected unwritten entries become.

const flagUnwritten = 2

type specDecodeCase struct {
	Function  string                     `json:"function"`
	Name      string                     `json:"name"`
	Inputs    map[string]json.RawMessage `json:"inputs"`
	Expected  map[string]json.RawMessage `json:"expected"`
	DTypes    map[string]string          `json:"dtypes"`
	Int32Wrap bool                       `json:"int32_wrap"`
	Truncated bool                       `json:"truncated"`
}

// specRun is one case run with its views `step` elements apart after `step - 1` elements, and
// its flag tensors of dtype flag.
type specRun struct {
	t    *testing.T
	c    *specDecodeCase
	what string
	step int64
	flag DType
}

func (r *specRun) decode(m map[string]json.RawMessage, key string, v any) {
	r.t.Helper()
	raw, ok := m[key]
	if !ok {
		r.t.Fatalf("%s: no %q", r.what, key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		r.t.Fatalf("%s: %q: %v", r.what, key, err)
	}
}

func (r *specRun) scalar(key string) int64 {
	r.t.Helper()
	var v int64
	r.decode(r.c.Inputs, key, &v)
	return v
}

func (r *specRun) ints(key string) []int64 {
	r.t.Helper()
	var v []int64
	r.decode(r.c.Inputs, key, &v)
	return v
}

func (r *specRun) rows(key string) [][]int64 {
	r.t.Helper()
	var v [][]int64
	r.decode(r.c.Inputs, key, &v)
	return v
}

func (r *specRun) expected(key string) []int64 {
	r.t.Helper()
	var v []int64
	r.decode(r.c.Expected, key, &v)
	return v
}

// dtype is the index dtype of tensor `name` in the case.
func (r *specRun) dtype(name string) DType {
	r.t.Helper()
	switch r.c.DTypes[name] {
	case "int32":
		return Int32
	case "int64":
		return Int64
	}
	r.t.Fatalf("%s: %s has dtype %q, expected int32 or int64", r.what, name, r.c.DTypes[name])
	return DType{}
}

// index is tensor `name` of the case's index dtype holding values.
func (r *specRun) index(name string, values []int64) *ibuf {
	return ibufOf(r.dtype(name), values, r.step, r.step-1)
}

// cols is the [rows, n] view of the first n columns of ibuf2D's table.
func (r *specRun) cols(name string, table [][]int64, n int64) *Tensor {
	r.t.Helper()
	b := ibuf2D(r.dtype(name), table, r.step)
	if int64(len(table)) > 0 && n > b.shape[1] {
		r.t.Fatalf("%s: %s: %d columns of %d", r.what, name, n, b.shape[1])
	}
	v := *b.t
	v.Shape = []int64{b.shape[0], n}
	v.Strides = append([]int64(nil), b.strides...)
	return &v
}

// fbuf is a flag tensor of one byte per entry over poisoned storage, r.step apart.
type fbuf struct {
	t      *Tensor
	b      []byte
	n, off int64
	step   int64
}

func (r *specRun) flags(values []int64, fill byte) *fbuf {
	f := &fbuf{n: int64(len(values)), off: r.step - 1, step: r.step}
	f.b = make([]byte, f.off+f.n*f.step+1)
	for i := range f.b {
		f.b[i] = 0xA5
	}
	for i, v := range values {
		if v == unwritten {
			f.b[f.pos(int64(i))] = fill
		} else {
			f.b[f.pos(int64(i))] = byte(v)
		}
	}
	f.t = BytesTensor(f.b, r.flag, f.n).WithStrides(f.step).WithByteOffset(uint64(f.off))
	return f
}

func (f *fbuf) pos(i int64) int64 { return f.off + i*f.step }

func (f *fbuf) values() []int64 {
	out := make([]int64, f.n)
	for i := range out {
		out[i] = int64(f.b[f.pos(int64(i))])
	}
	return out
}

// wrap32 is vLLM's int32 arithmetic: v modulo 2^32, as a signed 32-bit value.
func wrap32(v []int64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(int32(uint32(x)))
	}
	return out
}

// wantSlots compares slots libcattn computed exactly with vLLM's, which wrap in the cases
// flagged int32_wrap: there libcattn's must wrap to vLLM's, and differ somewhere.
func (r *specRun) wantSlots(what string, got, want []int64) {
	r.t.Helper()
	if !r.c.Int32Wrap {
		wantEqual(r.t, r.what+" "+what, got, want)
		return
	}
	wantEqual(r.t, r.what+" "+what+" (wrapped to int32)", wrap32(got), want)
	for i := range got {
		if got[i] != want[i] {
			return
		}
	}
	r.t.Fatalf("%s %s: flagged int32_wrap, but no slot differs from vLLM's wrapped %v", r.what,
		what, want)
}

func (r *specRun) eagleStep() {
	positions, table := r.ints("positions"), r.rows("block_table")
	seq := r.index("seq_lens", r.ints("seq_lens"))
	clamped := r.index("out_clamped_positions", r.ints("out_clamped_positions_init"))
	slots := r.index("out_slot_mapping", r.ints("out_slot_mapping_init"))
	mustOK(r.t, EagleStepUpdateSlotMappingAndMetadata(EagleStepUpdateSlotMappingAndMetadataArgs{
		EagleStepParams: EagleStepParams{BlockSize: r.scalar("block_size"),
			MaxModelLen: r.scalar("max_model_len"), InputBatchSize: r.scalar("input_batch_size")},
		Positions:  r.index("positions", positions).t,
		BlockTable: r.cols("block_table", table, r.scalar("n_blocks_per_req")),
		SeqLens:    seq.t, OutClampedPositions: clamped.t, OutSlotMapping: slots.t}))
	wantEqual(r.t, r.what+" out_clamped_positions", clamped.values(),
		r.expected("out_clamped_positions"))
	r.wantSlots("out_slot_mapping", slots.values(), r.expected("out_slot_mapping"))
	wantEqual(r.t, r.what+" seq_lens", seq.values(), r.expected("seq_lens"))
}

func (r *specRun) prepareInputsPadded() {
	cu := r.ints("cu_num_draft_tokens")
	if r.scalar("num_reqs") != int64(len(cu)) {
		r.t.Fatalf("%s: num_reqs %d, expected B = %d", r.what, r.scalar("num_reqs"), len(cu))
	}
	sample := r.index("token_indices_to_sample", r.ints("token_indices_to_sample_init"))
	rejected := r.index("num_rejected_tokens", r.ints("num_rejected_tokens_init"))
	mustOK(r.t, EaglePrepareInputsPadded(EaglePrepareInputsPaddedArgs{
		CuNumDraftTokens:        r.index("cu_num_draft_tokens", cu).t,
		ValidSampledTokensCount: r.index("valid_sampled_tokens_count", r.ints("valid_sampled_tokens_count")).t,
		QueryStartLoc:           r.index("query_start_loc", r.ints("query_start_loc")).t,
		TokenIndicesToSample:    sample.t, NumRejectedTokens: rejected.t}))
	wantEqual(r.t, r.what+" token_indices_to_sample", sample.values(),
		r.expected("token_indices_to_sample"))
	wantEqual(r.t, r.what+" num_rejected_tokens", rejected.values(),
		r.expected("num_rejected_tokens"))
}

func (r *specRun) prepareNextTokenPadded() {
	sampled := r.rows("sampled_token_ids")
	if r.scalar("num_reqs") != int64(len(sampled)) {
		r.t.Fatalf("%s: num_reqs %d, expected B = %d", r.what, r.scalar("num_reqs"), len(sampled))
	}
	next := r.index("next_token_ids", r.ints("next_token_ids_init"))
	valid := r.index("valid_sampled_tokens_count", r.ints("valid_sampled_tokens_count_init"))
	mustOK(r.t, EaglePrepareNextTokenPadded(EaglePrepareNextTokenPaddedArgs{
		VocabSize: r.scalar("vocab_size"),
		SampledTokenIDs: r.cols("sampled_token_ids", sampled,
			r.scalar("num_sampled_tokens_per_req")),
		DiscardRequestMask: r.flags(r.ints("discard_request_mask"), 0).t,
		BackupNextTokenIDs: r.index("backup_next_token_ids", r.ints("backup_next_token_ids")).t,
		NextTokenIDs:       next.t, ValidSampledTokensCount: valid.t}))
	wantEqual(r.t, r.what+" next_token_ids", next.values(), r.expected("next_token_ids"))
	wantEqual(r.t, r.what+" valid_sampled_tokens_count", valid.values(),
		r.expected("valid_sampled_tokens_count"))
}

func (r *specRun) computeNewSlotMapping() {
	positions := r.ints("new_positions")
	// Two entries past n show that only [0, n) is written.
	init := make([]int64, len(positions)+2)
	for i := range init {
		init[i] = unwritten
	}
	slots := r.index("new_slot_mapping", init)
	mustOK(r.t, ComputeNewSlotMapping(ComputeNewSlotMappingArgs{
		NewSlotMappingParams: NewSlotMappingParams{BlockSize: r.scalar("block_size"),
			NumNewTokens: r.scalar("num_new_tokens"), MaxModelLen: r.scalar("max_model_len")},
		QueryStartLoc:       r.index("query_start_loc", r.ints("query_start_loc")).t,
		BlockTable:          ibuf2D(r.dtype("block_table"), r.rows("block_table"), r.step).t,
		NewPositions:        r.index("new_positions", positions).t,
		IsRejectedTokenMask: r.flags(r.ints("is_rejected_token_mask"), 0).t,
		NewSlotMapping:      slots.t}))
	r.wantSlots("new_slot_mapping", slots.values(),
		append(r.expected("new_slot_mapping"), unwritten, unwritten))
}

func (r *specRun) copyAndExpandEagleInputs() {
	qsl, tokens := r.ints("query_start_loc"), r.ints("target_token_ids")
	if b := int64(len(qsl) - 1); r.scalar("batch_size") != b ||
		r.scalar("total_input_tokens") != int64(len(tokens)) {
		r.t.Fatalf("%s: batch_size %d and total_input_tokens %d, expected %d and %d", r.what,
			r.scalar("batch_size"), r.scalar("total_input_tokens"), b, len(tokens))
	}
	maskInit := make([]int64, r.scalar("out_mask_len"))
	for i := range maskInit {
		maskInit[i] = unwritten
	}
	ids := r.index("out_input_ids", r.ints("out_input_ids_init"))
	pos := r.index("out_positions", r.ints("out_positions_init"))
	rejected, masked := r.flags(maskInit, flagUnwritten), r.flags(maskInit, flagUnwritten)
	newIdx := r.index("out_new_token_indices", r.ints("out_new_token_indices_init"))
	hidden := r.index("out_hidden_state_mapping", r.ints("out_hidden_state_mapping_init"))
	mustOK(r.t, CopyAndExpandEagleInputs(CopyAndExpandEagleInputsArgs{
		EagleExpandParams: EagleExpandParams{PaddingTokenID: r.scalar("padding_token_id"),
			ParallelDraftingTokenID:   r.scalar("parallel_drafting_token_id"),
			NumPaddingSlotsPerRequest: r.scalar("num_padding_slots_per_request"),
			MaxTokensPerRequest:       r.scalar("num_blocks") * r.scalar("BLOCK_SIZE_TOKENS"),
			ShiftInputIDs:             r.scalar("shift_input_ids") != 0},
		TargetTokenIDs:  r.index("target_token_ids", tokens).t,
		TargetPositions: r.index("target_positions", r.ints("target_positions")).t,
		NextTokenIDs:    r.index("next_token_ids", r.ints("next_token_ids")).t,
		QueryStartLoc:   r.index("query_start_loc", qsl).t,
		QueryEndLoc:     r.index("query_end_loc", r.ints("query_end_loc")).t,
		OutInputIDs:     ids.t, OutPositions: pos.t,
		OutIsRejectedTokenMask: rejected.t, OutIsMaskedTokenMask: masked.t,
		OutNewTokenIndices: newIdx.t, OutHiddenStateMapping: hidden.t}))
	wantEqual(r.t, r.what+" out_input_ids", ids.values(), r.expected("out_input_ids"))
	wantEqual(r.t, r.what+" out_positions", pos.values(), r.expected("out_positions"))
	wantEqual(r.t, r.what+" out_is_rejected_token_mask", rejected.values(),
		unwrittenAs(r.expected("out_is_rejected_token_mask"), flagUnwritten))
	wantEqual(r.t, r.what+" out_is_masked_token_mask", masked.values(),
		unwrittenAs(r.expected("out_is_masked_token_mask"), flagUnwritten))
	wantEqual(r.t, r.what+" out_new_token_indices", newIdx.values(),
		r.expected("out_new_token_indices"))
	wantEqual(r.t, r.what+" out_hidden_state_mapping", hidden.values(),
		r.expected("out_hidden_state_mapping"))
}

func (r *specRun) updateNumComputedTokens() {
	computed := r.index("num_computed_tokens", r.ints("num_computed_tokens"))
	accepted := r.index("num_accepted_tokens", r.ints("num_accepted_tokens"))
	mustOK(r.t, UpdateNumComputedTokensForBatchChange(UpdateNumComputedTokensForBatchChangeArgs{
		NumComputedTokens:      computed.t,
		NumAcceptedTokens:      accepted.t,
		PrevPositions:          r.index("prev_positions", r.ints("prev_positions")).t,
		ValidSampledTokenCount: r.index("valid_sampled_token_count", r.ints("valid_sampled_token_count")).t,
		PrevNumDraftTokens:     r.index("prev_num_draft_tokens", r.ints("prev_num_draft_tokens")).t,
		CPUNumComputedTokens:   r.index("cpu_num_computed_tokens", r.ints("cpu_num_computed_tokens")).t}))
	wantEqual(r.t, r.what+" num_computed_tokens", computed.values(),
		r.expected("num_computed_tokens"))
	wantEqual(r.t, r.what+" num_accepted_tokens", accepted.values(),
		r.expected("num_accepted_tokens"))
}

// The calls by the vector file's function names.
var specDecodeRuns = map[string]func(*specRun){
	"eagle_step_update_slot_mapping_and_metadata": (*specRun).eagleStep,
	"eagle_prepare_inputs_padded":                 (*specRun).prepareInputsPadded,
	"eagle_prepare_next_token_padded":             (*specRun).prepareNextTokenPadded,
	"compute_new_slot_mapping":                    (*specRun).computeNewSlotMapping,
	"copy_and_expand_eagle_inputs":                (*specRun).copyAndExpandEagleInputs,
	"update_num_computed_tokens_for_batch_change": (*specRun).updateNumComputedTokens,
}

// Every case of the file through the tensor calls, compact and with every view strided and
// offset (index tensors of the case's dtypes; flag tensors Bool, UInt8 and Int8 in turn).
func TestSpecDecodeVectors(t *testing.T) {
	cases := loadCases[specDecodeCase](t, "spec_decode")
	ran := map[string]int{}
	flagTypes := []DType{Bool, UInt8, Int8}
	for i := range cases {
		c := &cases[i]
		run, ok := specDecodeRuns[c.Function]
		if !ok {
			t.Fatalf("case %s: function %q has no Go test", c.Name, c.Function)
		}
		for _, step := range []int64{1, 2} {
			run(&specRun{t: t, c: c, what: c.Function + " " + c.Name + " step " +
				strconv.FormatInt(step, 10), step: step, flag: flagTypes[i%len(flagTypes)]})
		}
		ran[c.Function]++
	}
	var names []string
	for name := range specDecodeRuns {
		names = append(names, name)
		if ran[name] == 0 {
			t.Errorf("no case of %s", name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t.Logf("%s: %d cases", name, ran[name])
	}
	if len(cases) < 142 {
		t.Fatalf("%d cases, expected the file's 142 or more", len(cases))
	}
}

// The one-call helpers on the same cases, with []int64 and, where every value fits, []int32:
// their results are the vectors' written entries (vLLM's unwritten ones are 0 or false there).
func TestSpecDecodeVectorsHost(t *testing.T) {
	cases := loadCases[specDecodeCase](t, "spec_decode")
	for i := range cases {
		c := &cases[i]
		r := &specRun{t: t, c: c, what: c.Function + " " + c.Name + " host"}
		runSpecDecodeHost[int64](r)
		if specDecodeFitsInt32(r) {
			r.what = c.Function + " " + c.Name + " host int32"
			runSpecDecodeHost[int32](r)
		}
	}
}

// specDecodeFitsInt32 reports whether every integer of the case's inputs and expected values
// but the slots fits int32.
func specDecodeFitsInt32(r *specRun) bool {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case float64:
			return x >= math.MinInt32 && x <= math.MaxInt32
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	for _, m := range []map[string]json.RawMessage{r.c.Inputs, r.c.Expected} {
		for k, raw := range m {
			if k == "out_slot_mapping" || k == "new_slot_mapping" {
				continue
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil || !walk(v) {
				return false
			}
		}
	}
	return true
}

func bools(v []int64) []bool {
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = x != 0 && x != unwritten
	}
	return out
}

func firstCols(rows [][]int64, n int64) [][]int64 {
	out := make([][]int64, len(rows))
	for i, row := range rows {
		out[i] = row[:n]
	}
	return out
}

func runSpecDecodeHost[T Index](r *specRun) {
	t := r.t
	t.Helper()
	switch r.c.Function {
	case "eagle_step_update_slot_mapping_and_metadata":
		seq := asIndex[T](r.ints("seq_lens"))
		got, err := EagleStepUpdateSlotMappingAndMetadataHost(EagleStepParams{
			BlockSize: r.scalar("block_size"), MaxModelLen: r.scalar("max_model_len"),
			InputBatchSize: r.scalar("input_batch_size")}, asIndex[T](r.ints("positions")),
			asRows[T](firstCols(r.rows("block_table"), r.scalar("n_blocks_per_req"))), seq)
		mustOK(t, err)
		b := len(seq)
		wantEqual(t, r.what+" clamped positions", asInt64(got.ClampedPositions),
			r.expected("out_clamped_positions")[:b])
		r.wantSlots("slot mapping", got.SlotMapping,
			r.expected("out_slot_mapping")[:r.scalar("input_batch_size")])
		wantEqual(t, r.what+" seq_lens", asInt64(seq), r.expected("seq_lens"))
	case "eagle_prepare_inputs_padded":
		b := len(r.ints("cu_num_draft_tokens"))
		got, err := EaglePrepareInputsPaddedHost(asIndex[T](r.ints("cu_num_draft_tokens")),
			asIndex[T](r.ints("valid_sampled_tokens_count")), asIndex[T](r.ints("query_start_loc")))
		mustOK(t, err)
		wantEqual(t, r.what+" token_indices_to_sample", asInt64(got.TokenIndicesToSample),
			r.expected("token_indices_to_sample")[:b])
		wantEqual(t, r.what+" num_rejected_tokens", asInt64(got.NumRejectedTokens),
			r.expected("num_rejected_tokens")[:b])
	case "eagle_prepare_next_token_padded":
		sampled := firstCols(r.rows("sampled_token_ids"), r.scalar("num_sampled_tokens_per_req"))
		got, err := EaglePrepareNextTokenPaddedHost(r.scalar("vocab_size"), asRows[T](sampled),
			bools(r.ints("discard_request_mask")), asIndex[T](r.ints("backup_next_token_ids")))
		mustOK(t, err)
		b := len(sampled)
		wantEqual(t, r.what+" next_token_ids", asInt64(got.NextTokenIDs),
			r.expected("next_token_ids")[:b])
		wantEqual(t, r.what+" valid_sampled_tokens_count", asInt64(got.ValidSampledTokensCount),
			r.expected("valid_sampled_tokens_count")[:b])
	case "compute_new_slot_mapping":
		got, err := ComputeNewSlotMappingHost(NewSlotMappingParams{
			BlockSize: r.scalar("block_size"), NumNewTokens: r.scalar("num_new_tokens"),
			MaxModelLen: r.scalar("max_model_len")}, asIndex[T](r.ints("query_start_loc")),
			asRows[T](r.rows("block_table")), asIndex[T](r.ints("new_positions")),
			bools(r.ints("is_rejected_token_mask")))
		mustOK(t, err)
		r.wantSlots("new_slot_mapping", got, r.expected("new_slot_mapping"))
	case "copy_and_expand_eagle_inputs":
		params := EagleExpandParams{PaddingTokenID: r.scalar("padding_token_id"),
			ParallelDraftingTokenID:   r.scalar("parallel_drafting_token_id"),
			NumPaddingSlotsPerRequest: r.scalar("num_padding_slots_per_request"),
			MaxTokensPerRequest:       r.scalar("num_blocks") * r.scalar("BLOCK_SIZE_TOKENS"),
			ShiftInputIDs:             r.scalar("shift_input_ids") != 0}
		qsl := r.ints("query_start_loc")
		got, err := CopyAndExpandEagleInputsHost(params, asIndex[T](r.ints("target_token_ids")),
			asIndex[T](r.ints("target_positions")), asIndex[T](r.ints("next_token_ids")),
			asIndex[T](qsl), asIndex[T](r.ints("query_end_loc")))
		mustOK(t, err)
		b, p, s := int64(len(qsl)-1), params.NumPaddingSlotsPerRequest, int64(0)
		if params.ShiftInputIDs {
			s = 1
		}
		nOut, total := qsl[b]+b*(p-s), qsl[b]
		want := func(key string, n int64) []int64 { return unwrittenAs(r.expected(key)[:n], 0) }
		wantEqual(t, r.what+" input ids", asInt64(got.InputIDs), want("out_input_ids", nOut))
		wantEqual(t, r.what+" positions", asInt64(got.Positions), want("out_positions", nOut))
		wantEqual(t, r.what+" rejected", got.IsRejectedTokenMask,
			bools(r.expected("out_is_rejected_token_mask")[:nOut]))
		wantEqual(t, r.what+" masked", got.IsMaskedTokenMask,
			bools(r.expected("out_is_masked_token_mask")[:nOut]))
		wantEqual(t, r.what+" new token indices", asInt64(got.NewTokenIndices),
			want("out_new_token_indices", b*p))
		if params.ShiftInputIDs {
			wantEqual(t, r.what+" hidden state mapping", asInt64(got.HiddenStateMapping),
				want("out_hidden_state_mapping", total))
		} else if got.HiddenStateMapping != nil {
			t.Fatalf("%s: a hidden state mapping without shift", r.what)
		}
	case "update_num_computed_tokens_for_batch_change":
		computed := asIndex[T](r.ints("num_computed_tokens"))
		accepted := asIndex[T](r.ints("num_accepted_tokens"))
		mustOK(t, UpdateNumComputedTokensForBatchChangeHost(computed, accepted,
			asIndex[T](r.ints("prev_positions")), asIndex[T](r.ints("valid_sampled_token_count")),
			asIndex[T](r.ints("prev_num_draft_tokens")), asIndex[T](r.ints("cpu_num_computed_tokens"))))
		wantEqual(t, r.what+" num_computed_tokens", asInt64(computed),
			r.expected("num_computed_tokens"))
		wantEqual(t, r.what+" num_accepted_tokens", asInt64(accepted),
			r.expected("num_accepted_tokens"))
	default:
		t.Fatalf("case %s: function %q has no Go test", r.c.Name, r.c.Function)
	}
}
