// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// NewSlotMappingParams are the scalars of ComputeNewSlotMapping (those of
// cattn_compute_new_slot_mapping_args_t). The zero value is the header's initialiser, whose
// sizes have no default: set BlockSize and MaxModelLen.
type NewSlotMappingParams struct {
	BlockSize    int64 // the KV-cache block size, >= 1
	NumNewTokens int64 // N >= 0: the tokens added to every request
	MaxModelLen  int64 // >= 1
}

// ComputeNewSlotMappingArgs are the arguments of ComputeNewSlotMapping
// (cattn_compute_new_slot_mapping_args_t). B is BlockTable's rows.
type ComputeNewSlotMappingArgs struct {
	NewSlotMappingParams
	QueryStartLoc *Tensor // in: [B + 1] the batch before the extension
	BlockTable    *Tensor // in: [B, W]
	// NewPositions: in, [n] the extended batch's positions, request by request, n =
	// QueryStartLoc[B] - QueryStartLoc[0] + B * NumNewTokens.
	NewPositions        *Tensor
	IsRejectedTokenMask *Tensor // in, may be nil: [n] flags; nil = none rejected
	NewSlotMapping      *Tensor // out: [>= n] int64
	Stream              Stream
}

// ComputeNewSlotMapping computes the slots of a batch whose requests each grew by
// NumNewTokens tokens (cattn_compute_new_slot_mapping, vLLM's compute_new_slot_mapping):
// request r owns q_r + N consecutive tokens; token k at position p gets PadSlotID (-1) when it
// is rejected or p >= MaxModelLen, else table[f / W][f % W] * BlockSize + p % BlockSize with f
// = r * W + p / BlockSize (vLLM indexes the flattened table, so a narrow table reads the next
// row's blocks). The host refuses an n other than the tokens' count, a negative position and
// an f past the table; the device writes PadSlotID for those. Writes NewSlotMapping[0, n).
// Errors: as EagleStepUpdateSlotMappingAndMetadata. Since 1.2.
//
// See docs/api/spec_decode.md.
func ComputeNewSlotMapping(args ComputeNewSlotMappingArgs) error {
	f := newFrame("cattn_compute_new_slot_mapping", "ComputeNewSlotMapping")
	defer f.free()
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], newSlotMappingFields[:], []*Tensor{args.QueryStartLoc,
		args.BlockTable, args.NewPositions, args.IsRejectedTokenMask,
		args.NewSlotMapping}); err != nil {
		return err
	}
	return f.computeNewSlotMapping(&args.NewSlotMappingParams, cs, args.Stream)
}

// The C names of ComputeNewSlotMappingArgs' tensors, in cattn_compute_new_slot_mapping_args_t
// order.
var newSlotMappingFields = [5]string{"args->query_start_loc", "args->block_table",
	"args->new_positions", "args->is_rejected_token_mask", "args->new_slot_mapping"}

// ComputeNewSlotMappingHost is the one-call host form of ComputeNewSlotMapping: the slot of
// each of newPositions ([n], request by request) for the batch queryStartLoc ([B + 1]) grown
// by params.NumNewTokens per request, in blockTable (B rows of one length W);
// isRejectedTokenMask ([n]; nil means none) marks the rejected tokens. Since 1.2.
//
// See docs/api/spec_decode.md.
func ComputeNewSlotMappingHost[T Index](params NewSlotMappingParams, queryStartLoc []T,
	blockTable [][]T, newPositions []T, isRejectedTokenMask []bool) ([]int64, error) {
	f := newFrame("cattn_compute_new_slot_mapping", "ComputeNewSlotMappingHost",
		"args->block_size", "params.BlockSize", "args->num_new_tokens", "params.NumNewTokens",
		"args->max_model_len", "params.MaxModelLen", "args->query_start_loc", "queryStartLoc",
		"args->block_table", "blockTable", "args->new_positions", "newPositions",
		"args->is_rejected_token_mask", "isRejectedTokenMask", "args->new_slot_mapping",
		"the result")
	defer f.free()
	flat, cols, bad := flatRows(blockTable)
	if bad >= 0 {
		return nil, f.argError("args->block_table", "has rows of different lengths",
			"row "+strconv.Itoa(bad)+" of "+strconv.Itoa(len(blockTable[bad])),
			strconv.Itoa(cols)+", row 0's")
	}
	out := make([]int64, len(newPositions))
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], newSlotMappingFields[:], []*Tensor{IndexTensor(queryStartLoc),
		IndexTensor(flat, int64(len(blockTable)), int64(cols)), IndexTensor(newPositions),
		flagsTensor(isRejectedTokenMask), Int64Tensor(out)}); err != nil {
		return nil, err
	}
	if err := f.computeNewSlotMapping(&params, cs, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// t holds the tensors in cattn_compute_new_slot_mapping_args_t order (newSlotMappingFields).
func (f *frame) computeNewSlotMapping(p *NewSlotMappingParams, t [5]cTensor,
	stream Stream) error {
	a := cArgs[C.cattn_compute_new_slot_mapping_args_t](f)
	cComputeNewSlotMappingArgsInit(a)
	a.block_size = C.int64_t(p.BlockSize)
	a.num_new_tokens = C.int64_t(p.NumNewTokens)
	a.max_model_len = C.int64_t(p.MaxModelLen)
	a.query_start_loc, a.block_table, a.new_positions = t[0], t[1], t[2]
	a.is_rejected_token_mask, a.new_slot_mapping = t[3], t[4]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cComputeNewSlotMapping(a, f.msg))
}
