// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

type maxVBCase struct {
	Name           string  `json:"name"`
	Chunk          int64   `json:"attn_chunk_size"`
	Seqs           int64   `json:"max_num_seqs"`
	Tokens         int64   `json:"max_num_batched_tokens"`
	Bound          int64   `json:"bound"`
	VirtualBatches *int64  `json:"virtual_batches"`
	QueryLens      []int64 `json:"query_lens"`
}

func TestMaxLocalAttentionVirtualBatchesVectors(t *testing.T) {
	for _, c := range loadCases[maxVBCase](t, "max_local_attention_virtual_batches") {
		b, err := MaxLocalAttentionVirtualBatches(c.Chunk, c.Seqs, c.Tokens)
		mustOK(t, err)
		wantEqual(t, c.Name, b.Bound, c.Bound)
		if c.VirtualBatches != nil && *c.VirtualBatches > b.BoundWithEmptyRows {
			t.Fatalf("%s: %d virtual batches above the padded bound %d", c.Name, *c.VirtualBatches,
				b.BoundWithEmptyRows)
		}
	}
}

func TestMaxLocalAttentionVirtualBatchesErrors(t *testing.T) {
	_, err := MaxLocalAttentionVirtualBatches(0, 1, 1)
	wantError(t, err, StatusInvalidArgument, "cattn_max_local_attention_virtual_batches", "args->attn_chunk_size")
	_, err = MaxLocalAttentionVirtualBatches(4, -1, 1)
	wantError(t, err, StatusInvalidArgument, "args->max_num_seqs")
	b, err := MaxLocalAttentionVirtualBatches(16, 1, 0)
	mustOK(t, err)
	wantEqual(t, "one padding row", b, VirtualBatchBound{Bound: 0, BoundWithEmptyRows: 1})
}
