// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"
)

type fusedCase struct {
	Name          string  `json:"name"`
	QueryStartLoc []int64 `json:"query_start_loc"`
	World         int64   `json:"pcp_world_size"`
	Rank          int64   `json:"pcp_rank"`
	QShape        []int64 `json:"q_shape"`
	KShape        []int64 `json:"k_shape"`
	VShape        []int64 `json:"v_shape"`
	QHead         []int64 `json:"q_head"`
	KHead         []int64 `json:"k_head"`
	VHead         []int64 `json:"v_head"`
	QTail         []int64 `json:"q_tail"`
	KTail         []int64 `json:"k_tail"`
	VTail         []int64 `json:"v_tail"`
}

const poisonByte = 0xA5

// pattern is the content of element idx (its compact flat index) of input `salt`.
func pattern(salt int, idx int64) uint64 {
	x := uint64(idx)*0x9E3779B97F4A7C15 + uint64(salt)
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	return x ^ (x >> 29)
}

func widthType(bytes int) DType {
	switch bytes {
	case 1:
		return UInt8
	case 2:
		return BFloat16
	case 4:
		return Float32
	}
	return Float64
}

// bytes3 is an [n, h, d] tensor of opaque elements over poisoned bytes, with optional padding
// between rows and heads (in elements) and a leading offset.
type bytes3 struct {
	t           *Tensor
	buf         []byte
	n, h, d, e  int64
	s0, s1, off int64
}

func newBytes3(n, h, d int64, e int, rowPad, headPad, off int64) *bytes3 {
	b := &bytes3{n: n, h: h, d: d, e: int64(e), off: off}
	b.s1 = d + headPad
	b.s0 = h*b.s1 + rowPad
	span := off
	if n > 0 && h > 0 && d > 0 {
		span += (n-1)*b.s0 + (h-1)*b.s1 + d
	}
	b.buf = bytes.Repeat([]byte{poisonByte}, int(span*b.e)+8)
	b.t = BytesTensor(b.buf, widthType(e), n, h, d).WithByteOffset(uint64(off * b.e))
	if rowPad != 0 || headPad != 0 {
		b.t.WithStrides(b.s0, b.s1, 1)
	}
	return b
}

func (b *bytes3) at(i, j, l int64) []byte {
	p := (b.off + i*b.s0 + j*b.s1 + l) * b.e
	return b.buf[p : p+b.e]
}

func (b *bytes3) fill(salt int) {
	var word [8]byte
	for i := int64(0); i < b.n; i++ {
		for j := int64(0); j < b.h; j++ {
			for l := int64(0); l < b.d; l++ {
				binary.LittleEndian.PutUint64(word[:], pattern(salt, (i*b.h+j)*b.d+l))
				copy(b.at(i, j, l), word[:b.e])
			}
		}
	}
}

// expectSources checks a compact output against the emulation's source indices (-1: never
// written, still poison).
func (b *bytes3) expectSources(t *testing.T, what string, salt int, src []int64) {
	t.Helper()
	if int64(len(src)) != b.n*b.h*b.d {
		t.Fatalf("%s: %d expected elements for shape [%d %d %d]", what, len(src), b.n, b.h, b.d)
	}
	var word [8]byte
	for p, s := range src {
		if s < 0 {
			for i := range word {
				word[i] = poisonByte
			}
		} else {
			binary.LittleEndian.PutUint64(word[:], pattern(salt, s))
		}
		got := b.buf[int64(p)*b.e : int64(p+1)*b.e]
		if !bytes.Equal(got, word[:b.e]) {
			t.Fatalf("%s: element %d (source %d) = %x, want %x", what, p, s, got, word[:b.e])
		}
	}
}

type fusedProblem struct {
	qsl         *ibuf
	q, k, v     *bytes3
	outs        [6]*bytes3 // q_head, k_head, v_head, q_tail, k_tail, v_tail
	world, rank int64
}

func newFusedProblem(qsl []int64, qslType DType, world, rank int64, qs, ks, vs []int64,
	widths [3]int, rowPad, headPad, off int64) *fusedProblem {
	p := &fusedProblem{world: world, rank: rank}
	p.qsl = ibufOf(qslType, qsl, 1, 0)
	p.q = newBytes3(qs[0], qs[1], qs[2], widths[0], rowPad, headPad, off)
	p.k = newBytes3(ks[0], ks[1], ks[2], widths[1], rowPad, headPad, off)
	p.v = newBytes3(vs[0], vs[1], vs[2], widths[2], rowPad, headPad, off)
	p.q.fill(1)
	p.k.fill(2)
	p.v.fill(3)
	half := qs[0] / 2
	p.outs = [6]*bytes3{
		newBytes3(half, qs[1], qs[2], widths[0], 0, 0, 0),
		newBytes3(half*(rank+1), ks[1], ks[2], widths[1], 0, 0, 0),
		newBytes3(half*(rank+1), vs[1], vs[2], widths[2], 0, 0, 0),
		newBytes3(half, qs[1], qs[2], widths[0], 0, 0, 0),
		newBytes3(half*(2*world-rank), ks[1], ks[2], widths[1], 0, 0, 0),
		newBytes3(half*(2*world-rank), vs[1], vs[2], widths[2], 0, 0, 0),
	}
	return p
}

