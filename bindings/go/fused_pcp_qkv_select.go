// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// FusedPCPQKVSelectArgs are the arguments of FusedPCPQKVSelect
// (cattn_fused_pcp_qkv_select_args_t). Elements are moved as opaque bytes of 1, 2, 4 or 8;
// host data of any element type can be given with BytesTensor.
type FusedPCPQKVSelectArgs struct {
	Q *Tensor // in: [Nq, H, Dq], this rank's queries; last dim stride 1
	K *Tensor // in: [>= W * QueryStartLoc[B], H, Dk], keys of all ranks
	V *Tensor // in: [>= W * QueryStartLoc[B], H, Dv], values of all ranks
	// QueryStartLoc: [B + 1] int32/int64, even, non-decreasing, QueryStartLoc[B] <= Nq.
	QueryStartLoc *Tensor
	// PCPWorldSize: W >= 1. 0 (the zero value) means 1, CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT's
	// W, here and in FusedPCPQKVSelectOf: C refuses 0, so it stands for the default.
	PCPWorldSize int64
	PCPRank      int64   // r in [0, W)
	QHead        *Tensor // out: [Nq / 2, H, Dq], compact
	KHead        *Tensor // out: [Nq / 2 * (r + 1), H, Dk], compact
	VHead        *Tensor // out: [Nq / 2 * (r + 1), H, Dv], compact
	QTail        *Tensor // out: [Nq / 2, H, Dq], compact
	KTail        *Tensor // out: [Nq / 2 * (2W - r), H, Dk], compact
	VTail        *Tensor // out: [Nq / 2 * (2W - r), H, Dv], compact
	Stream       Stream  // CUDA tensors only
}

// FusedPCPQKVSelect selects, for every request, the head and tail halves of this rank's
// queries and the K/V rows each half attends to, in one pass, as vLLM's Triton kernel in
// fused_pcp_qkv_select (cattn_fused_pcp_qkv_select). Output rows past QueryStartLoc[B] / 2
// are not written. On the host an odd request length, or an input shorter than the batch
// needs, is StatusInvalidArgument (vLLM drops a token or reads out of bounds); see cattn.h
// for the full list of checks.
//
// See docs/api/fused_pcp_qkv_select.md.
func FusedPCPQKVSelect(args FusedPCPQKVSelectArgs) error {
	f := newFrame("cattn_fused_pcp_qkv_select", "FusedPCPQKVSelect")
	defer f.free()
	names := [10]string{"args->q", "args->k", "args->v", "args->query_start_loc",
		"args->q_head", "args->k_head", "args->v_head", "args->q_tail", "args->k_tail",
		"args->v_tail"}
	ts := [10]*Tensor{args.Q, args.K, args.V, args.QueryStartLoc, args.QHead, args.KHead,
		args.VHead, args.QTail, args.KTail, args.VTail}
	var cs [10]cTensor
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return err
	}
	return f.fusedPCPQKVSelect(cs, nonZero(args.PCPWorldSize, 1), args.PCPRank, args.Stream)
}

// PCPQKV is this rank's queries and every rank's keys and values for FusedPCPQKVSelectOf:
// row-major [rows, Heads, dim] slices of one element type of 1, 2, 4 or 8 bytes (uint16 for
// bfloat16 or float16, float32, ...), Q of this rank's Nq rows and K, V of the W ranks' rows.
type PCPQKV[E any] struct {
	Q, K, V          []E
	Heads            int64 // H, the same in Q, K and V
	QDim, KDim, VDim int64 // Dq, Dk, Dv (they may differ, as in MLA)
}

// PCPQKVHalves is what FusedPCPQKVSelectOf returns: the head and tail halves of the queries
// and the K/V rows each half attends to, row-major [rows, Heads, dim].
type PCPQKVHalves[E any] struct {
	QHead, KHead, VHead []E // Nq / 2, Nq / 2 * (r + 1) and Nq / 2 * (r + 1) rows
	QTail, KTail, VTail []E // Nq / 2, Nq / 2 * (2W - r) and Nq / 2 * (2W - r) rows
	// (the counts cattn_fused_pcp_qkv_select_size gives; see docs/api/fused_pcp_qkv_select.md)
}

