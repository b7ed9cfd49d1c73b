// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"strconv"
	"testing"
)

// unwritten marks the entries vLLM leaves unwritten in tests/vectors/step_inputs.json; the
// padding contract writes them (positions 0, slots -1).
const unwritten = -7777

func unwrittenAs(v []int64, value int64) []int64 {
	out := append([]int64(nil), v...)
	for i, x := range out {
		if x == unwritten {
			out[i] = value
		}
	}
	return out
}

type stepInputsGroup struct {
	BlockSize       int64     `json:"block_size"`
	KernelBlockSize int64     `json:"kernel_block_size"`
	SlotMode        int64     `json:"slot_mode"`
	Table           [][]int64 `json:"table"`
	NumBlocks       []int64   `json:"num_blocks"`
	GatherInit      [][]int64 `json:"gather_init"`
}

type stepInputsCase struct {
	Name               string            `json:"name"`
	B                  int64             `json:"B"`
	NumReqs            int64             `json:"num_reqs"`
	R                  int64             `json:"R"`
	TCap               int64             `json:"T_cap"`
	MRV2Wraps          bool              `json:"mrv2_wraps"`
	NumScheduledTokens []int64           `json:"num_scheduled_tokens"`
	IdxMapping         []int64           `json:"idx_mapping"`
	NumComputedTokens  []int64           `json:"num_computed_tokens"`
	NumDraftTokens     []int64           `json:"num_draft_tokens"`
	DCP                map[string]int64  `json:"dcp"`
	Groups             []stepInputsGroup `json:"groups"`
	LastSampledTokens  []int64           `json:"last_sampled_tokens"`
	PrefillLen         []int64           `json:"prefill_len"`
	DraftTokens        [][]int64         `json:"draft_tokens"`
	InputIDsInit       []int64           `json:"input_ids_init"`
	Expected           struct {
		QueryStartLoc         []int64     `json:"query_start_loc"`
		SeqLens               []int64     `json:"seq_lens"`
		Positions             []int64     `json:"positions"`
		BlockTables           [][][]int64 `json:"block_tables"`
		SlotMappingsMRV2      [][]int64   `json:"slot_mappings_mrv2"`
		SlotMappingsMRV2Int64 [][]int64   `json:"slot_mappings_mrv2_int64"`
		SlotMappingsV1        [][]int64   `json:"slot_mappings_v1"`
		CuNumLogits           []int64     `json:"cu_num_logits"`
		LogitsIndices         []int64     `json:"logits_indices"`
		InputIDs              []int64     `json:"input_ids"`
		ExpandedIdxMapping    []int64     `json:"expanded_idx_mapping"`
		ExpandedLocalPos      []int64     `json:"expanded_local_pos"`
	} `json:"expected"`
}