func (p *fusedProblem) args() FusedPCPQKVSelectArgs {
	return FusedPCPQKVSelectArgs{
		Q: p.q.t, K: p.k.t, V: p.v.t, QueryStartLoc: p.qsl.t,
		PCPWorldSize: p.world, PCPRank: p.rank,
		QHead: p.outs[0].t, KHead: p.outs[1].t, VHead: p.outs[2].t,
		QTail: p.outs[3].t, KTail: p.outs[4].t, VTail: p.outs[5].t,
	}
}

func (p *fusedProblem) outputBytes() [][]byte {
	var out [][]byte
	for _, o := range p.outs {
		out = append(out, append([]byte(nil), o.buf...))
	}
	return out
}

func TestFusedPCPQKVSelectVectors(t *testing.T) {
	cases := loadCases[fusedCase](t, "fused_pcp_qkv_select")
	widths := [][3]int{{1, 1, 1}, {2, 2, 2}, {4, 4, 4}, {8, 8, 8}, {2, 1, 4}, {8, 2, 1}}
	layouts := [][3]int64{{0, 0, 0}, {3, 0, 1}, {5, 2, 3}} // row pad, head pad, offset
	for _, c := range cases {
		for _, w := range widths {
			for li, l := range layouts {
				name := fmt.Sprintf("%s/widths%v/layout%d", c.Name, w, li)
				qslType := Int32
				if li == 2 {
					qslType = Int64
				}
				p := newFusedProblem(c.QueryStartLoc, qslType, c.World, c.Rank, c.QShape,
					c.KShape, c.VShape, w, l[0], l[1], l[2])
				if err := FusedPCPQKVSelect(p.args()); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				p.outs[0].expectSources(t, name+" q_head", 1, c.QHead)
				p.outs[1].expectSources(t, name+" k_head", 2, c.KHead)
				p.outs[2].expectSources(t, name+" v_head", 3, c.VHead)
				p.outs[3].expectSources(t, name+" q_tail", 1, c.QTail)
				p.outs[4].expectSources(t, name+" k_tail", 2, c.KTail)
				p.outs[5].expectSources(t, name+" v_tail", 3, c.VTail)
			}
		}
	}
}

func TestFusedPCPQKVSelectErrors(t *testing.T) {
	const fn = "cattn_fused_pcp_qkv_select"
	build := func(qsl []int64, world, rank int64) *fusedProblem {
		nq := int64(20)
		return newFusedProblem(qsl, Int32, world, rank, []int64{nq, 2, 4},
			[]int64{world * nq, 2, 4}, []int64{world * nq, 2, 3}, [3]int{2, 2, 2}, 0, 0, 0)
	}
	check := func(p *fusedProblem, args FusedPCPQKVSelectArgs, code Status, needles ...string) {
		t.Helper()
		before := p.outputBytes()
		wantError(t, FusedPCPQKVSelect(args), code, append([]string{fn}, needles...)...)
		wantEqual(t, "a failed call wrote nothing", p.outputBytes(), before)
	}
	p := build([]int64{0, 8, 20}, 2, 1)
	mustOK(t, FusedPCPQKVSelect(p.args()))

	p = build([]int64{0, 7, 20}, 2, 0)
	check(p, p.args(), StatusInvalidArgument, "args->query_start_loc")
	p = build([]int64{0, 8, 20}, 2, 2)
	check(p, p.args(), StatusInvalidArgument, "args->pcp_rank")
	p = build([]int64{0, 8, 20}, 1, 0)
	a := p.args()
	a.PCPWorldSize = -1 // 0 is the default, 1
	check(p, a, StatusInvalidArgument, "args->pcp_world_size")
	p = build([]int64{0, 8, 24}, 1, 0)
	check(p, p.args(), StatusInvalidArgument, "args->query_start_loc")
	p = build([]int64{0, 8, 20}, 2, 1)
	a = p.args()
	a.KTail = BytesTensor(make([]byte, 2*10*2*4*2), BFloat16, 20, 2, 4)
	check(p, a, StatusInsufficientSize, "args->k_tail")
	a = p.args()
	a.V = nil
	check(p, a, StatusInvalidArgument, "args->v")
	a = p.args()
	a.QHead = BytesTensor(make([]byte, 10*2*4*4), Float32, 10, 2, 4)
	check(p, a, StatusInvalidArgument, "args->q_head")
	// Element widths other than 1, 2, 4, 8 bytes.
	p = build([]int64{0, 8, 20}, 1, 0)
	a = p.args()
	odd := DType{CodeUInt, 24, 1}
	a.Q = BytesTensor(make([]byte, 20*2*4*3), odd, 20, 2, 4)
	a.QHead = BytesTensor(make([]byte, 10*2*4*3), odd, 10, 2, 4)
	a.QTail = BytesTensor(make([]byte, 10*2*4*3), odd, 10, 2, 4)
	check(p, a, StatusNotSupported)
}