// FusedPCPQKVSelectOf selects, in one call on host slices, the halves FusedPCPQKVSelect
// writes, for the batch queryStartLoc ([B + 1], even entries) describes, on rank pcpRank of
// pcpWorldSize (0 means 1, as FusedPCPQKVSelectArgs.PCPWorldSize). The output rows are
// libcattn's (cattn_fused_pcp_qkv_select_size), which also refuses a W or r out of range.
// Rows past queryStartLoc[B] / 2 are left zero; outputs too large to allocate are
// StatusOutOfMemory. Since 1.1.
//
// See docs/api/fused_pcp_qkv_select.md.
func FusedPCPQKVSelectOf[E any, T Index](in PCPQKV[E], queryStartLoc []T, pcpWorldSize,
	pcpRank int64) (PCPQKVHalves[E], error) {
	f := newFrame("cattn_fused_pcp_qkv_select", "FusedPCPQKVSelectOf", "args->q", "in.Q",
		"args->k", "in.K", "args->v", "in.V", "args->query_start_loc", "queryStartLoc",
		"args->pcp_world_size", "pcpWorldSize", "args->pcp_rank", "pcpRank", "args", "result",
		// cattn_fused_pcp_qkv_select_size's parameters
		"pcp_world_size", "pcpWorldSize", "pcp_rank", "pcpRank", "num_q_rows", "in.Q's rows")
	defer f.free()
	var r PCPQKVHalves[E]
	size := int(unsafe.Sizeof(*new(E)))
	if size != 1 && size != 2 && size != 4 && size != 8 {
		return r, f.argError("args->q", "has an element size libcattn does not move",
			strconv.Itoa(size)+" bytes", "1, 2, 4 or 8")
	}
	dtype := DType{Code: CodeUInt, Bits: uint8(8 * size), Lanes: 1}
	rowsOf := func(arg string, data []E, dim int64) (int64, error) {
		row := in.Heads * dim
		if in.Heads < 1 || dim < 1 || int64(len(data))%row != 0 {
			return 0, f.argError(arg, "is not whole rows of Heads * dim elements",
				strconv.Itoa(len(data))+" elements", "a multiple of Heads * dim >= 1")
		}
		return int64(len(data)) / row, nil
	}
	nq, err := rowsOf("args->q", in.Q, in.QDim)
	if err != nil {
		return r, err
	}
	nk, err := rowsOf("args->k", in.K, in.KDim)
	if err != nil {
		return r, err
	}
	nv, err := rowsOf("args->v", in.V, in.VDim)
	if err != nil {
		return r, err
	}
	pcpWorldSize = nonZero(pcpWorldSize, 1)
	half, headRows, tailRows, err := f.fusedPCPQKVSelectSize(nq, pcpWorldSize, pcpRank)
	if err != nil {
		return r, err
	}
	view := func(data []E, rows, dim int64) *Tensor {
		return BytesTensor(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))),
			len(data)*size), dtype, rows, in.Heads, dim)
	}
	var outs [6]*Tensor
	var dst = [6]*[]E{&r.QHead, &r.KHead, &r.VHead, &r.QTail, &r.KTail, &r.VTail}
	rows := [6]int64{half, headRows, headRows, half, tailRows, tailRows}
	dims := [6]int64{in.QDim, in.KDim, in.VDim, in.QDim, in.KDim, in.VDim}
	for i := range outs {
		data, ok := makeRows[E](rows[i], in.Heads, dims[i])
		if !ok {
			return PCPQKVHalves[E]{}, f.goError(&Error{Code: StatusOutOfMemory,
				Message: f.fn + ": args->pcp_world_size makes the outputs too large to allocate (got " +
					strconv.FormatInt(pcpWorldSize, 10) + ", expected outputs Go can allocate)"})
		}
		*dst[i], outs[i] = data, view(data, rows[i], dims[i])
	}
	ts := [10]*Tensor{view(in.Q, nq, in.QDim), view(in.K, nk, in.KDim), view(in.V, nv, in.VDim),
		IndexTensor(queryStartLoc), outs[0], outs[1], outs[2], outs[3], outs[4], outs[5]}
	names := [10]string{"args->q", "args->k", "args->v", "args->query_start_loc",
		"args->q_head", "args->k_head", "args->v_head", "args->q_tail", "args->k_tail",
		"args->v_tail"}
	var cs [10]cTensor
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return PCPQKVHalves[E]{}, err
	}
	if err := f.fusedPCPQKVSelect(cs, pcpWorldSize, pcpRank, 0); err != nil {
		return PCPQKVHalves[E]{}, err
	}
	return r, nil
}

// makeRows allocates rows * heads * dim zeroed elements; false when the count overflows or
// is more than Go can allocate (make's panic, recovered).
func makeRows[E any](rows, heads, dim int64) (data []E, ok bool) {
	hi, n := bits.Mul64(uint64(rows), uint64(heads))
	hi2, n := bits.Mul64(n, uint64(dim))
	if rows < 0 || heads < 0 || dim < 0 || hi != 0 || hi2 != 0 || n > math.MaxInt {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			data, ok = nil, false
		}
	}()
	return make([]E, int(n)), true
}

// t holds q, k, v, query_start_loc, q_head, k_head, v_head, q_tail, k_tail, v_tail.
func (f *frame) fusedPCPQKVSelect(t [10]cTensor, world, rank int64, stream Stream) error {
	a := cArgs[C.cattn_fused_pcp_qkv_select_args_t](f)
	a.q, a.k, a.v, a.query_start_loc = t[0], t[1], t[2], t[3]
	a.pcp_world_size = C.int64_t(world)
	a.pcp_rank = C.int64_t(rank)
	a.q_head, a.k_head, a.v_head = t[4], t[5], t[6]
	a.q_tail, a.k_tail, a.v_tail = t[7], t[8], t[9]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cFusedPCPQKVSelect(a, f.msg))
}

// fusedPCPQKVSelectSize returns the select's output rows for nq query rows at world size w and
// rank r (cattn_fused_pcp_qkv_select_size): q_head and q_tail, k_head and v_head, k_tail and
// v_tail.
func (f *frame) fusedPCPQKVSelectSize(nq, w, r int64) (qRows, kvHeadRows, kvTailRows int64, err error) {
	var q, h, t C.int64_t
	err = f.status(cFusedPCPQKVSelectSize(C.int64_t(nq), C.int64_t(w), C.int64_t(r), &q, &h, &t,
		f.msg))
	return int64(q), int64(h), int64(t), err
}
