// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// SlotMappingContract is which of vLLM's slot-mapping contracts a slot mapping follows
// (cattn_slot_mapping_contract_t). The zero value is the header's default, model runner v2.
type SlotMappingContract int32

// The contracts.
const (
	// SlotMappingMRV2: vllm/v1/worker/gpu/block_table.py; the table row of batch row b is the
	// persistent row IdxMapping[b]; positions split into kernel blocks of KernelBlockSize x
	// DCPSize tokens.
	SlotMappingMRV2 SlotMappingContract = 0
	// SlotMappingV1: vllm/v1/worker/block_table.py; the table row is the batch row (no
	// IdxMapping); positions split into virtual blocks of BlockSize x DCPSize tokens, then into
	// kernel blocks.
	SlotMappingV1 SlotMappingContract = 1
)

// SlotMode is a KV-cache group's slot mode (cattn_slot_mode_t, vLLM's SlotMappingMode). The
// zero value is the header's default, SlotModeTokenToKVSlot.
type SlotMode int32

// The slot modes.
const (
	SlotModeTokenToKVSlot SlotMode = 0 // attention groups: a slot per token
	SlotModeNone          SlotMode = 1 // Mamba groups: no slot mapping is written
)

// SlotMappingParams are the parameters of one KV-cache group's slot mapping (the scalars of
// cattn_compute_slot_mappings_args_t). The zero value is CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT
// but for the block sizes, which have no default: MRV2, one DCP rank.
type SlotMappingParams struct {
	Contract        SlotMappingContract
	BlockSize       int64 // the group's block size, >= 1
	KernelBlockSize int64 // divides BlockSize: the table's block unit
	DCPSize         int64 // >= 1; 0 means the header's default (1)
	DCPRank         int64 // in [0, DCPSize)
	// InterleaveSize is dcp_kv_cache_interleave_size: >= 1, divides the contract's block; 0
	// means the header's default (1).
	InterleaveSize int64
}

// ComputeSlotMappingsArgs are the arguments of ComputeSlotMappings
// (cattn_compute_slot_mappings_args_t), for one KV-cache group.
type ComputeSlotMappingsArgs struct {
	SlotMappingParams
	QueryStartLoc *Tensor // in: [B + 1]
	NumReqs       *Tensor // in, may be nil: [1] live rows in [0, B] (host: refused outside; device: clamped); nil = B
	Positions     *Tensor // in: [N], N at least the live total (v1: padded)
	IdxMapping    *Tensor // in: [B] with SlotMappingMRV2; nil with SlotMappingV1
	BlockTable    *Tensor // in: [rows, W]: persistent rows (MRV2), batch rows (V1)
	SlotMapping   *Tensor // out: [T_cap] int64, T_cap at least the live total
	Stream        Stream
}

// The C fields ComputeSlotMappingsArgs names otherwise.
var slotMappingRenames = []string{"args->dcp_kv_cache_interleave_size", "args.InterleaveSize"}

// ComputeSlotMappings writes the KV-cache slot of every live token of one group
// (cattn_compute_slot_mappings): table[row, col] * KernelBlockSize + offset with the row,
// column and offset of the contract, PadSlotID (-1) for a token another DCP rank stores and
// for every entry from the live total to T_cap. 64-bit arithmetic (vLLM's MRV2 wraps past
// 2^31). Host tensors run synchronously; CUDA tensors enqueue one kernel on Stream. Errors: as
// PreparePosSeqLens, and StatusInvalidArgument for the parameters (contract, block sizes,
// DCP). Since 1.2.
//
// See docs/api/step_inputs.md.
func ComputeSlotMappings(args ComputeSlotMappingsArgs) error {
	f := newFrame("cattn_compute_slot_mappings", "ComputeSlotMappings", slotMappingRenames...)
	defer f.free()
	var cs [6]cTensor
	if err := f.tensorsInto(cs[:], slotMappingFields[:], []*Tensor{args.QueryStartLoc,
		args.NumReqs, args.Positions, args.IdxMapping, args.BlockTable,
		args.SlotMapping}); err != nil {
		return err
	}
	return f.computeSlotMappings(&args.SlotMappingParams, cs, args.Stream)
}

