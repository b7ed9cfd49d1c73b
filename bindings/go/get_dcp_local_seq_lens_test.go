// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type dcpCase struct {
	Name       string  `json:"name"`
	SeqLens    []int64 `json:"seq_lens"`
	DCPSize    int64   `json:"dcp_size"`
	DCPRank    int64   `json:"dcp_rank"`
	Interleave int64   `json:"interleave"`
	Shape      []int64 `json:"shape"`
	Out        []int64 `json:"out"`
}

func TestGetDCPLocalSeqLensVectors(t *testing.T) {
	cases := loadCases[dcpCase](t, "get_dcp_local_seq_lens")
	for _, c := range cases {
		shapes := [][]int64{c.Shape}
		if c.DCPRank == DCPAllRanks && c.DCPSize == 1 {
			shapes = append(shapes, []int64{c.Shape[0], 1})
		}
		for _, shape := range shapes {
			for _, inT := range indexTypes {
				for _, outT := range indexTypes {
					for _, step := range []int64{1, 3} {
						name := fmt.Sprintf("%s/%v/%s-%s/step%d", c.Name, shape, dtypeName(inT),
							dtypeName(outT), step)
						seq := ibufOf(inT, c.SeqLens, step, step-1)
						out := newIBuf(outT, shape, step, 2*(step-1))
						err := GetDCPLocalSeqLens(DCPLocalSeqLensArgs{
							SeqLens: seq.t, DCPSize: c.DCPSize, Ranks: DCPRank(c.DCPRank),
							InterleaveSize: c.Interleave, Out: out.t,
						})
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						wantEqual(t, name, out.values(), c.Out)
					}
				}
			}
		}
	}
}

func TestGetDCPLocalSeqLensInPlace(t *testing.T) {
	data := []int32{1, 2, 128, 129, 256, 257}
	seq := Int32Tensor(data)
	mustOK(t, GetDCPLocalSeqLens(DCPLocalSeqLensArgs{
		SeqLens: seq, DCPSize: 4, Ranks: DCPRank(1), InterleaveSize: 128, Out: seq,
	}))
	wantEqual(t, "in place", data, []int32{0, 0, 0, 1, 128, 128})
}

func TestGetDCPLocalSeqLensErrors(t *testing.T) {
	const fn = "cattn_get_dcp_local_seq_lens"
	seq := Int64Tensor([]int64{3, 9, 17})
	run := func(args DCPLocalSeqLensArgs) error {
		out := newIBuf(Int32, []int64{3, 2}, 1, 0)
		if args.Out == nil {
			args.Out = out.t
		}
		if args.SeqLens == nil {
			args.SeqLens = seq
		}
		before := out.raw()
		err := GetDCPLocalSeqLens(args)
		wantEqual(t, "a failed call wrote nothing", out.raw(), before)
		return err
	}
	err := run(DCPLocalSeqLensArgs{DCPSize: -1, Ranks: AllDCPRanks, InterleaveSize: 1})
	wantError(t, err, StatusInvalidArgument, fn, "args->dcp_size")
	err = run(DCPLocalSeqLensArgs{DCPSize: 2, Ranks: DCPRank(2), InterleaveSize: 1})
	wantError(t, err, StatusInvalidArgument, fn, "args->dcp_rank")
	err = run(DCPLocalSeqLensArgs{DCPSize: 2, Ranks: AllDCPRanks, InterleaveSize: -1})
	wantError(t, err, StatusInvalidArgument, fn, "args->dcp_kv_cache_interleave_size")
	err = run(DCPLocalSeqLensArgs{SeqLens: Int64Tensor([]int64{3, -1, 4}), DCPSize: 2,
		Ranks: AllDCPRanks, InterleaveSize: 1})
	wantError(t, err, StatusInvalidArgument, fn, "args->seq_lens")
	err = run(DCPLocalSeqLensArgs{DCPSize: 2, Ranks: AllDCPRanks, InterleaveSize: 1,
		Out: Int32Tensor(make([]int32, 4), 2, 2)})
	wantError(t, err, StatusInsufficientSize, fn, "args->out")
	err = run(DCPLocalSeqLensArgs{DCPSize: 2, Ranks: AllDCPRanks, InterleaveSize: 1,
		Out: Float32Tensor(make([]float32, 6), 3, 2)})
	wantError(t, err, StatusInvalidArgument, fn, "args->out")
	// A view whose zero stride would write two results to one element.
	err = run(DCPLocalSeqLensArgs{DCPSize: 2, Ranks: AllDCPRanks, InterleaveSize: 1,
		Out: Int32Tensor(make([]int32, 6), 3, 2).WithStrides(2, 0)})
	wantError(t, err, StatusInvalidArgument, fn, "args->out")
}

