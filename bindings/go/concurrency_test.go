// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Many goroutines call at once, sharing a Context and a plan, each checking its own results
// and that every error message is the one of its own failed call (goroutines move between OS
// threads, and the C message is per thread). Run it with -race and with cgocheck2 too.
func TestConcurrentCalls(t *testing.T) {
	restore := loadCases[restoreIdxCase](t, "get_pcp_query_restore_idx")
	local := loadCases[localAttentionCase](t, "make_local_attention_virtual_batches")
	lc := &local[0]
	in, _ := localAttentionBatch(lc, Int32, Int64, 1)
	plan, err := MakeLocalAttentionVirtualBatches(lc.AttnChunkSize, lc.BlockSize, &in)
	mustOK(t, err)
	defer plan.Close()
	ctx, err := NewContext()
	mustOK(t, err)
	defer ctx.Close()
	mustOK(t, ctx.SetKVCacheLayoutOverride(KVCacheLayoutUnset))

	const goroutines, iterations = 32, 60
	failures := make(chan string, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			fail := func(format string, a ...any) {
				failures <- fmt.Sprintf("goroutine %d: ", g) + fmt.Sprintf(format, a...)
			}
			for i := 0; i < iterations; i++ {
				// A success with this goroutine's own batch.
				c := &restore[(g+i)%len(restore)]
				cu := ibufOf(indexTypes[g%2], c.CuNumTokens, int64(1+i%2), 0)
				out := newIBuf(indexTypes[i%2], []int64{int64(len(c.RestoreIdx))}, 1, 0)
				if err := GetPCPQueryRestoreIdx(cu.t, out.t, 0); err != nil {
					fail("%s: %v", c.Name, err)
					return
				}
				if !equalInts(out.values(), c.RestoreIdx) {
					fail("%s: wrong restore index", c.Name)
					return
				}
				runtime.Gosched()

				// A failure whose message carries a value only this call used.
				bad := -int64(1000000*(g+1) + i)
				err := GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: cu.t, DCPSize: bad,
					Ranks: AllDCPRanks, InterleaveSize: 1, Out: out.t})
				var e *Error
				if !errors.As(err, &e) || e.Code != StatusInvalidArgument ||
					!strings.Contains(e.Message, "args.DCPSize is out of range (got "+strconv.FormatInt(bad, 10)+",") {
					fail("dcp_size %d: %v", bad, err)
					return
				}

				// The shared context, with a setting only this call used.
				setting := fmt.Sprintf("bad-%d-%d", g, i)
				if i%3 == 0 {
					setting = []string{"NHD", "HND"}[g%2]
				}
				layout, err := ctx.GetKVCacheLayout(KVCacheLayoutArgs{UserSetting: &setting})
				if i%3 == 0 {
					if err != nil || layout.String() != setting {
						fail("layout %q: %v %v", setting, layout, err)
						return
					}
				} else if !errors.As(err, &e) || !strings.Contains(e.Message, strconv.Quote(setting)) {
					fail("layout %q: %v", setting, err)
					return
				}
				runtime.Gosched()

				// The shared plan, into this goroutine's outputs.
				v, p := lc.Expect.NumReqs, lc.Expect.Pages
				table := newIBuf(Int64, []int64{v, p}, 1, 0)
				qsl, seq, computed := newIBuf(Int32, []int64{v + 1}, 1, 0),
					newIBuf(Int32, []int64{v}, 1, 0), newIBuf(Int64, []int64{v}, 1, 0)
				md := CommonAttnMetadata{QueryStartLocCPU: qsl.t, SeqLensCPU: seq.t,
					NumComputedTokensCPU: computed.t, BlockTableTensor: table.t}
				if err := plan.Fill(&in, &md, 0); err != nil {
					fail("fill: %v", err)
					return
				}
				if !equalInts(table.values(), flatten(lc.Expect.BlockTable)) ||
					!equalInts(seq.values(), lc.Expect.SeqLens) || md.NumReqs != v {
					fail("fill: wrong virtual batches")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
}

// Closing a handle while other goroutines use it: each call either completes normally or
// reports the closed handle; nothing crashes or uses freed memory.
func TestCloseWhileInUse(t *testing.T) {
	local := loadCases[localAttentionCase](t, "make_local_attention_virtual_batches")
	lc := &local[0]
	in, _ := localAttentionBatch(lc, Int64, Int32, 1)
	plan, err := MakeLocalAttentionVirtualBatches(lc.AttnChunkSize, lc.BlockSize, &in)
	mustOK(t, err)
	ctx, err := NewContext()
	mustOK(t, err)

	const goroutines = 8
	started := make(chan struct{}, goroutines)
	bad := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; ; n++ {
				if n == 10 {
					started <- struct{}{}
				}
				var err error
				if g%2 == 0 {
					_, err = ctx.GetKVCacheLayout(KVCacheLayoutArgs{Connector: KVCacheLayoutHND})
				} else {
					_, _, err = plan.Shape()
				}
				if err == nil {
					continue
				}
				if !strings.Contains(err.Error(), " is closed") {
					bad <- err
				}
				return
			}
		}(g)
	}
	for g := 0; g < goroutines; g++ {
		<-started
	}
	mustOK(t, ctx.Close())
	mustOK(t, plan.Close())
	wg.Wait()
	close(bad)
	for err := range bad {
		t.Error(err)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
