// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// PadSlotID is the value written to BatchPtr and TokenChunkOffsetPtr past the programs in use
// (CATTN_PAD_SLOT_ID).
const PadSlotID = -1

// ComputeCausalConv1dMetadataSize returns the number of programs tot and the capacity vLLM
// allocates for the launch arrays, max(1024, tot) * 2
// (cattn_compute_causal_conv1d_metadata_size). queryStartLocCPU: host [B + 1] int32/int64,
// non-decreasing. blockM: tokens per program (vLLM: 8), >= 1.
//
// See docs/api/compute_causal_conv1d_metadata.md.
func ComputeCausalConv1dMetadataSize(queryStartLocCPU *Tensor, blockM int64) (tot, capacity int64, err error) {
	f := newFrame("cattn_compute_causal_conv1d_metadata_size", "ComputeCausalConv1dMetadataSize",
		"query_start_loc_cpu", "queryStartLocCPU", "block_m", "blockM")
	defer f.free()
	qsl, err := f.tensor("query_start_loc_cpu", queryStartLocCPU)
	if err != nil {
		return 0, 0, err
	}
	return f.computeCausalConv1dMetadataSize(qsl, blockM)
}

// CausalConv1dMetadataArgs are the arguments of ComputeCausalConv1dMetadata
// (cattn_causal_conv1d_metadata_args_t). Every output is optional (nil); present ones are
// 1-D int32/int64 on one device.
type CausalConv1dMetadataArgs struct {
	// QueryStartLocCPU: host [B + 1] int32/int64, non-decreasing; an empty tensor is the
	// empty batch, as in vLLM.
	QueryStartLocCPU *Tensor
	BlockM           int64   // tokens per program, >= 1; 0 means 8 (vLLM's, the C default)
	Nums             *Tensor // out: exactly [B], programs per request
	MList            *Tensor // out: [>= tot], request of each program
	OffsetList       *Tensor // out: [>= tot], chunk index within its request
	BatchPtr         *Tensor // out: [capacity >= tot], MList then PadSlotID
	// TokenChunkOffsetPtr: out, [capacity >= tot], OffsetList then PadSlotID.
	TokenChunkOffsetPtr *Tensor
	Stream              Stream // CUDA outputs only
}

// ComputeCausalConv1dMetadata computes causal_conv1d's launch metadata, as vLLM's
// compute_causal_conv1d_metadata (cattn_compute_causal_conv1d_metadata), and returns tot, the
// number of programs. Request i owns ceil(len_i / BlockM) consecutive programs. A decreasing
// QueryStartLocCPU is StatusInvalidArgument; outputs shorter than needed are
// StatusInsufficientSize. CUDA outputs are written by kernels enqueued on args.Stream, planned
// on the host from QueryStartLocCPU.
//
// See docs/api/compute_causal_conv1d_metadata.md.
func ComputeCausalConv1dMetadata(args CausalConv1dMetadataArgs) (tot int64, err error) {
	f := newFrame("cattn_compute_causal_conv1d_metadata", "ComputeCausalConv1dMetadata")
	defer f.free()
	var cs [6]cTensor
	names := [6]string{"args->query_start_loc_cpu", "args->nums", "args->mlist",
		"args->offsetlist", "args->batch_ptr", "args->token_chunk_offset_ptr"}
	ts := [6]*Tensor{args.QueryStartLocCPU, args.Nums, args.MList, args.OffsetList,
		args.BatchPtr, args.TokenChunkOffsetPtr}
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return 0, err
	}
	tot, err = f.computeCausalConv1dMetadata(cs, nonZero(args.BlockM, 8), args.Stream)
	if err != nil {
		return 0, err
	}
	return tot, nil
}

// CausalConv1dMetadataCapturableArgs are the arguments of ComputeCausalConv1dMetadataCapturable
// (cattn_causal_conv1d_metadata_capturable_args_t). Every tensor is 1-D int32/int64 (each output
// its own dtype) in device memory on QueryStartLoc's device (UnsafeDeviceTensor); every output
// is optional (nil). Since 1.1.
type CausalConv1dMetadataCapturableArgs struct {
	// QueryStartLoc: in, [B + 1] on the device, non-decreasing; zero-length requests pad a
	// batch to its capacity.
	QueryStartLoc *Tensor
	BlockM        int64   // tokens per program, >= 1; 0 means 8 (vLLM's, the C default)
	Nums          *Tensor // out: [B], programs per request
	MList         *Tensor // out: [capacity], request of each program, PadSlotID past tot
	OffsetList    *Tensor // out: [capacity], chunk index within its request, PadSlotID past tot
	BatchPtr      *Tensor // out: [capacity], as MList
	// TokenChunkOffsetPtr: out, [capacity], as OffsetList.
	TokenChunkOffsetPtr *Tensor
	Tot                 *Tensor // out: [1], the number of programs
	Stream              Stream
}