// The one-call form gives what the tensor form writes, for elements of 2 and 4 bytes.
func TestFusedPCPQKVSelectOf(t *testing.T) {
	qsl := []int64{0, 8, 20}
	const world, rank, heads, dq, dk, dv = 2, 1, 2, 4, 3, 5
	nq := int64(20)
	fill := func(n int64, seed uint16) []uint16 {
		v := make([]uint16, n)
		for i := range v {
			v[i] = seed + uint16(i)
		}
		return v
	}
	in := PCPQKV[uint16]{Q: fill(nq*heads*dq, 1), K: fill(world*nq*heads*dk, 1000),
		V: fill(world*nq*heads*dv, 20000), Heads: heads, QDim: dq, KDim: dk, VDim: dv}
	got, err := FusedPCPQKVSelectOf(in, qsl, world, rank)
	mustOK(t, err)
	// The tensor form on the same data.
	half := nq / 2
	want := PCPQKVHalves[uint16]{QHead: make([]uint16, half*heads*dq),
		KHead: make([]uint16, half*(rank+1)*heads*dk), VHead: make([]uint16, half*(rank+1)*heads*dv),
		QTail: make([]uint16, half*heads*dq), KTail: make([]uint16, half*(2*world-rank)*heads*dk),
		VTail: make([]uint16, half*(2*world-rank)*heads*dv)}
	u16 := func(v []uint16, rows, dim int64) *Tensor {
		return BytesTensor(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 2*len(v)),
			UInt16, rows, heads, dim)
	}
	mustOK(t, FusedPCPQKVSelect(FusedPCPQKVSelectArgs{Q: u16(in.Q, nq, dq),
		K: u16(in.K, world*nq, dk), V: u16(in.V, world*nq, dv), QueryStartLoc: Int64Tensor(qsl),
		PCPWorldSize: world, PCPRank: rank,
		QHead: u16(want.QHead, half, dq), KHead: u16(want.KHead, half*(rank+1), dk),
		VHead: u16(want.VHead, half*(rank+1), dv), QTail: u16(want.QTail, half, dq),
		KTail: u16(want.KTail, half*(2*world-rank), dk), VTail: u16(want.VTail, half*(2*world-rank), dv)}))
	wantEqual(t, "halves", got, want)

	f32 := PCPQKV[float32]{Q: make([]float32, 4*1*2), K: make([]float32, 4), V: make([]float32, 4),
		Heads: 1, QDim: 2, KDim: 1, VDim: 1}
	h, err := FusedPCPQKVSelectOf(f32, []int32{0, 4}, 1, 0)
	mustOK(t, err)
	wantEqual(t, "float32 sizes", [6]int{len(h.QHead), len(h.KHead), len(h.VHead), len(h.QTail),
		len(h.KTail), len(h.VTail)}, [6]int{4, 2, 2, 4, 4, 4})

	// PCPWorldSize 0 means 1 in both forms.
	h0, err := FusedPCPQKVSelectOf(f32, []int32{0, 4}, 0, 0)
	mustOK(t, err)
	wantEqual(t, "W 0 is W 1", h0, h)
	// The rows are libcattn's: counts past int64 are its refusal, past what Go can allocate
	// StatusOutOfMemory.
	_, err = FusedPCPQKVSelectOf(f32, []int32{0, 4}, 1<<61, 0)
	wantError(t, err, StatusInvalidArgument, "cattn.FusedPCPQKVSelectOf: ")
	_, err = FusedPCPQKVSelectOf(f32, []int32{0, 4}, 1<<50, 0)
	wantError(t, err, StatusOutOfMemory,
		"cattn.FusedPCPQKVSelectOf: pcpWorldSize makes the outputs too large to allocate")
	_, err = FusedPCPQKVSelectOf(f32, []int32{0, 4}, 1, 1)
	wantError(t, err, StatusInvalidArgument, "cattn.FusedPCPQKVSelectOf: pcpRank ")
	_, err = FusedPCPQKVSelectOf(PCPQKV[[3]byte]{Heads: 1, QDim: 1, KDim: 1, VDim: 1}, []int32{0}, 1, 0)
	wantError(t, err, StatusInvalidArgument, "cattn.FusedPCPQKVSelectOf: in.Q has an element size")
	f32.QDim = 3
	_, err = FusedPCPQKVSelectOf(f32, []int32{0, 4}, 1, 0)
	wantError(t, err, StatusInvalidArgument, "cattn.FusedPCPQKVSelectOf: in.Q is not whole rows")
}