// runStepInputsCase runs one case through the five calls with index dtype dt (positions and
// slots int64), as tests/support/step_inputs_case.h does in C.
func runStepInputsCase(t *testing.T, c *stepInputsCase, dt DType) {
	t.Helper()
	what := c.Name + " " + dtypeName(dt)
	e := &c.Expected
	sched, idx := ibufOf(dt, c.NumScheduledTokens, 1, 0), ibufOf(dt, c.IdxMapping, 1, 0)
	nct, live := ibufOf(dt, c.NumComputedTokens, 1, 0), ibufOf(dt, []int64{c.NumReqs}, 1, 0)
	qsl, seq := newIBuf(dt, []int64{c.B + 1}, 1, 0), newIBuf(dt, []int64{c.B}, 1, 0)
	pos := newIBuf(Int64, []int64{c.TCap}, 1, 0)
	if err := PreparePosSeqLens(PreparePosSeqLensArgs{NumScheduledTokens: sched.t,
		IdxMapping: idx.t, NumComputedTokens: nct.t, NumReqs: live.t, QueryStartLoc: qsl.t,
		SeqLens: seq.t, Positions: pos.t}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	wantEqual(t, what+" query_start_loc", qsl.values(), e.QueryStartLoc)
	wantEqual(t, what+" seq_lens", seq.values(), unwrittenAs(e.SeqLens, 0))
	wantEqual(t, what+" positions", pos.values(), unwrittenAs(e.Positions, 0))

	check := StepBatchCheckArgs{QueryStartLoc: qsl.t, NumReqs: live.t, SeqLens: seq.t}
	for g, grp := range c.Groups {
		gname := what + " group " + strconv.Itoa(g)
		table := ibuf2D(dt, grp.Table, 1)
		gathered := ibuf2D(dt, grp.GatherInit, 1)
		if err := GatherBlockTables(GatherBlockTablesArgs{IdxMapping: idx.t, NumReqs: live.t,
			BlockTable: table.t, NumBlocks: ibufOf(dt, grp.NumBlocks, 1, 0).t,
			Out: gathered.t}); err != nil {
			t.Fatalf("%s: %v", gname, err)
		}
		wantEqual(t, gname+" block table", gathered.values(), flatten(e.BlockTables[g]))
		check.BlockTables = append(check.BlockTables, gathered.t)
		check.SlotMappings = append(check.SlotMappings, nil)
		if SlotMode(grp.SlotMode) != SlotModeTokenToKVSlot {
			continue
		}
		batchTable := ibuf2D(dt, e.BlockTables[g], 1)
		for _, contract := range []SlotMappingContract{SlotMappingMRV2, SlotMappingV1} {
			v1 := contract == SlotMappingV1
			slots := newIBuf(Int64, []int64{c.TCap}, 1, 0)
			for i := range slots.i64 {
				slots.i64[i] = unwritten
			}
			args := ComputeSlotMappingsArgs{SlotMappingParams: SlotMappingParams{
				Contract: contract, BlockSize: grp.BlockSize, KernelBlockSize: grp.KernelBlockSize,
				DCPSize: c.DCP["size"], DCPRank: c.DCP["rank"], InterleaveSize: c.DCP["interleave"]},
				QueryStartLoc: qsl.t, NumReqs: live.t, Positions: pos.t, IdxMapping: idx.t,
				BlockTable: table.t, SlotMapping: slots.t}
			want := e.SlotMappingsMRV2[g]
			if v1 {
				args.IdxMapping, args.BlockTable = nil, batchTable.t
				want = e.SlotMappingsV1[g]
			} else if c.MRV2Wraps && g < len(e.SlotMappingsMRV2Int64) && e.SlotMappingsMRV2Int64[g] != nil {
				want = e.SlotMappingsMRV2Int64[g]
			}
			if err := ComputeSlotMappings(args); err != nil {
				t.Fatalf("%s contract %d: %v", gname, contract, err)
			}
			wantEqual(t, gname+" slots, contract "+strconv.Itoa(int(contract)), slots.values(),
				unwrittenAs(want, -1))
			if !v1 {
				check.SlotMappings[g] = slots.t
			}
		}
	}

	logitCap := int64(len(e.LogitsIndices)) + 3
	li, cu := newIBuf(Int64, []int64{logitCap}, 1, 0), newIBuf(dt, []int64{c.B + 1}, 1, 0)
	ei, ep := newIBuf(dt, []int64{logitCap}, 1, 0), newIBuf(dt, []int64{logitCap}, 1, 0)
	ids := ibufOf(dt, c.InputIDsInit, 1, 0)
	if err := CombineSampledAndDraftTokens(CombineSampledAndDraftTokensArgs{
		QueryStartLoc: qsl.t, NumReqs: live.t, NumDraftTokens: ibufOf(dt, c.NumDraftTokens, 1, 0).t,
		IdxMapping: idx.t, SeqLens: seq.t, PrefillLen: ibufOf(dt, c.PrefillLen, 1, 0).t,
		LastSampledTokens: ibufOf(dt, c.LastSampledTokens, 1, 0).t,
		DraftTokens:       ibuf2D(dt, c.DraftTokens, 1).t, LogitsIndices: li.t, CuNumLogits: cu.t,
		ExpandedIdxMapping: ei.t, ExpandedLocalPos: ep.t, InputIDs: ids.t}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	padded := func(v []int64) []int64 {
		return append(append([]int64{}, v...), make([]int64, logitCap-int64(len(v)))...)
	}
	wantEqual(t, what+" logits_indices", li.values(), padded(e.LogitsIndices))
	wantEqual(t, what+" expanded_idx_mapping", ei.values(), padded(e.ExpandedIdxMapping))
	wantEqual(t, what+" expanded_local_pos", ep.values(), padded(e.ExpandedLocalPos))
	cuWant := append([]int64(nil), e.CuNumLogits...)
	for int64(len(cuWant)) < c.B+1 {
		cuWant = append(cuWant, cuWant[len(cuWant)-1])
	}
	wantEqual(t, what+" cu_num_logits", cu.values(), cuWant)
	wantEqual(t, what+" input_ids", ids.values(), e.InputIDs)

	// The outputs keep the padding contract, every group's table and slots included.
	report, err := StepBatchCheckHost(check)
	mustOK(t, err)
	wantEqual(t, what+" batch check", report, StepCheckReport{})
}

// Every case of vLLM's MRV2 and v1 vectors, int64 and (where the values fit) int32.
func TestStepInputsVectors(t *testing.T) {
	cases := loadCases[stepInputsCase](t, "step_inputs")
	if len(cases) < 50 {
		t.Fatalf("%d cases", len(cases))
	}
	for i := range cases {
		runStepInputsCase(t, &cases[i], Int64)
		if !cases[i].MRV2Wraps {
			runStepInputsCase(t, &cases[i], Int32)
		}
	}
}
