// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import (
	"strconv"
	"unsafe"
)

// MMPrefixRanges is vLLM's mm_prefix_range dict {request: [(start, end), ...]} in CSR form:
// request r's pairs are rows Offsets[r] .. Offsets[r+1]-1 of Ranges. Both are host int32/int64
// tensors: Offsets [numSeqs+1] from 0 and non-decreasing, Ranges [n, 2]. A nil *MMPrefixRanges
// is vLLM's None.
type MMPrefixRanges struct {
	Offsets *Tensor
	Ranges  *Tensor
}

func (f *frame) mmPrefixRanges(r *MMPrefixRanges) (cTensor, cTensor, error) {
	if r == nil {
		return nil, nil, nil
	}
	off, err := f.tensor("args->range_offsets", r.Offsets)
	if err != nil {
		return nil, nil, err
	}
	rng, err := f.tensor("args->ranges", r.Ranges)
	return off, rng, err
}

// ComputeMMPrefixRangeTensorSize returns the padded ranges per request of
// ComputeMMPrefixRangeTensor's output, and none = true where vLLM returns None (no ranges, or
// every request's list empty or exactly [(0, 0)]).
//
// See docs/api/compute_mm_prefix_range_tensor.md.
func ComputeMMPrefixRangeTensorSize(r *MMPrefixRanges) (maxRanges int64, none bool, err error) {
	return ComputeMMPrefixRangeTensor(r, nil)
}

// ComputeMMPrefixRangeTensor writes vLLM's padded [numSeqs, maxRanges, 2] range tensor into
// out (host int32/int64; nil for the size query), each request's pairs then (0, 0) padding; out
// is untouched when none (compute_mm_prefix_range_tensor, cattn_compute_mm_prefix_range_tensor).
func ComputeMMPrefixRangeTensor(r *MMPrefixRanges, out *Tensor) (maxRanges int64, none bool, err error) {
	f := newFrame("cattn_compute_mm_prefix_range_tensor", "ComputeMMPrefixRangeTensor",
		"args->range_offsets", "r.Offsets", "args->ranges", "r.Ranges", "args->out", "out")
	defer f.free()
	off, rng, err := f.mmPrefixRanges(r)
	if err != nil {
		return 0, false, err
	}
	o, err := f.tensor("args->out", out)
	if err != nil {
		return 0, false, err
	}
	return f.computeMMPrefixRangeTensor(off, rng, o)
}

// MMPrefixRangeTensor is the one-call form: the padded tensor (row-major int32) of per-request
// (start, end) lists, its maxRanges, and none as vLLM's None.
//
// See docs/api/compute_mm_prefix_range_tensor.md.
func MMPrefixRangeTensor(perRequest [][][2]int64) (data []int32, maxRanges int64, none bool, err error) {
	f := newFrame("cattn_compute_mm_prefix_range_tensor", "MMPrefixRangeTensor",
		"args->range_offsets", "perRequest", "args->ranges", "perRequest", "args->out",
		"the result")
	defer f.free()
	off, rng, err := f.mmPrefixRanges(mmRangesOf(perRequest))
	if err != nil {
		return nil, 0, false, err
	}
	maxRanges, none, err = f.computeMMPrefixRangeTensor(off, rng, nil)
	if err != nil || none {
		return nil, maxRanges, none, err
	}
	n := int64(len(perRequest))
	data = make([]int32, n*maxRanges*2)
	o, err := f.tensor("args->out", Int32Tensor(data, n, maxRanges, 2))
	if err != nil {
		return nil, 0, false, err
	}
	if _, _, err = f.computeMMPrefixRangeTensor(off, rng, o); err != nil {
		return nil, 0, false, err
	}
	return data, maxRanges, false, nil
}

// FillMMPrefixQueryRanges maps each scheduled query token to the multimodal prefix range
// holding it, the end INCLUSIVE as in vLLM: rows 0..T-1 of out ([capacity, 2] host int32/int64,
// capacity >= T = queryStartLocCPU[B]) become (start, end) or (-1, -1). It returns the rows
// written: 0 when no range covers a token (out untouched: skip the mask), else T
// (fill_mm_prefix_query_ranges, cattn_fill_mm_prefix_query_ranges).
//
// See docs/api/compute_mm_prefix_range_tensor.md.
func FillMMPrefixQueryRanges(r *MMPrefixRanges, queryStartLocCPU, seqLensCPU, out *Tensor) (int64, error) {
	f := newFrame("cattn_fill_mm_prefix_query_ranges", "FillMMPrefixQueryRanges",
		"args->range_offsets", "r.Offsets", "args->ranges", "r.Ranges",
		"args->query_start_loc_cpu", "queryStartLocCPU", "args->seq_lens_cpu", "seqLensCPU",
		"args->out", "out")
	defer f.free()
	off, rng, err := f.mmPrefixRanges(r)
	if err != nil {
		return 0, err
	}
	var ts [3]cTensor
	if err := f.tensorsInto(ts[:], []string{"args->query_start_loc_cpu", "args->seq_lens_cpu", "args->out"},
		[]*Tensor{queryStartLocCPU, seqLensCPU, out}); err != nil {
		return 0, err
	}
	return f.fillMMPrefixQueryRanges(off, rng, ts[0], ts[1], ts[2])
}

