// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// GetPCPQueryRestoreIdxSize returns the exact length of the restore index for a host
// cuNumTokens ([R + 1] int32/int64): twice the sum of the per-request half lengths
// (cattn_get_pcp_query_restore_idx_size). Errors: StatusInvalidArgument for a device tensor,
// a decreasing cuNumTokens or an odd request length above 1.
//
// See docs/api/get_pcp_query_restore_idx.md.
func GetPCPQueryRestoreIdxSize(cuNumTokens *Tensor) (int64, error) {
	f := newFrame("cattn_get_pcp_query_restore_idx_size", "GetPCPQueryRestoreIdxSize",
		"cu_num_tokens", "cuNumTokens")
	defer f.free()
	cu, err := f.tensor("cu_num_tokens", cuNumTokens)
	if err != nil {
		return 0, err
	}
	return f.getPCPQueryRestoreIdxSize(cu)
}

// GetPCPQueryRestoreIdx writes the index that restores the original token order after every
// request's tokens were split into a head half and a tail half and concatenated as
// [all heads, all tails]: vLLM's argsort in get_pcp_query_restore_idx, computed in O(n)
// (cattn_get_pcp_query_restore_idx). Decode requests (length 1) take no part.
//
// cuNumTokens: [R + 1] int32/int64, non-decreasing. restoreIdx: [capacity >= size]
// int32/int64; entries past the size (GetPCPQueryRestoreIdxSize) are set to -1. Host tensors
// run synchronously; CUDA tensors are enqueued on stream (see cattn.h for what the device
// cannot check). Errors: StatusInvalidArgument, StatusInsufficientSize (capacity < size),
// StatusNotSupported / StatusNotImplemented, StatusCUDAError.
//
// See docs/api/get_pcp_query_restore_idx.md.
func GetPCPQueryRestoreIdx(cuNumTokens, restoreIdx *Tensor, stream Stream) error {
	f := newFrame("cattn_get_pcp_query_restore_idx", "GetPCPQueryRestoreIdx",
		"args->cu_num_tokens", "cuNumTokens", "args->restore_idx", "restoreIdx")
	defer f.free()
	cu, err := f.tensor("args->cu_num_tokens", cuNumTokens)
	if err != nil {
		return err
	}
	out, err := f.tensor("args->restore_idx", restoreIdx)
	if err != nil {
		return err
	}
	return f.getPCPQueryRestoreIdx(cu, out, stream)
}

// PCPQueryRestoreIdx returns, in one call, the index that restores the original token order
// after every request's tokens were split into head and tail halves and concatenated as
// [all heads, all tails] (vLLM's get_pcp_query_restore_idx): the size query, then the index of
// exactly that size. cuNumTokens is [R + 1], non-decreasing, each request of even length or a
// decode of 1. Since 1.1.
//
// See docs/api/get_pcp_query_restore_idx.md.
func PCPQueryRestoreIdx[T Index](cuNumTokens []T) ([]T, error) {
	f := newFrame("cattn_get_pcp_query_restore_idx", "PCPQueryRestoreIdx", "cu_num_tokens",
		"cuNumTokens", "args->cu_num_tokens", "cuNumTokens", "args->restore_idx", "the result")
	defer f.free()
	cu, err := f.tensor("args->cu_num_tokens", IndexTensor(cuNumTokens))
	if err != nil {
		return nil, err
	}
	size, err := f.getPCPQueryRestoreIdxSize(cu)
	if err != nil {
		return nil, err
	}
	out := make([]T, size)
	o, err := f.tensor("args->restore_idx", IndexTensor(out))
	if err != nil {
		return nil, err
	}
	if err := f.getPCPQueryRestoreIdx(cu, o, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func (f *frame) getPCPQueryRestoreIdxSize(cu cTensor) (int64, error) {
	var size C.int64_t
	err := f.status(cGetPCPQueryRestoreIdxSize(cu, &size, f.msg))
	return int64(size), err
}

func (f *frame) getPCPQueryRestoreIdx(cu, out cTensor, stream Stream) error {
	a := cArgs[C.cattn_pcp_query_restore_idx_args_t](f)
	a.cu_num_tokens = cu
	a.restore_idx = out
	setAddr(&a.stream, uintptr(stream))
	return f.status(cGetPCPQueryRestoreIdx(a, f.msg))
}
