// SPDX-License-Identifier: Apache-2.0

// Command step_inputs prints what examples/step_inputs.c prints (6 requests, two KV-cache
// groups) through the one-call host helpers. Run it with `go run ./example/step_inputs` from
// bindings/go (see README.md for the library).
package main

import (
	"fmt"
	"log"
	"strings"

	cattn "github.com/libcattn/cattn-go"
)

// show prints label, then the rows' values in order, separated by single spaces.
func show(label string, rows ...[]int64) {
	fmt.Println(label + strings.NewReplacer("[", "", "]", "").Replace(fmt.Sprint(rows)))
}

func main() {
	sched, drafts := []int64{3, 1, 4, 2, 20, 12}, []int64{2, 0, 3, 1, 0, 0}
	idx, computed := []int64{5, 0, 7, 2, 1, 4}, []int64{40, 9, 17, 0, 0, 33, 0, 30}
	size := must(cattn.StepInputsSize(cattn.StepInputsSizeArgs{ // the outputs' sizes
		NumScheduledTokens: cattn.IndexTensor(sched), NumDraftTokens: cattn.IndexTensor(drafts)}))
	step := must(cattn.PreparePosSeqLensHost(sched, idx, computed, nil))
	qsl, pos := step.QueryStartLoc, step.Positions
	gathered, slots := [2][][]int64{}, [2][]int64{}
	for g, bs := range []int64{16, 32} { // each group's persistent table: [8 rows, 4 blocks]
		table := make([][]int64, 8)
		for r := range table {
			b := int64(100 + 400*g + 4*r) // numbered from 100 (group 0) and from 500 (group 1)
			table[r] = []int64{b, b + 1, b + 2, b + 3}
		}
		gathered[g] = must(cattn.GatherBlockTablesHost(idx, nil, table, nil))
		p := cattn.SlotMappingParams{BlockSize: bs, KernelBlockSize: bs}
		slots[g] = must(cattn.ComputeSlotMappingsHost(p, qsl, nil, pos, idx, table))
	}
	logits := must(cattn.CombineSampledAndDraftTokensHost(nil, qsl, nil, drafts, nil))
	fmt.Println("libcattn", cattn.VersionString())
	fmt.Printf("tokens %d, logits %d\n", size.NumTokens, size.NumLogits)
	show("query_start_loc ", qsl)
	show("seq_lens        ", step.SeqLens)
	show("positions       ", pos)
	show("block table 0   ", gathered[0]...)
	show("slots 0         ", slots[0])
	show("slots 1         ", slots[1])
	show("logits_indices  ", logits.LogitsIndices)
}

// must returns v, or ends the program with err's message (the C call and its detail).
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
