// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// MambaCacheMode is vLLM's mamba_cache_mode (cattn_mamba_cache_mode_t).
type MambaCacheMode int32

// The modes.
const (
	MambaCacheModeNone  MambaCacheMode = 0
	MambaCacheModeAll   MambaCacheMode = 1
	MambaCacheModeAlign MambaCacheMode = 2
)

// MambaBlockTableArgs are the arguments of MambaGetBlockTableTensor
// (cattn_mamba_block_table_args_t).
type MambaBlockTableArgs struct {
	BlockTable *Tensor // in: [B, M] int32/int64
	// SeqLens: in, [B] int32/int64 (Align only; may be nil otherwise).
	SeqLens              *Tensor
	BlockSize            int64 // Align: >= 1
	NumSpeculativeBlocks int64 // Align: >= 0
	Mode                 MambaCacheMode
	// Out: All/None - [B, M], a copy (nothing is written when Out is the very BlockTable
	// view); Align - [B, 1 + NumSpeculativeBlocks]. int32/int64.
	Out    *Tensor
	Stream Stream
}

// MambaGetBlockTableTensor selects the block-table columns Mamba kernels use, as vLLM's
// mamba_get_block_table_tensor (cattn_mamba_get_block_table_tensor). Align: Out[b, j] =
// BlockTable[b, max((SeqLens[b] - 1) // BlockSize, 0) + j]. Unlike vLLM it never reads past a
// row: on the host a column >= M is StatusInvalidArgument; on the device it is written as
// PadSlotID.
//
// See docs/api/mamba_get_block_table_tensor.md.
func MambaGetBlockTableTensor(args MambaBlockTableArgs) error {
	f := newFrame("cattn_mamba_get_block_table_tensor", "MambaGetBlockTableTensor",
		"args->mamba_cache_mode", "args.Mode")
	defer f.free()
	var cs [3]cTensor
	names := [3]string{"args->block_table", "args->seq_lens", "args->out"}
	if err := f.tensorsInto(cs[:], names[:], []*Tensor{args.BlockTable, args.SeqLens, args.Out}); err != nil {
		return err
	}
	return f.mambaGetBlockTableTensor(cs[0], cs[1], args.BlockSize, args.NumSpeculativeBlocks,
		args.Mode, cs[2], args.Stream)
}

// MambaBlockTable selects, in one call, the block-table columns Mamba kernels use, vLLM's
// mamba_get_block_table_tensor on host slices: blockTable has B rows of equal length M;
// seqLens ([B]) is read in MambaCacheModeAlign only (nil otherwise is fine). Align returns B
// rows of 1 + numSpeculativeBlocks columns, the other modes a copy of blockTable. A column
// past a row is StatusInvalidArgument (vLLM reads out of bounds). Since 1.1.
//
// See docs/api/mamba_get_block_table_tensor.md.
func MambaBlockTable[T Index](blockTable [][]T, seqLens []T, blockSize,
	numSpeculativeBlocks int64, mode MambaCacheMode) ([][]T, error) {
	f := newFrame("cattn_mamba_get_block_table_tensor", "MambaBlockTable",
		"args->block_table", "blockTable", "args->seq_lens", "seqLens", "args->block_size",
		"blockSize", "args->num_speculative_blocks", "numSpeculativeBlocks",
		"args->mamba_cache_mode", "mode", "args->out", "the result")
	defer f.free()
	flat, cols, bad := flatRows(blockTable)
	if bad >= 0 {
		return nil, f.argError("args->block_table", "has rows of different lengths",
			"row "+strconv.Itoa(bad)+" of "+strconv.Itoa(len(blockTable[bad])),
			strconv.Itoa(cols)+", row 0's")
	}
	b := int64(len(blockTable))
	outCols := int64(cols)
	if mode == MambaCacheModeAlign {
		// Checked here because it sizes the result: libcattn refuses the same on every row.
		if numSpeculativeBlocks < 0 {
			return nil, f.argError("args->num_speculative_blocks", "is negative",
				strconv.FormatInt(numSpeculativeBlocks, 10), ">= 0")
		}
		if b > 0 && numSpeculativeBlocks >= int64(cols) {
			return nil, f.argError("args->num_speculative_blocks", "is out of range",
				strconv.FormatInt(numSpeculativeBlocks, 10),
				"[0, "+strconv.Itoa(cols)+"): the result's columns fit in a row")
		}
		outCols = 1 + numSpeculativeBlocks
	}
	var seq *Tensor
	if seqLens != nil {
		seq = IndexTensor(seqLens)
	}
	out := make([]T, b*outCols)
	var cs [3]cTensor
	names := [3]string{"args->block_table", "args->seq_lens", "args->out"}
	ts := [3]*Tensor{IndexTensor(flat, b, int64(cols)), seq, IndexTensor(out, b, outCols)}
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return nil, err
	}
	if err := f.mambaGetBlockTableTensor(cs[0], cs[1], blockSize, numSpeculativeBlocks, mode,
		cs[2], 0); err != nil {
		return nil, err
	}
	return splitRows(out, int(outCols)), nil
}

func (f *frame) mambaGetBlockTableTensor(table, seqLens cTensor, blockSize, nspec int64,
	mode MambaCacheMode, out cTensor, stream Stream) error {
	a := cArgs[C.cattn_mamba_block_table_args_t](f)
	a.block_table = table
	a.seq_lens = seqLens
	a.block_size = C.int64_t(blockSize)
	a.num_speculative_blocks = C.int64_t(nspec)
	a.mamba_cache_mode = C.int32_t(mode)
	a.out = out
	setAddr(&a.stream, uintptr(stream))
	return f.status(cMambaGetBlockTableTensor(a, f.msg))
}
