// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"reflect"
	"testing"
)

type tokenToReqIndicesCase struct {
	Name             string  `json:"name"`
	QueryStartLoc    []int64 `json:"query_start_loc"`
	QueryStartLocCPU []int64 `json:"query_start_loc_cpu"`
	NumActualTokens  int64   `json:"num_actual_tokens"`
	BufferLen        int64   `json:"buffer_len"`
	Sentinel         int64   `json:"sentinel"`
	Expect           []int64 `json:"expect"`
	Error            string  `json:"error"`
}

func TestTokenToReqIndicesVectors(t *testing.T) {
	cases := loadCases[tokenToReqIndicesCase](t, "token_to_req_indices")
	ok, failed := 0, 0
	for _, c := range cases {
		for _, inT := range indexTypes {
			for _, bufT := range indexTypes {
				name := fmt.Sprintf("%s/%s-%s", c.Name, dtypeName(inT), dtypeName(bufT))
				sentinel := make([]int64, c.BufferLen)
				for i := range sentinel {
					sentinel[i] = c.Sentinel
				}
				buf := ibufOf(bufT, sentinel, 2, 1)
				md := &CommonAttnMetadata{QueryStartLoc: ibufOf(inT, c.QueryStartLoc, 1, 0).t,
					QueryStartLocCPU: ibufOf(inT, c.QueryStartLocCPU, 1, 0).t,
					NumActualTokens:  c.NumActualTokens}
				err := TokenToReqIndices(md, buf.t, 0)
				if c.Error != "" {
					if err == nil {
						t.Fatalf("%s: succeeded, upstream raises %s", name, c.Error)
					}
					wantEqual(t, name+" (nothing written)", buf.values(), sentinel)
					failed++
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want := append(append([]int64{}, c.Expect...), sentinel[len(c.Expect):]...)
				wantEqual(t, name, buf.values(), want)
				ok++
			}
		}
	}
	if ok < 100 || failed < 10 {
		t.Fatalf("only %d successes and %d failures checked", ok, failed)
	}
}

func TestTokenToReqIndicesOneCall(t *testing.T) {
	got, err := TokenToReqIndicesInt32([]int32{0, 2, 2, 5}, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 0, 2, 2, 2, 0, 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	_, err = TokenToReqIndicesInt32([]int32{0, 3, 2}, 3)
	wantError(t, err, StatusInvalidArgument, "negative query length")
}

func TestTokenToReqIndicesOfVectors(t *testing.T) {
	checked := 0
	for _, c := range loadCases[tokenToReqIndicesCase](t, "token_to_req_indices") {
		if !reflect.DeepEqual(c.QueryStartLocCPU, c.QueryStartLoc) || c.Error != "" ||
			c.NumActualTokens < 0 {
			continue // the helper has no separate mirror, and its buffer always fits
		}
		got, err := TokenToReqIndicesOf(c.QueryStartLoc, c.NumActualTokens)
		mustOK(t, err)
		checked++
		wantEqual(t, c.Name, got, c.Expect[:c.NumActualTokens])
	}
	if checked < 10 {
		t.Fatalf("only %d vectors checked", checked)
	}
	_, err := TokenToReqIndicesOf([]int64{0, 2}, -1)
	wantError(t, err, StatusInvalidArgument, "cattn.TokenToReqIndicesOf: numTokens is negative")
}
