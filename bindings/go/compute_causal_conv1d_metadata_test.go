// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type conv1dCase struct {
	Name                    string  `json:"name"`
	QueryStartLocCPU        []int64 `json:"query_start_loc_cpu"`
	BlockM                  int64   `json:"block_m"`
	Nums                    []int64 `json:"nums"`
	Tot                     int64   `json:"tot"`
	MList                   []int64 `json:"mlist"`
	OffsetList              []int64 `json:"offsetlist"`
	Capacity                int64   `json:"capacity"`
	BatchPtrHead            []int64 `json:"batch_ptr_head"`
	BatchPtrFill            int64   `json:"batch_ptr_fill"`
	TokenChunkOffsetPtrHead []int64 `json:"token_chunk_offset_ptr_head"`
	TokenChunkOffsetPtrFill int64   `json:"token_chunk_offset_ptr_fill"`
}

func padded(head []int64, fill, n int64) []int64 {
	out := append([]int64{}, head...)
	for int64(len(out)) < n {
		out = append(out, fill)
	}
	return out
}

func TestComputeCausalConv1dMetadataVectors(t *testing.T) {
	cases := loadCases[conv1dCase](t, "compute_causal_conv1d_metadata")
	for _, c := range cases {
		b := int64(len(c.QueryStartLocCPU)) - 1
		if b < 0 {
			b = 0 // the empty tensor is the empty batch
		}
		for ci, combo := range [][2]DType{{Int32, Int32}, {Int64, Int64}, {Int32, Int64}} {
			step := int64(1 + ci%2*2)
			name := fmt.Sprintf("%s/%s-%s/step%d", c.Name, dtypeName(combo[0]), dtypeName(combo[1]), step)
			qsl := ibufOf(combo[0], c.QueryStartLocCPU, step, 1)
			tot, capacity, err := ComputeCausalConv1dMetadataSize(qsl.t, c.BlockM)
			mustOK(t, err)
			wantEqual(t, name+" tot", tot, c.Tot)
			wantEqual(t, name+" capacity", capacity, c.Capacity)

			nums := newIBuf(combo[1], []int64{b}, step, 0)
			mlist := newIBuf(combo[1], []int64{tot}, step, 1)
			offsets := newIBuf(combo[1], []int64{tot}, step, 2)
			batchPtr := newIBuf(combo[1], []int64{capacity}, step, 0)
			chunkPtr := newIBuf(combo[1], []int64{capacity}, step, 0)
			got, err := ComputeCausalConv1dMetadata(CausalConv1dMetadataArgs{
				QueryStartLocCPU: qsl.t, BlockM: c.BlockM, Nums: nums.t, MList: mlist.t,
				OffsetList: offsets.t, BatchPtr: batchPtr.t, TokenChunkOffsetPtr: chunkPtr.t,
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			wantEqual(t, name+" tot", got, c.Tot)
			wantEqual(t, name+" nums", nums.values(), c.Nums)
			wantEqual(t, name+" mlist", mlist.values(), c.MList)
			wantEqual(t, name+" offsetlist", offsets.values(), c.OffsetList)
			wantEqual(t, name+" batch_ptr", batchPtr.values(),
				padded(c.BatchPtrHead, c.BatchPtrFill, capacity))
			wantEqual(t, name+" token_chunk_offset_ptr", chunkPtr.values(),
				padded(c.TokenChunkOffsetPtrHead, c.TokenChunkOffsetPtrFill, capacity))

			// Every output is optional: tot alone.
			got, err = ComputeCausalConv1dMetadata(CausalConv1dMetadataArgs{
				QueryStartLocCPU: qsl.t, BlockM: c.BlockM})
			mustOK(t, err)
			wantEqual(t, name+" tot without outputs", got, c.Tot)
		}
	}
}

func TestComputeCausalConv1dMetadataErrors(t *testing.T) {
	const fn = "cattn_compute_causal_conv1d_metadata"
	qsl := Int64Tensor([]int64{0, 10, 16, 17})
	outs := func() []*ibuf {
		return []*ibuf{newIBuf(Int32, []int64{3}, 1, 0), newIBuf(Int32, []int64{4}, 1, 0),
			newIBuf(Int32, []int64{4}, 1, 0), newIBuf(Int32, []int64{8}, 1, 0),
			newIBuf(Int32, []int64{8}, 1, 0)}
	}
	run := func(q *Tensor, blockM int64, o []*ibuf, code Status, needles ...string) {
		t.Helper()
		var before [][]int64
		for _, b := range o {
			before = append(before, b.raw())
		}
		_, err := ComputeCausalConv1dMetadata(CausalConv1dMetadataArgs{
			QueryStartLocCPU: q, BlockM: blockM, Nums: o[0].t, MList: o[1].t,
			OffsetList: o[2].t, BatchPtr: o[3].t, TokenChunkOffsetPtr: o[4].t})
		wantError(t, err, code, append([]string{fn}, needles...)...)
		for i, b := range o {
			wantEqual(t, "a failed call wrote nothing", b.raw(), before[i])
		}
	}
	run(qsl, -1, outs(), StatusInvalidArgument, "block_m")
	run(Int64Tensor([]int64{0, 10, 9}), 8, outs(), StatusInvalidArgument, "decreases")
	run(Float32Tensor([]float32{0, 10, 16, 17}), 8, outs(), StatusInvalidArgument, "dtype")
	o := outs()
	o[1] = newIBuf(Int32, []int64{3}, 1, 0)
	run(qsl, 8, o, StatusInsufficientSize, "args->mlist")
	o = outs()
	o[0] = newIBuf(Int32, []int64{2}, 1, 0)
	run(qsl, 8, o, StatusInsufficientSize, "args->nums")
	o = outs()
	o[4] = newIBuf(Int64, []int64{3}, 1, 0)
	run(qsl, 8, o, StatusInsufficientSize, "args->token_chunk_offset_ptr")

	_, _, err := ComputeCausalConv1dMetadataSize(qsl, -1)
	wantError(t, err, StatusInvalidArgument, "cattn_compute_causal_conv1d_metadata_size", "block_m")
	_, _, err = ComputeCausalConv1dMetadataSize(nil, 8)
	wantError(t, err, StatusInvalidArgument, "cattn_compute_causal_conv1d_metadata_size",
		"query_start_loc_cpu")
}

// The device call is for device tensors only; its host checks run without a GPU.
func TestComputeCausalConv1dMetadataCapturableErrors(t *testing.T) {
	const fn = "cattn_compute_causal_conv1d_metadata_capturable"
	// Host tensors are refused (the host has ComputeCausalConv1dMetadata), writing nothing.
	qsl := Int64Tensor([]int64{0, 10, 16, 17})
	outs := []*ibuf{newIBuf(Int32, []int64{3}, 1, 0), newIBuf(Int32, []int64{7}, 1, 0),
		newIBuf(Int32, []int64{7}, 1, 0), newIBuf(Int64, []int64{7}, 1, 0),
		newIBuf(Int64, []int64{7}, 2, 1), newIBuf(Int32, []int64{1}, 1, 0)}
	args := CausalConv1dMetadataCapturableArgs{QueryStartLoc: qsl, BlockM: 8, Nums: outs[0].t,
		MList: outs[1].t, OffsetList: outs[2].t, BatchPtr: outs[3].t,
		TokenChunkOffsetPtr: outs[4].t, Tot: outs[5].t}
	var before [][]int64
	for _, b := range outs {
		before = append(before, b.raw())
	}
	wantError(t, ComputeCausalConv1dMetadataCapturable(args), StatusInvalidArgument, fn,
		"args->query_start_loc is not device memory")
	wantError(t, ComputeCausalConv1dMetadataCapturable(CausalConv1dMetadataCapturableArgs{
		QueryStartLoc: qsl, BlockM: 8}), StatusInvalidArgument, fn, "is not device memory")
	for i, b := range outs {
		wantEqual(t, "a failed call wrote nothing", b.raw(), before[i])
	}
	bad := args
	bad.BlockM = -1
	wantError(t, ComputeCausalConv1dMetadataCapturable(bad), StatusInvalidArgument, fn,
		"args->block_m", "got -1")
	bad = args
	bad.QueryStartLoc = nil
	wantError(t, ComputeCausalConv1dMetadataCapturable(bad), StatusInvalidArgument, fn,
		"args->query_start_loc")
	bad = args
	bad.Tot = Int32Tensor(make([]int32, 2))
	wantError(t, ComputeCausalConv1dMetadataCapturable(bad), StatusInvalidArgument, fn, "args->tot")
	bad = args
	bad.Nums = Int32Tensor(make([]int32, 4))
	wantError(t, ComputeCausalConv1dMetadataCapturable(bad), StatusInvalidArgument, fn, "args->nums")
	bad = args
	bad.MList = Float32Tensor(make([]float32, 7))
	wantError(t, ComputeCausalConv1dMetadataCapturable(bad), StatusInvalidArgument, fn,
		"args->mlist", "dtype")
}

// Valid CUDA tensors reach the device path, which a CPU-only libcattn (or a machine without a
// usable GPU) refuses after every other check.
func TestComputeCausalConv1dMetadataCapturableNotSupported(t *testing.T) {
	skipWithGPU(t)
	const fn = "cattn_compute_causal_conv1d_metadata_capturable"
	var dev fakeDevice
	args := CausalConv1dMetadataCapturableArgs{QueryStartLoc: dev.tensor(Int32, 4), BlockM: 8,
		Nums: dev.tensor(Int32, 3), MList: dev.tensor(Int32, 7), OffsetList: dev.tensor(Int32, 7),
		BatchPtr: dev.tensor(Int64, 7), TokenChunkOffsetPtr: dev.tensor(Int64, 7),
		Tot: dev.tensor(Int64, 1), Stream: Stream(0x1234)}
	wantError(t, ComputeCausalConv1dMetadataCapturable(args), StatusNotSupported, fn)
	// Every output is optional.
	wantError(t, ComputeCausalConv1dMetadataCapturable(CausalConv1dMetadataCapturableArgs{
		QueryStartLoc: args.QueryStartLoc, BlockM: 8}), StatusNotSupported, fn)
	mixed := args
	mixed.Tot = Int64Tensor(make([]int64, 1))
	wantError(t, ComputeCausalConv1dMetadataCapturable(mixed), StatusInvalidArgument, fn,
		"args->tot is on a different device")
	overlap := args
	overlap.MList = args.Nums
	wantError(t, ComputeCausalConv1dMetadataCapturable(overlap), StatusInvalidArgument, fn,
		"args->mlist overlaps another output")
	overlap = args
	overlap.Nums = UnsafeDeviceTensor(args.QueryStartLoc.addr+4, CUDA(0), Int32, 3)
	wantError(t, ComputeCausalConv1dMetadataCapturable(overlap), StatusInvalidArgument, fn,
		"args->nums overlaps an input", "args->query_start_loc")
}

func TestCausalConv1dMetadataHelperVectors(t *testing.T) {
	for _, c := range loadCases[conv1dCase](t, "compute_causal_conv1d_metadata") {
		got, err := CausalConv1dMetadata(c.QueryStartLocCPU, c.BlockM)
		mustOK(t, err)
		if c.Nums == nil {
			c.Nums = []int64{}
		}
		if c.MList == nil {
			c.MList, c.OffsetList = []int64{}, []int64{}
		}
		wantEqual(t, c.Name+" tot", got.Tot, c.Tot)
		wantEqual(t, c.Name+" nums", got.Nums, c.Nums)
		wantEqual(t, c.Name+" mlist", got.MList, c.MList)
		wantEqual(t, c.Name+" offsetlist", got.OffsetList, c.OffsetList)
		wantEqual(t, c.Name+" batch_ptr", got.BatchPtr, padded(c.BatchPtrHead, c.BatchPtrFill, c.Capacity))
		wantEqual(t, c.Name+" token_chunk_offset_ptr", got.TokenChunkOffsetPtr,
			padded(c.TokenChunkOffsetPtrHead, c.TokenChunkOffsetPtrFill, c.Capacity))
		got32, err := CausalConv1dMetadata(asIndex[int32](c.QueryStartLocCPU), c.BlockM)
		mustOK(t, err)
		wantEqual(t, c.Name+" int32 mlist", asInt64(got32.MList), c.MList)
	}
	_, err := CausalConv1dMetadata([]int64{0, 8}, 0)
	wantError(t, err, StatusInvalidArgument, "cattn.CausalConv1dMetadata: blockM ")
	_, err = CausalConv1dMetadata([]int64{0, 8, 7}, 8)
	wantError(t, err, StatusInvalidArgument, "cattn.CausalConv1dMetadata: queryStartLoc ")
}
