// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// GatherBlockTablesArgs are the arguments of GatherBlockTables
// (cattn_gather_block_tables_args_t). B is IdxMapping's length.
type GatherBlockTablesArgs struct {
	IdxMapping *Tensor // in: [B] persistent row of each batch row
	NumReqs    *Tensor // in, may be nil: [1] live rows in [0, B] (host: refused outside; device: clamped); nil = B
	BlockTable *Tensor // in: [R, W] the persistent table (kernel-block ids)
	// NumBlocks: in, may be nil: [R] entries in use per persistent row in [0, W] (host: refused outside; device: clamped); nil
	// = W.
	NumBlocks *Tensor
	Out       *Tensor // out: [B, W], int32/int64
	Stream    Stream
}

// GatherBlockTables copies each live row's persistent block-table row into the batch's table
// (cattn_gather_block_tables), model runner v2's gather_block_tables: Out[b, 0:n] =
// BlockTable[IdxMapping[b], 0:n], n that persistent row's NumBlocks. Entries of a live row past
// n are left as they are (vLLM); padded rows are 0 across the full width. Host tensors run
// synchronously; CUDA tensors enqueue one kernel on Stream. Errors: as PreparePosSeqLens.
// Since 1.2.
//
// See docs/api/step_inputs.md.
func GatherBlockTables(args GatherBlockTablesArgs) error {
	f := newFrame("cattn_gather_block_tables", "GatherBlockTables")
	defer f.free()
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], gatherBlockTablesFields[:], []*Tensor{args.IdxMapping,
		args.NumReqs, args.BlockTable, args.NumBlocks, args.Out}); err != nil {
		return err
	}
	return f.gatherBlockTables(cs, args.Stream)
}

// The C names of GatherBlockTablesArgs' tensors, in cattn_gather_block_tables_args_t order.
var gatherBlockTablesFields = [5]string{"args->idx_mapping", "args->num_reqs",
	"args->block_table", "args->num_blocks", "args->out"}

// GatherBlockTablesHost is the one-call host form of GatherBlockTables: the batch's table, one
// row of W entries per entry of idxMapping, from a persistent table of R rows of one length W.
// numBlocks ([R], nil means every entry) bounds each persistent row's entries in use; the
// entries past them, and the padded rows past numReqs (nil means B), are 0 here (the result
// starts zeroed). Since 1.2.
//
// See docs/api/step_inputs.md.
func GatherBlockTablesHost[T Index](idxMapping []T, numReqs *int64, blockTable [][]T,
	numBlocks []T) ([][]T, error) {
	f := newFrame("cattn_gather_block_tables", "GatherBlockTablesHost",
		"args->idx_mapping", "idxMapping", "args->num_reqs", "numReqs",
		"args->block_table", "blockTable", "args->num_blocks", "numBlocks",
		"args->out", "the result")
	defer f.free()
	flat, cols, bad := flatRows(blockTable)
	if bad >= 0 {
		return nil, f.argError("args->block_table", "has rows of different lengths",
			"row "+strconv.Itoa(bad)+" of "+strconv.Itoa(len(blockTable[bad])),
			strconv.Itoa(cols)+", row 0's")
	}
	b := int64(len(idxMapping))
	out := make([]T, b*int64(cols))
	var nb *Tensor
	if numBlocks != nil {
		nb = IndexTensor(numBlocks)
	}
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], gatherBlockTablesFields[:], []*Tensor{IndexTensor(idxMapping),
		numReqsTensor(numReqs), IndexTensor(flat, int64(len(blockTable)), int64(cols)), nb,
		IndexTensor(out, b, int64(cols))}); err != nil {
		return nil, err
	}
	if err := f.gatherBlockTables(cs, 0); err != nil {
		return nil, err
	}
	return splitRowsN(out, int(b), cols), nil
}

// splitRowsN cuts flat into rows of cols, rows of them (rows empty ones when cols is 0).
func splitRowsN[T any](flat []T, rows, cols int) [][]T {
	if cols == 0 {
		return make([][]T, rows)
	}
	return splitRows(flat, cols)
}

// t holds the tensors in cattn_gather_block_tables_args_t order (gatherBlockTablesFields).
func (f *frame) gatherBlockTables(t [5]cTensor, stream Stream) error {
	a := cArgs[C.cattn_gather_block_tables_args_t](f)
	cGatherBlockTablesArgsInit(a)
	a.idx_mapping, a.num_reqs, a.block_table, a.num_blocks, a.out = t[0], t[1], t[2], t[3], t[4]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cGatherBlockTables(a, f.msg))
}
