// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type naiveQueryLensCase struct {
	Name          string  `json:"name"`
	DType         string  `json:"dtype"`
	QueryStartLoc []int64 `json:"query_start_loc"`
	SeqLens       []int64 `json:"seq_lens"`
	Expect        struct {
		NaiveQueryLens           []int64 `json:"naive_query_lens"`
		ComputeNumComputedTokens []int64 `json:"compute_num_computed_tokens"`
	} `json:"expect"`
}

func TestNaiveQueryLensVectors(t *testing.T) {
	cases := loadCases[naiveQueryLensCase](t, "naive_query_lens")
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	checked := 0
	for _, c := range cases {
		for _, computed := range []bool{false, true} {
			want := c.Expect.NaiveQueryLens
			if computed {
				want = c.Expect.ComputeNumComputedTokens
			}
			for _, inT := range indexTypes {
				if inT.Bits == 32 && !(fitsInt32(c.QueryStartLoc) && fitsInt32(c.SeqLens)) {
					continue
				}
				outT := Int64
				if fitsInt32(want) {
					outT = Int32
				}
				name := fmt.Sprintf("%s/computed=%v/%s", c.Name, computed, dtypeName(inT))
				qsl := ibufOf(inT, c.QueryStartLoc, 2, 1)
				seq := ibufOf(inT, c.SeqLens, 1, 0)
				out := newIBuf(outT, []int64{int64(len(want))}, 3, 2)
				md := &CommonAttnMetadata{QueryStartLoc: qsl.t, SeqLens: seq.t}
				var err error
				if computed {
					err = ComputeNumComputedTokens(md, out.t, 0)
				} else {
					err = NaiveQueryLens(md, out.t, 0)
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				wantEqual(t, name, out.values(), want)
				checked++
			}
		}
	}
	if checked < 150 {
		t.Fatalf("only %d runs checked", checked)
	}
}

func TestNumComputedTokensOneCall(t *testing.T) {
	got, err := NumComputedTokens([]int64{0, 3, 4}, []int64{10, 1})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "one call", got, []int64{7, 0})
	// The query_start_loc of another batch size is refused with a status naming it.
	_, err = NumComputedTokens([]int64{0, 3}, []int64{10, 1})
	wantError(t, err, StatusInvalidArgument, "args->metadata->query_start_loc")
}

func TestQueryLensHelpersVectors(t *testing.T) {
	for _, c := range loadCases[naiveQueryLensCase](t, "naive_query_lens") {
		if c.Expect.NaiveQueryLens != nil {
			got, err := NaiveQueryLensOf(c.QueryStartLoc)
			mustOK(t, err)
			wantEqual(t, c.Name+" naive", got, c.Expect.NaiveQueryLens)
		}
		if c.Expect.ComputeNumComputedTokens != nil && c.SeqLens != nil {
			got, err := NumComputedTokens(c.QueryStartLoc, c.SeqLens)
			mustOK(t, err)
			wantEqual(t, c.Name+" computed", got, c.Expect.ComputeNumComputedTokens)
		}
	}
	got, err := NaiveQueryLensOf([]int32{0, 3, 3, 7})
	mustOK(t, err)
	wantEqual(t, "int32", got, []int32{3, 0, 4})
	_, err = NumComputedTokens([]int32{0, 3}, []int32{4, 5})
	wantError(t, err, StatusInvalidArgument, "cattn.NumComputedTokens: queryStartLoc ")
}
