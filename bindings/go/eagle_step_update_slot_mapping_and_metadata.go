// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// The speculative-decoding calls (since 1.2): EagleStepUpdateSlotMappingAndMetadata,
// EaglePrepareInputsPadded, EaglePrepareNextTokenPadded, ComputeNewSlotMapping,
// CopyAndExpandEagleInputs and UpdateNumComputedTokensForBatchChange are vLLM's
// vllm/v1/spec_decode/utils.py, one call per helper, on host tensors (synchronously) or CUDA
// tensors (one kernel on the Stream, no host sync, capturable). Index tensors are int32 or
// int64, each of its own type, all on the host or all on one GPU; flag tensors (masks) hold
// one byte per entry (Bool, UInt8 or Int8; nonzero = set). The host path refuses a value that
// would make vLLM read outside an input or write outside an output (StatusInvalidArgument,
// naming the tensor and the index); the device path never reads or writes out of bounds and
// writes what docs/api/spec_decode.md says instead. Slots are int64 and exact where vLLM
// computes block * block_size in 32 bits and wraps past 2^31.

// EagleStepParams are the scalars of EagleStepUpdateSlotMappingAndMetadata (those of
// cattn_eagle_step_update_slot_mapping_and_metadata_args_t). The zero value is the header's
// initialiser, whose sizes have no default: set BlockSize and MaxModelLen.
type EagleStepParams struct {
	BlockSize   int64 // the KV-cache block size, >= 1
	MaxModelLen int64 // >= 1
	// InputBatchSize is the slot-mapping entries written, the batch plus CUDA-graph padding:
	// 0 means B (the header's default), otherwise at least B.
	InputBatchSize int64
}

// EagleStepUpdateSlotMappingAndMetadataArgs are the arguments of
// EagleStepUpdateSlotMappingAndMetadata (cattn_eagle_step_update_slot_mapping_and_metadata_args_t).
// B is Positions' length.
type EagleStepUpdateSlotMappingAndMetadataArgs struct {
	EagleStepParams
	Positions           *Tensor // in: [B] the step's positions (M-RoPE: row 0)
	BlockTable          *Tensor // in: [B, W], W >= 1
	SeqLens             *Tensor // in and out: [B], updated in place
	OutClampedPositions *Tensor // out: [>= B]; may be Positions itself (the same view)
	OutSlotMapping      *Tensor // out: [>= InputBatchSize] int64
	Stream              Stream
}

// EagleStepUpdateSlotMappingAndMetadata advances every request of an EAGLE drafting step by
// one token (cattn_eagle_step_update_slot_mapping_and_metadata, vLLM's
// eagle_step_update_slot_mapping_and_metadata): for row i, p = Positions[i] + 1; when p <
// MaxModelLen the clamped position is p, the slot BlockTable[i, min(p / BlockSize, W - 1)] *
// BlockSize + p % BlockSize and SeqLens[i] = min(SeqLens[i] + 1, MaxModelLen); otherwise 0,
// PadSlotID (-1) and min(1, MaxModelLen). Slots B to InputBatchSize - 1 get PadSlotID; later
// entries are left as they are. Host tensors run synchronously; CUDA tensors enqueue one
// kernel on Stream (capturable). Errors: StatusInvalidArgument (a nil or malformed tensor or
// size, mixed devices, an overlap; on the host a value out of range), StatusInsufficientSize
// (an output shorter than its shape), StatusNotSupported (CUDA tensors in a CPU-only build),
// StatusCUDAError. Since 1.2.
//
// See docs/api/spec_decode.md.
func EagleStepUpdateSlotMappingAndMetadata(args EagleStepUpdateSlotMappingAndMetadataArgs) error {
	f := newFrame("cattn_eagle_step_update_slot_mapping_and_metadata",
		"EagleStepUpdateSlotMappingAndMetadata")
	defer f.free()
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], eagleStepFields[:], []*Tensor{args.Positions,
		args.BlockTable, args.SeqLens, args.OutClampedPositions,
		args.OutSlotMapping}); err != nil {
		return err
	}
	return f.eagleStepUpdateSlotMappingAndMetadata(&args.EagleStepParams, cs, args.Stream)
}

