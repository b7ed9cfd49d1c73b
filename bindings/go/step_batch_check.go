// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import (
	"fmt"
	"strconv"
)

// MaxKVGroups is CATTN_MAX_KV_GROUPS: the most KV-cache groups one step plan or batch check
// handles, the longest a per-group slice of theirs may be. Since 1.2.
const MaxKVGroups = 8

// StepCheckField is the field of the first defect StepBatchCheck reports (CATTN_STEP_CHECK_*).
type StepCheckField int64

// The fields, in the order they are checked.
const (
	StepCheckOK            StepCheckField = 0 // the batch keeps the contract
	StepCheckNumReqs       StepCheckField = 1 // NumReqs is outside [0, B]
	StepCheckQueryStartLoc StepCheckField = 2 // entry 0 not 0, a live entry decreases, or a padded one differs
	StepCheckSeqLens       StepCheckField = 3 // a live row below its query length, or a padded row not 0
	StepCheckBlockTable    StepCheckField = 4 // a padded block-table row with a nonzero entry
	StepCheckSlotMapping   StepCheckField = 5 // a slot not -1 from the live total on, or below -1 before it
)

func (c StepCheckField) String() string {
	switch c {
	case StepCheckOK:
		return "StepCheckOK"
	case StepCheckNumReqs:
		return "StepCheckNumReqs"
	case StepCheckQueryStartLoc:
		return "StepCheckQueryStartLoc"
	case StepCheckSeqLens:
		return "StepCheckSeqLens"
	case StepCheckBlockTable:
		return "StepCheckBlockTable"
	case StepCheckSlotMapping:
		return "StepCheckSlotMapping"
	}
	return "StepCheckField(" + strconv.FormatInt(int64(c), 10) + ")"
}

// StepCheckReport is a batch check's report: its status tensor's three entries.
type StepCheckReport struct {
	Field StepCheckField // the first defect's field; StepCheckOK when the batch keeps the contract
	Index int64          // its index: a row, or a token for slot mappings
	Group int64          // its KV-cache group
}

// OK reports whether the batch keeps the contract.
func (r StepCheckReport) OK() bool { return r.Field == StepCheckOK }

func (r StepCheckReport) String() string {
	return fmt.Sprintf("%v at index %d of group %d", r.Field, r.Index, r.Group)
}

// StepBatchCheckArgs are the arguments of StepBatchCheck (cattn_step_batch_check_args_t). B
// is QueryStartLoc's length - 1. Group g's table and slot mapping are entry g of BlockTables
// and SlotMappings, at most MaxKVGroups each; a nil entry, and a group past the slice, is not
// checked.
type StepBatchCheckArgs struct {
	QueryStartLoc *Tensor   // in: [B + 1]
	NumReqs       *Tensor   // in, may be nil: [1] live rows; nil = B
	SeqLens       *Tensor   // in, may be nil: [B]
	BlockTables   []*Tensor // in, each may be nil: [B, W_g] the batch's tables
	SlotMappings  []*Tensor // in, each may be nil: [T] the groups' slot mappings
	Status        *Tensor   // out: [3] int32/int64: field, index, group
	Stream        Stream
}

// StepBatchCheck verifies a batch against the padding contract and writes the first defect to
// Status (cattn_step_batch_check): on the device without a host sync (read Status when the
// stream is done), on the host directly. A batch that keeps the contract gets {0, 0, 0}. The
// returned error reports the arguments, never the batch's values. Errors: as PreparePosSeqLens.
// Since 1.2.
//
// See docs/api/step_inputs.md.
func StepBatchCheck(args StepBatchCheckArgs) error {
	f := newFrame("cattn_step_batch_check", "StepBatchCheck")
	defer f.free()
	return f.stepBatchCheck(&args, args.Status)
}

// StepBatchCheckHost is the one-call host form of StepBatchCheck: the check of a batch of
// host tensors into a status of its own (args.Status is not used), as a report. Since 1.2.
//
// See docs/api/step_inputs.md.
func StepBatchCheckHost(args StepBatchCheckArgs) (StepCheckReport, error) {
	f := newFrame("cattn_step_batch_check", "StepBatchCheckHost", "args->status", "the result")
	defer f.free()
	status := make([]int64, 3)
	if err := f.stepBatchCheck(&args, Int64Tensor(status)); err != nil {
		return StepCheckReport{}, err
	}
	return StepCheckReport{Field: StepCheckField(status[0]), Index: status[1], Group: status[2]},
		nil
}

// groupTensors converts a per-group slice of at most MaxKVGroups tensors (C argument arg,
// "args->block_tables") into dst.
func (f *frame) groupTensors(dst *[MaxKVGroups]cTensor, arg string, ts []*Tensor) error {
	if len(ts) > MaxKVGroups {
		return f.argError(arg, "has too many groups", strconv.Itoa(len(ts)),
			"at most "+strconv.Itoa(MaxKVGroups)+" (CATTN_MAX_KV_GROUPS)")
	}
	for g, t := range ts {
		c, err := f.tensor(arg+"["+strconv.Itoa(g)+"]", t)
		if err != nil {
			return err
		}
		dst[g] = c
	}
	return nil
}

func (f *frame) stepBatchCheck(args *StepBatchCheckArgs, status *Tensor) error {
	var cs [4]cTensor
	if err := f.tensorsInto(cs[:], []string{"args->query_start_loc", "args->num_reqs",
		"args->seq_lens", "args->status"}, []*Tensor{args.QueryStartLoc, args.NumReqs,
		args.SeqLens, status}); err != nil {
		return err
	}
	var tables, slots [MaxKVGroups]cTensor
	if err := f.groupTensors(&tables, "args->block_tables", args.BlockTables); err != nil {
		return err
	}
	if err := f.groupTensors(&slots, "args->slot_mappings", args.SlotMappings); err != nil {
		return err
	}
	a := cArgs[C.cattn_step_batch_check_args_t](f)
	cStepBatchCheckArgsInit(a)
	a.query_start_loc, a.num_reqs, a.seq_lens, a.status = cs[0], cs[1], cs[2], cs[3]
	for g := range tables {
		a.block_tables[g], a.slot_mappings[g] = tables[g], slots[g]
	}
	setAddr(&a.stream, uintptr(args.Stream))
	return f.status(cStepBatchCheck(a, f.msg))
}