type dcpNDCase struct {
	Name       string  `json:"name"`
	SeqLens    []int64 `json:"seq_lens"`
	SeqShape   []int64 `json:"seq_shape"`
	DCPSize    int64   `json:"dcp_size"`
	DCPRank    int64   `json:"dcp_rank"`
	Interleave int64   `json:"interleave"`
	Shape      []int64 `json:"shape"`
	Out        []int64 `json:"out"`
}

func TestGetDCPLocalSeqLensNDVectors(t *testing.T) {
	cases := loadCases[dcpNDCase](t, "get_dcp_local_seq_lens_nd")
	for _, c := range cases {
		for _, inT := range indexTypes {
			for _, outT := range indexTypes {
				for _, step := range []int64{1, 2} {
					name := fmt.Sprintf("%s/%s-%s/step%d", c.Name, dtypeName(inT), dtypeName(outT), step)
					seq := newIBuf(inT, c.SeqShape, step, step-1)
					if len(c.SeqShape) == 0 {
						seq.t.Shape = []int64{} // 0-D (a slice view with no shape is 1-D)
					}
					for i, v := range c.SeqLens {
						seq.set(int64(i), v)
					}
					out := newIBuf(outT, c.Shape, step, 2*(step-1))
					if len(c.Shape) == 0 {
						out.t.Shape = []int64{}
					}
					mustOK(t, GetDCPLocalSeqLens(DCPLocalSeqLensArgs{
						SeqLens: seq.t, DCPSize: c.DCPSize, Ranks: DCPRank(c.DCPRank),
						InterleaveSize: c.Interleave, Out: out.t, PreserveShape: true,
					}))
					wantEqual(t, name, out.values(), c.Out)
				}
			}
		}
	}
}

func TestGetDCPLocalSeqLensNDKeepsRankAxis(t *testing.T) {
	seq := Int64Tensor([]int64{4, 9, 0})
	// The 1.0 contract squeezes all ranks of a group of one to [B]; PreserveShape refuses that.
	err := GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: seq, DCPSize: 1, Ranks: AllDCPRanks,
		InterleaveSize: 1, Out: Int64Tensor(make([]int64, 3)), PreserveShape: true})
	wantError(t, err, StatusInvalidArgument, "cattn_get_dcp_local_seq_lens", "args->out has the wrong ndim")
	out := make([]int64, 3)
	mustOK(t, GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: seq, DCPSize: 1, Ranks: AllDCPRanks,
		InterleaveSize: 1, Out: Int64Tensor(out, 3, 1), PreserveShape: true}))
	wantEqual(t, "kept", out, []int64{4, 9, 0})
}

func TestDCPLocalSeqLensHelpersVectors(t *testing.T) {
	cases := loadCases[dcpCase](t, "get_dcp_local_seq_lens")
	for _, c := range cases {
		if c.DCPRank == DCPAllRanks {
			rows, err := DCPLocalSeqLensAllRanks(c.SeqLens, c.DCPSize, c.Interleave)
			mustOK(t, err)
			wantEqual(t, c.Name+" all ranks", flatten(rows), c.Out)
			if len(rows) != len(c.SeqLens) || (len(rows) > 0 && int64(len(rows[0])) != c.DCPSize) {
				t.Fatalf("%s: %d rows of %d", c.Name, len(rows), len(rows[0]))
			}
			rows32, err := DCPLocalSeqLensAllRanks(asIndex[int32](c.SeqLens), c.DCPSize, c.Interleave)
			mustOK(t, err)
			wantEqual(t, c.Name+" all ranks int32", flatten(rowsInt64(rows32)), c.Out)
			continue
		}
		got, err := DCPLocalSeqLens(c.SeqLens, c.DCPSize, c.DCPRank, c.Interleave)
		mustOK(t, err)
		wantEqual(t, c.Name, got, c.Out)
		got32, err := DCPLocalSeqLens(asIndex[int32](c.SeqLens), c.DCPSize, c.DCPRank, c.Interleave)
		mustOK(t, err)
		wantEqual(t, c.Name+" int32", asInt64(got32), c.Out)
	}
	_, err := DCPLocalSeqLens([]int64{3}, 2, -1, 1)
	wantError(t, err, StatusInvalidArgument, "cattn.DCPLocalSeqLens: rank is not one rank")
	_, err = DCPLocalSeqLens([]int64{3}, 2, 2, 1)
	wantError(t, err, StatusInvalidArgument, "cattn.DCPLocalSeqLens: rank is out of range")
	// The group is checked before the [B, dcpSize] result is allocated.
	_, err = DCPLocalSeqLensAllRanks(make([]int64, 1<<20), 1<<40, 1)
	wantError(t, err, StatusInvalidArgument, "cattn.DCPLocalSeqLensAllRanks: ", "dcpSize")
	_, err = DCPLocalSeqLensAllRanks([]int64{-1}, 2, 1)
	wantError(t, err, StatusInvalidArgument, "cattn.DCPLocalSeqLensAllRanks: seqLens")
}