// The C names of ComputeSlotMappingsArgs' tensors, in cattn_compute_slot_mappings_args_t order.
var slotMappingFields = [6]string{"args->query_start_loc", "args->num_reqs", "args->positions",
	"args->idx_mapping", "args->block_table", "args->slot_mapping"}

// ComputeSlotMappingsHost is the one-call host form of ComputeSlotMappings: the slot of each
// live token (the total StepInputsSize counts; PadSlotID for a token another DCP rank stores)
// for the batch queryStartLoc ([B + 1]) with numReqs live rows (nil means B), their positions
// ([N], N at least the live total), the table blockTable (rows of one length: persistent rows
// with MRV2, batch rows with V1) and idxMapping ([B], MRV2 only; nil with V1). Since 1.2.
//
// See docs/api/step_inputs.md.
func ComputeSlotMappingsHost[T Index](params SlotMappingParams, queryStartLoc []T,
	numReqs *int64, positions, idxMapping []T, blockTable [][]T) ([]int64, error) {
	f := newFrame("cattn_compute_slot_mappings", "ComputeSlotMappingsHost",
		"args->contract", "params.Contract", "args->block_size", "params.BlockSize",
		"args->kernel_block_size", "params.KernelBlockSize", "args->dcp_size", "params.DCPSize",
		"args->dcp_rank", "params.DCPRank", "args->dcp_kv_cache_interleave_size",
		"params.InterleaveSize", "args->query_start_loc", "queryStartLoc", "args->num_reqs",
		"numReqs", "args->positions", "positions", "args->idx_mapping", "idxMapping",
		"args->block_table", "blockTable", "args->slot_mapping", "the result")
	defer f.free()
	flat, cols, bad := flatRows(blockTable)
	if bad >= 0 {
		return nil, f.argError("args->block_table", "has rows of different lengths",
			"row "+strconv.Itoa(bad)+" of "+strconv.Itoa(len(blockTable[bad])),
			strconv.Itoa(cols)+", row 0's")
	}
	var idx *Tensor
	if idxMapping != nil {
		idx = IndexTensor(idxMapping)
	}
	qsl, live := IndexTensor(queryStartLoc), numReqsTensor(numReqs)
	// libcattn counts the live tokens (its size query): a slot for each.
	var sizes [4]cTensor
	if err := f.tensorsInto(sizes[:], stepInputsSizeFields[:], []*Tensor{nil, qsl, live,
		nil}); err != nil {
		return nil, err
	}
	n, err := f.stepInputsSize(nil, sizes)
	if err != nil {
		return nil, err
	}
	out := make([]int64, n.NumTokens)
	var cs [6]cTensor
	if err := f.tensorsInto(cs[:], slotMappingFields[:], []*Tensor{qsl, live,
		IndexTensor(positions), idx, IndexTensor(flat, int64(len(blockTable)), int64(cols)),
		Int64Tensor(out)}); err != nil {
		return nil, err
	}
	if err := f.computeSlotMappings(&params, cs, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// t holds the tensors in cattn_compute_slot_mappings_args_t order (slotMappingFields). A zero
// DCPSize or InterleaveSize keeps the header's default.
func (f *frame) computeSlotMappings(p *SlotMappingParams, t [6]cTensor, stream Stream) error {
	a := cArgs[C.cattn_compute_slot_mappings_args_t](f)
	cComputeSlotMappingsArgsInit(a)
	a.contract = C.int32_t(p.Contract)
	a.block_size = C.int64_t(p.BlockSize)
	a.kernel_block_size = C.int64_t(p.KernelBlockSize)
	if p.DCPSize != 0 {
		a.dcp_size = C.int64_t(p.DCPSize)
	}
	a.dcp_rank = C.int64_t(p.DCPRank)
	if p.InterleaveSize != 0 {
		a.dcp_kv_cache_interleave_size = C.int64_t(p.InterleaveSize)
	}
	a.query_start_loc, a.num_reqs, a.positions = t[0], t[1], t[2]
	a.idx_mapping, a.block_table, a.slot_mapping = t[3], t[4], t[5]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cComputeSlotMappings(a, f.msg))
}