// The C names of EagleStepUpdateSlotMappingAndMetadataArgs' tensors, in
// cattn_eagle_step_update_slot_mapping_and_metadata_args_t order.
var eagleStepFields = [5]string{"args->positions", "args->block_table", "args->seq_lens",
	"args->out_clamped_positions", "args->out_slot_mapping"}

// EagleStepSlots is what EagleStepUpdateSlotMappingAndMetadataHost returns.
type EagleStepSlots[T Index] struct {
	ClampedPositions []T     // [B]
	SlotMapping      []int64 // [InputBatchSize], or [B] when it is 0
}

// EagleStepUpdateSlotMappingAndMetadataHost is the one-call host form of
// EagleStepUpdateSlotMappingAndMetadata: the clamped positions and slots of the step's
// positions ([B]) in blockTable (B rows of one length W), with seqLens ([B]) updated in place
// as libcattn does. The slot mapping has params.InputBatchSize entries (B when it is 0), the
// padding's PadSlotID. Since 1.2.
//
// See docs/api/spec_decode.md.
func EagleStepUpdateSlotMappingAndMetadataHost[T Index](params EagleStepParams, positions []T,
	blockTable [][]T, seqLens []T) (EagleStepSlots[T], error) {
	f := newFrame("cattn_eagle_step_update_slot_mapping_and_metadata",
		"EagleStepUpdateSlotMappingAndMetadataHost",
		"args->block_size", "params.BlockSize", "args->max_model_len", "params.MaxModelLen",
		"args->input_batch_size", "params.InputBatchSize", "args->positions", "positions",
		"args->block_table", "blockTable", "args->seq_lens", "seqLens",
		"args->out_clamped_positions", "the result", "args->out_slot_mapping", "the result")
	defer f.free()
	flat, cols, bad := flatRows(blockTable)
	if bad >= 0 {
		return EagleStepSlots[T]{}, f.argError("args->block_table",
			"has rows of different lengths", "row "+strconv.Itoa(bad)+" of "+
				strconv.Itoa(len(blockTable[bad])), strconv.Itoa(cols)+", row 0's")
	}
	// No rows give no width; libcattn wants W >= 1, and every width is the same empty table.
	if len(blockTable) == 0 {
		cols = 1
	}
	// A padded batch below B is refused by libcattn, which names InputBatchSize when the
	// result has room for B.
	b := int64(len(positions))
	r := EagleStepSlots[T]{ClampedPositions: make([]T, b),
		SlotMapping: make([]int64, max(params.InputBatchSize, b))}
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], eagleStepFields[:], []*Tensor{IndexTensor(positions),
		IndexTensor(flat, int64(len(blockTable)), int64(cols)), IndexTensor(seqLens),
		IndexTensor(r.ClampedPositions), Int64Tensor(r.SlotMapping)}); err != nil {
		return EagleStepSlots[T]{}, err
	}
	if err := f.eagleStepUpdateSlotMappingAndMetadata(&params, cs, 0); err != nil {
		return EagleStepSlots[T]{}, err
	}
	return r, nil
}

// t holds the tensors in cattn_eagle_step_update_slot_mapping_and_metadata_args_t order
// (eagleStepFields).
func (f *frame) eagleStepUpdateSlotMappingAndMetadata(p *EagleStepParams, t [5]cTensor,
	stream Stream) error {
	a := cArgs[C.cattn_eagle_step_update_slot_mapping_and_metadata_args_t](f)
	cEagleStepUpdateSlotMappingAndMetadataArgsInit(a)
	a.block_size = C.int64_t(p.BlockSize)
	a.max_model_len = C.int64_t(p.MaxModelLen)
	a.input_batch_size = C.int64_t(p.InputBatchSize)
	a.positions, a.block_table, a.seq_lens = t[0], t[1], t[2]
	a.out_clamped_positions, a.out_slot_mapping = t[3], t[4]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cEagleStepUpdateSlotMappingAndMetadata(a, f.msg))
}