// mmRangesOf builds the CSR form of per-request (start, end) lists.
func mmRangesOf(perRequest [][][2]int64) *MMPrefixRanges {
	offsets := make([]int64, 1, len(perRequest)+1)
	var pairs [][2]int64
	for _, list := range perRequest {
		pairs = append(pairs, list...)
		offsets = append(offsets, int64(len(pairs)))
	}
	flat := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(pairs))), 2*len(pairs))
	return &MMPrefixRanges{Offsets: Int64Tensor(offsets),
		Ranges: Int64Tensor(flat, int64(len(pairs)), 2)}
}

// MMPrefixQueryRanges maps, in one call, each scheduled query token to the multimodal prefix
// range holding it (vLLM's fill_mm_prefix_query_ranges): perRequest[r] lists request r's
// (start, end) prompt positions (nil: no ranges, vLLM's None), queryStartLoc ([B + 1], from 0)
// and seqLens ([B]) the batch. It returns one (start, end) per token - the end inclusive as
// in vLLM, (-1, -1) for a token no range covers - or nil when no range covers any token (skip
// the mask). Since 1.1.
//
// See docs/api/compute_mm_prefix_range_tensor.md.
func MMPrefixQueryRanges[T Index](perRequest [][][2]int64, queryStartLoc, seqLens []T) ([][2]int64, error) {
	f := newFrame("cattn_fill_mm_prefix_query_ranges", "MMPrefixQueryRanges",
		"args->range_offsets", "perRequest", "args->ranges", "perRequest",
		"args->query_start_loc_cpu", "queryStartLoc", "args->seq_lens_cpu", "seqLens",
		"args->out", "the result")
	defer f.free()
	var ranges *MMPrefixRanges
	if perRequest != nil {
		if b := numReqs(queryStartLoc); int64(len(perRequest)) != b {
			return nil, f.argError("args->range_offsets", "does not hold one list per request",
				strconv.Itoa(len(perRequest))+" lists", strconv.FormatInt(b, 10))
		}
		ranges = mmRangesOf(perRequest)
	}
	off, rng, err := f.mmPrefixRanges(ranges)
	if err != nil {
		return nil, err
	}
	tokens := max(lastOf(queryStartLoc), 0)
	out := make([][2]int64, tokens)
	flat := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(out))), 2*tokens)
	var ts [3]cTensor
	if err := f.tensorsInto(ts[:], []string{"args->query_start_loc_cpu", "args->seq_lens_cpu",
		"args->out"}, []*Tensor{IndexTensor(queryStartLoc), IndexTensor(seqLens),
		Int64Tensor(flat, tokens, 2)}); err != nil {
		return nil, err
	}
	rows, err := f.fillMMPrefixQueryRanges(off, rng, ts[0], ts[1], ts[2])
	if err != nil || rows == 0 {
		return nil, err
	}
	return out[:rows], nil
}

func (f *frame) computeMMPrefixRangeTensor(offsets, ranges, out cTensor) (int64, bool, error) {
	a := cArgs[C.cattn_mm_prefix_range_tensor_args_t](f)
	a.range_offsets = offsets
	a.ranges = ranges
	a.out = out
	err := f.status(cComputeMMPrefixRangeTensor(a, f.msg))
	return int64(a.max_ranges), a.is_none != 0, err
}

func (f *frame) fillMMPrefixQueryRanges(offsets, ranges, qsl, seq, out cTensor) (int64, error) {
	a := cArgs[C.cattn_fill_mm_prefix_query_ranges_args_t](f)
	a.range_offsets = offsets
	a.ranges = ranges
	a.query_start_loc_cpu = qsl
	a.seq_lens_cpu = seq
	a.out = out
	err := f.status(cFillMMPrefixQueryRanges(a, f.msg))
	return int64(a.rows), err
}
