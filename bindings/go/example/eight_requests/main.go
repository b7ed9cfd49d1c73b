// SPDX-License-Identifier: Apache-2.0

// Command eight_requests runs one batch of 8 requests through four one-call helpers (host
// slices in, new slices out): the PCP restore index, every DCP rank's lengths, the
// causal-conv1d metadata and the local-attention virtual batches, printed as
// examples/eight_requests.cpp prints them. Run it with `go run ./example/eight_requests` from
// bindings/go (see README.md for the library).
package main

import (
	"fmt"
	"log"
	"strings"

	cattn "github.com/libcattn/cattn-go"
)

// show prints a slice (or slice of slices) as "[1, 2]" and "[[1, 2], [3, 4]]".
func show(label string, v any, rest ...any) {
	fmt.Println(append([]any{label, strings.ReplaceAll(fmt.Sprint(v), " ", ", ")}, rest...)...)
}

func main() {
	// Query lengths 1 1 4 6 2 8 1 10: three decodes, the rest prefill chunks of their sequences.
	queryStartLoc := []int32{0, 1, 2, 6, 12, 14, 22, 23, 33}
	seqLens := []int32{9, 17, 4, 10, 34, 8, 5, 12}
	blockTable := make([][]int32, 8) // [8 requests, 9 blocks of 4 tokens], numbered row by row
	for r := range blockTable {
		for c := 0; c < 9; c++ {
			blockTable[r] = append(blockTable[r], int32(9*r+c))
		}
	}

	restore := must(cattn.PCPQueryRestoreIdx(queryStartLoc))
	dcp := must(cattn.DCPLocalSeqLensAllRanks(seqLens, 2, 1))
	conv := must(cattn.CausalConv1dMetadata(queryStartLoc, 8))
	local := must(cattn.LocalAttentionVirtualBatches(8, 4, queryStartLoc, seqLens, blockTable))

	fmt.Println("libcattn", cattn.VersionString())
	show("pcp restore_idx ", restore)
	show("dcp lens [B, 2] ", dcp)
	show("conv1d nums     ", conv.Nums, fmt.Sprintf("(tot %d)", conv.Tot))
	show("conv1d mlist    ", conv.MList)
	show("conv1d offsets  ", conv.OffsetList)
	fmt.Println("conv1d batch_ptr", len(conv.BatchPtr), "entries")
	show("local cu_q      ", local.QueryStartLoc)
	show("local k lens    ", local.SeqLens)
	show("local table     ", local.BlockTable)
}

// must returns v, or ends the program with err's message (the C call and its detail).
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