// ComputeCausalConv1dMetadataCapturable computes causal_conv1d's launch metadata on the device from
// the device QueryStartLoc, as vLLM's compute_causal_conv1d_metadata
// (cattn_compute_causal_conv1d_metadata_capturable), in one kernel enqueued on args.Stream: no
// host sync, no allocation, so that a captured CUDA graph computes it afresh from the batch
// written into the same buffers before every replay (ComputeCausalConv1dMetadata plans on the
// host and replays the values planned at capture). Values equal the host call's; every
// per-program output is filled to its own length, with PadSlotID past tot. A capacity of
// cdiv(max_num_tokens, BlockM) + max_num_reqs holds every batch of at most max_num_tokens
// tokens and max_num_reqs requests; a batch of more programs writes the first ones, and Tot
// still reports them all. The data is not checked on the device: a decreasing entry counts as
// an empty request, and an int32 output keeps the low 32 bits. Errors: StatusInvalidArgument
// (shapes, dtypes, devices, host tensors - the host has ComputeCausalConv1dMetadata -,
// BlockM < 1, overlaps), StatusInsufficientSize (Nums shorter than B), StatusNotSupported
// (CPU-only build, no usable device, a tensor off its element alignment), StatusCUDAError.
// Since 1.1.
//
// See docs/api/compute_causal_conv1d_metadata.md.
func ComputeCausalConv1dMetadataCapturable(args CausalConv1dMetadataCapturableArgs) error {
	f := newFrame("cattn_compute_causal_conv1d_metadata_capturable", "ComputeCausalConv1dMetadataCapturable")
	defer f.free()
	var cs [7]cTensor
	names := [7]string{"args->query_start_loc", "args->nums", "args->mlist", "args->offsetlist",
		"args->batch_ptr", "args->token_chunk_offset_ptr", "args->tot"}
	ts := [7]*Tensor{args.QueryStartLoc, args.Nums, args.MList, args.OffsetList, args.BatchPtr,
		args.TokenChunkOffsetPtr, args.Tot}
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return err
	}
	return f.computeCausalConv1dMetadataCapturable(cs, nonZero(args.BlockM, 8), args.Stream)
}

// CausalConv1dLaunch is causal_conv1d's launch metadata as CausalConv1dMetadata returns it.
type CausalConv1dLaunch[T Index] struct {
	Tot        int64 // programs, vLLM's nums.sum()
	Nums       []T   // [B]: programs per request, ceil(len / blockM)
	MList      []T   // [Tot]: the request of each program
	OffsetList []T   // [Tot]: the chunk index of each program within its request
	// BatchPtr and TokenChunkOffsetPtr have vLLM's capacity, max(1024, Tot) * 2: MList and
	// OffsetList, then PadSlotID.
	BatchPtr            []T
	TokenChunkOffsetPtr []T
}

// CausalConv1dMetadata computes, in one call, causal_conv1d's launch metadata for the batch
// queryStartLoc describes ([B + 1], non-decreasing; empty is the empty batch) with blockM
// tokens per program (vLLM's is 8; passed as given): vLLM's compute_causal_conv1d_metadata,
// the size query and then every output. Since 1.1.
//
// See docs/api/compute_causal_conv1d_metadata.md.
func CausalConv1dMetadata[T Index](queryStartLoc []T, blockM int64) (CausalConv1dLaunch[T], error) {
	f := newFrame("cattn_compute_causal_conv1d_metadata", "CausalConv1dMetadata",
		"query_start_loc_cpu", "queryStartLoc", "args->query_start_loc_cpu", "queryStartLoc",
		"block_m", "blockM", "args->block_m", "blockM", "args", "result")
	defer f.free()
	var r CausalConv1dLaunch[T]
	qsl, err := f.tensor("args->query_start_loc_cpu", IndexTensor(queryStartLoc))
	if err != nil {
		return r, err
	}
	tot, capacity, err := f.computeCausalConv1dMetadataSize(qsl, blockM)
	if err != nil {
		return r, err
	}
	r.Nums, r.MList, r.OffsetList = make([]T, numReqs(queryStartLoc)), make([]T, tot),
		make([]T, tot)
	r.BatchPtr, r.TokenChunkOffsetPtr = make([]T, capacity), make([]T, capacity)
	cs := [6]cTensor{qsl}
	names := [5]string{"args->nums", "args->mlist", "args->offsetlist", "args->batch_ptr",
		"args->token_chunk_offset_ptr"}
	outs := [5]*Tensor{IndexTensor(r.Nums), IndexTensor(r.MList), IndexTensor(r.OffsetList),
		IndexTensor(r.BatchPtr), IndexTensor(r.TokenChunkOffsetPtr)}
	if err := f.tensorsInto(cs[1:], names[:], outs[:]); err != nil {
		return CausalConv1dLaunch[T]{}, err
	}
	if r.Tot, err = f.computeCausalConv1dMetadata(cs, blockM, 0); err != nil {
		return CausalConv1dLaunch[T]{}, err
	}
	return r, nil
}

func (f *frame) computeCausalConv1dMetadataSize(qsl cTensor, blockM int64) (int64, int64, error) {
	var tot, capacity C.int64_t
	err := f.status(cComputeCausalConv1dMetadataSize(qsl, C.int64_t(blockM), &tot,
		&capacity, f.msg))
	return int64(tot), int64(capacity), err
}

// t holds query_start_loc_cpu, nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr.
func (f *frame) computeCausalConv1dMetadata(t [6]cTensor, blockM int64, stream Stream) (int64, error) {
	a := cArgs[C.cattn_causal_conv1d_metadata_args_t](f)
	a.query_start_loc_cpu = t[0]
	a.block_m = C.int64_t(blockM)
	a.nums, a.mlist, a.offsetlist = t[1], t[2], t[3]
	a.batch_ptr, a.token_chunk_offset_ptr = t[4], t[5]
	setAddr(&a.stream, uintptr(stream))
	err := f.status(cComputeCausalConv1dMetadata(a, f.msg))
	return int64(a.tot), err
}

// t holds query_start_loc, nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr, tot.
func (f *frame) computeCausalConv1dMetadataCapturable(t [7]cTensor, blockM int64, stream Stream) error {
	a := cArgs[C.cattn_causal_conv1d_metadata_capturable_args_t](f)
	a.query_start_loc = t[0]
	a.block_m = C.int64_t(blockM)
	a.nums, a.mlist, a.offsetlist = t[1], t[2], t[3]
	a.batch_ptr, a.token_chunk_offset_ptr, a.tot = t[4], t[5], t[6]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cComputeCausalConv1dMetadataCapturable(a, f.msg))
}
