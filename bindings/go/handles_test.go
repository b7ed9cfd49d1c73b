// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"runtime"
	"testing"
	"time"
)

func TestCloseEveryHandle(t *testing.T) {
	ctx, err := NewContext()
	mustOK(t, err)
	mustOK(t, ctx.SetKVCacheLayoutOverride(KVCacheLayoutHND))
	layout, err := ctx.GetKVCacheLayout(KVCacheLayoutArgs{})
	mustOK(t, err)
	wantEqual(t, "override", layout, KVCacheLayoutHND)
	mustOK(t, ctx.Close())
	mustOK(t, ctx.Close()) // idempotent
	var nilCtx *Context
	mustOK(t, nilCtx.Close())
	// A nil Context means "no context" for resolution, as a NULL cattn_context_t does.
	layout, err = nilCtx.GetKVCacheLayout(KVCacheLayoutArgs{Connector: KVCacheLayoutHND})
	mustOK(t, err)
	wantEqual(t, "nil context", layout, KVCacheLayoutHND)

	c := &localAttentionCase{AttnChunkSize: 4, BlockSize: 2, QueryStartLoc: []int64{0, 4},
		SeqLens: []int64{6}, BlockTable: [][]int64{{0, 1, 2}}, NumActualTokens: 4}
	in, _ := localAttentionBatch(c, Int32, Int32, 1)
	plan, err := MakeLocalAttentionVirtualBatches(4, 2, &in)
	mustOK(t, err)
	mustOK(t, plan.Close())
	mustOK(t, plan.Close())

	step, err := NewStepPlan(stepDesc(StepAllProducts))
	mustOK(t, err)
	mustOK(t, step.Close())
	mustOK(t, step.Close())
	var nilStep *StepPlan
	mustOK(t, nilStep.Close())

	// Comm: see TestCommLifecycle (a real one needs NCCL and a GPU) and TestCommErrors.
	var comm *Comm
	mustOK(t, comm.Close())
}

// Handles that are never closed are released by their finalizers; this only checks that the
// safety net runs without harm.
func TestFinalizersReleaseForgottenHandles(t *testing.T) {
	c := &localAttentionCase{AttnChunkSize: 4, BlockSize: 2, QueryStartLoc: []int64{0, 4},
		SeqLens: []int64{6}, BlockTable: [][]int64{{0, 1, 2}}, NumActualTokens: 4}
	in, _ := localAttentionBatch(c, Int32, Int32, 1)
	for i := 0; i < 200; i++ {
		_, err := NewContext()
		mustOK(t, err)
		_, err = MakeLocalAttentionVirtualBatches(4, 2, &in)
		mustOK(t, err)
		_, err = NewStepPlan(stepDesc(StepAllProducts))
		mustOK(t, err)
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// Every handle type shares one implementation (handle.go): a zero value is refused like a
// closed handle, and a closed one names the Go type.
func TestZeroAndClosedHandles(t *testing.T) {
	var zero StepPlan
	_, err := zero.Shape()
	wantError(t, err, StatusInvalidArgument, "cattn.StepPlan.Shape: plan is closed (got a zero StepPlan")
	mustOK(t, zero.Close())

	plan, err := NewStepPlan(stepDesc(StepAllProducts))
	mustOK(t, err)
	mustOK(t, plan.Close())
	_, err = plan.WorkspaceSize()
	wantError(t, err, StatusInvalidArgument, "plan is closed (got a closed StepPlan, expected an open StepPlan)")

	ctx, err := NewContext()
	mustOK(t, err)
	mustOK(t, ctx.Close())
	_, err = ctx.GetKVCacheLayout(KVCacheLayoutArgs{})
	wantError(t, err, StatusInvalidArgument, "ctx is closed (got a closed Context, expected an open Context)")
}
