// SPDX-License-Identifier: Apache-2.0

// Command eight_requests computes, for one batch of 8 requests and with the one-call helpers
// only, the PCP query restore index, every DCP rank's local sequence lengths, the
// causal-conv1d launch metadata and the local-attention virtual batches. Run it with
// `go run ./example/eight_requests` from bindings/go (see README.md for the library).
package main

import (
	"fmt"
	"log"

	cattn "github.com/libcattn/cattn-go"
)

func main() {
	// Three decodes (1 token) and five prefill chunks of even length, as PCP needs; each
	// sequence is its context plus its query. The last request's query crosses a chunk of
	// local attention, so it makes two virtual batches.
	queryLens := []int32{1, 4, 1, 6, 8, 1, 2, 10}
	seqLens := []int32{17, 4, 33, 70, 8, 9, 130, 40}
	queryStartLoc := []int32{0}
	for _, q := range queryLens {
		queryStartLoc = append(queryStartLoc, queryStartLoc[len(queryStartLoc)-1]+q)
	}
	fmt.Println("query_start_loc", queryStartLoc)
	fmt.Println("seq_lens       ", seqLens)

	restore, err := cattn.PCPQueryRestoreIdx(queryStartLoc)
	check(err)
	fmt.Printf("\nPCP restore index (%d entries): %v\n", len(restore), restore)

	const dcpSize, interleave = 4, 16
	ranks, err := cattn.DCPLocalSeqLensAllRanks(seqLens, dcpSize, interleave)
	check(err)
	fmt.Printf("\nDCP local seq_lens, %d ranks, interleave %d ([request][rank]):\n", dcpSize, interleave)
	for r, lens := range ranks {
		fmt.Printf("  request %d (%3d tokens): %v\n", r, seqLens[r], lens)
	}

	conv, err := cattn.CausalConv1dMetadata(queryStartLoc, 8)
	check(err)
	fmt.Printf("\ncausal-conv1d, block_m 8: %d programs, capacity %d\n", conv.Tot, len(conv.BatchPtr))
	fmt.Println("  nums       ", conv.Nums)
	fmt.Println("  mlist      ", conv.MList)
	fmt.Println("  offsetlist ", conv.OffsetList)
	fmt.Println("  batch_ptr  ", conv.BatchPtr[:conv.Tot+2], "...")

	// Chunked local attention over chunks of 32 tokens in KV blocks of 8: request r's
	// blocks are 100 * r + 0, 1, ...
	const chunk, block = 32, 8
	table := make([][]int32, len(seqLens))
	for r := range table {
		for b := int32(0); b < (130+block-1)/block; b++ {
			table[r] = append(table[r], int32(100*r)+b)
		}
	}
	vb, err := cattn.LocalAttentionVirtualBatches(chunk, block, queryStartLoc, seqLens, table)
	check(err)
	fmt.Printf("\nlocal attention, chunk %d, block %d: %d virtual batches of %d pages, max_query_len %d, max_seq_len %d\n",
		chunk, block, len(vb.SeqLens), len(vb.BlockTable[0]), vb.MaxQueryLen, vb.MaxSeqLen)
	fmt.Println("  query_start_loc    ", vb.QueryStartLoc)
	fmt.Println("  seq_lens           ", vb.SeqLens)
	fmt.Println("  num_computed_tokens", vb.NumComputedTokens)
	for v, pages := range vb.BlockTable {
		fmt.Printf("  block table %2d: %v\n", v, pages)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
