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

// StepProduct is a set of the products a StepPlan computes (cattn_step_plan_desc_t.products):
// an OR of the Step* bits below, each named after the utility whose values it gives.
type StepProduct uint32

// The products (CATTN_STEP_*) and the call each one computes.
const (
	StepDCPLocalSeqLens      StepProduct = 1 << 0 // GetDCPLocalSeqLens
	StepPCPQueryRestoreIdx   StepProduct = 1 << 1 // GetPCPQueryRestoreIdx
	StepMambaBlockTable      StepProduct = 1 << 2 // MambaGetBlockTableTensor
	StepCausalConv1dMetadata StepProduct = 1 << 3 // ComputeCausalConv1dMetadataCapturable
	StepLocalAttention       StepProduct = 1 << 4 // MakeLocalAttentionVirtualBatchesCapturable
	StepFastPrefill          StepProduct = 1 << 5 // MakeKVSharingFastPrefillCommonAttnMetadata
	StepExtendQueries        StepProduct = 1 << 6 // ExtendAllQueriesByN
	// The step-input products (1.2). With StepInputs the 1.1 products read the computed
	// query_start_loc and seq_lens; with StepBlockTables, group Inputs.TableGroup's gathered
	// table.
	StepInputs        StepProduct = 1 << 7  // PreparePosSeqLens
	StepBlockTables   StepProduct = 1 << 8  // GatherBlockTables, every group
	StepSlotMappings  StepProduct = 1 << 9  // ComputeSlotMappings, every SlotModeTokenToKVSlot group
	StepLogitsIndices StepProduct = 1 << 10 // CombineSampledAndDraftTokens, no input ids
	StepTokenToReq    StepProduct = 1 << 11 // TokenToReqIndices of the live tokens, 0 past them
	// StepSplit: SplitDecodesAndPrefills of the live rows (treat_short_extends_as_decodes), to
	// the counts.
	StepSplit StepProduct = 1 << 12
	// StepAllProducts is CATTN_STEP_ALL_PRODUCTS: the seven products of 1.1, the value 1.1
	// gave it (so that code selecting "every product" keeps the products it was written for).
	StepAllProducts StepProduct = 0x7f
	// StepInputProducts is CATTN_STEP_INPUT_PRODUCTS: the six step-input products of 1.2,
	// StepInputs to StepSplit.
	StepInputProducts StepProduct = 0x1f80
	// The drafter products (1.2). They read the verified batch and the rejection sampler's
	// output, a later point of an engine step than the step-input products, so a plan selects
	// one or the other. StepDraftNextToken to StepDraftSlotMapping are one chain, each needing
	// the ones before it; StepDraftStep and StepBatchChange run between steps and are their
	// plan's only product. Their parameters are StepPlanDesc.Draft.
	StepDraftNextToken     StepProduct = 1 << 13 // EaglePrepareNextTokenPadded
	StepDraftPrepareInputs StepProduct = 1 << 14 // EaglePrepareInputsPadded
	StepDraftExpand        StepProduct = 1 << 15 // CopyAndExpandEagleInputs
	StepDraftSlotMapping   StepProduct = 1 << 16 // ComputeNewSlotMapping, N = P - shift
	StepDraftStep          StepProduct = 1 << 17 // EagleStepUpdateSlotMappingAndMetadata
	StepBatchChange        StepProduct = 1 << 18 // UpdateNumComputedTokensForBatchChange
	// StepDraftProducts is CATTN_STEP_DRAFT_PRODUCTS: the six drafter products of 1.2,
	// StepDraftNextToken to StepBatchChange.
	StepDraftProducts StepProduct = 0x7e000
)

// The entries of a run's counts vector (StepOutputs.Counts and CountsHost, CATTN_STEP_COUNT_*):
// per-step values derived on the device. An entry of a product the plan does not compute is 0.
const (
	StepCountTokens              = 0 // query_start_loc[B] - query_start_loc[0]
	StepCountRestoreSize         = 1 // restore-index entries in use
	StepCountConv1dPrograms      = 2 // causal-conv1d programs (tot)
	StepCountLocalVirtualBatches = 3 // V
	StepCountLocalMaxQueryLen    = 4 // over the virtual batches
	StepCountLocalMaxSeqLen      = 5 // over the virtual batches
	StepCountDecodeMaxQueryLen   = 6 // fast prefill's decode batch
	StepCountDecodeTokens        = 7 // fast prefill's decode batch
	// Since 1.2.
	StepCountNumReqs            = 8  // the live rows, NumReqs (step inputs)
	StepCountNumLogits          = 9  // the logits (StepLogitsIndices)
	StepCountMaxQueryLen        = 10 // the largest live query length
	StepCountMaxSeqLen          = 11 // the largest live seq_len (StepInputs)
	StepCountSplitDecodes       = 12 // StepSplit's num_decodes
	StepCountSplitPrefills      = 13 // StepSplit's num_prefills
	StepCountSplitDecodeTokens  = 14 // StepSplit's num_decode_tokens
	StepCountSplitPrefillTokens = 15 // StepSplit's num_prefill_tokens
	// StepNumCounts is the entries of the counts vector of a plan with a 1.2 product
	// (CATTN_STEP_NUM_COUNTS).
	StepNumCounts = 16
	// StepNumCounts1_1 is the entries of the counts vector of a plan of 1.1 products only
	// (CATTN_STEP_NUM_COUNTS_1_1: entries 0 to 7).
	StepNumCounts1_1 = 8
)

// StepDCPParams are the parameters of StepDCPLocalSeqLens (cattn_step_dcp_params_t), as
// DCPLocalSeqLensArgs takes them; the zero value is the C default.
type StepDCPParams struct {
	DCPSize int64    // >= 1; 0 means 1
	Ranks   DCPRanks // the zero value (AllDCPRanks) for every rank, DCPRank(r) for one
	// InterleaveSize is dcp_kv_cache_interleave_size: >= 1, DCPSize * InterleaveSize <=
	// INT32_MAX; 0 means 1.
	InterleaveSize int64
}

// StepMambaParams are the parameters of StepMambaBlockTable (cattn_step_mamba_params_t), as
// MambaBlockTableArgs takes them.
type StepMambaParams struct {
	BlockSize            int64          // Align: >= 1; 0 means 1
	NumSpeculativeBlocks int64          // Align: >= 0 (default 0)
	Mode                 MambaCacheMode // default MambaCacheModeNone
}

// StepConv1dParams are the parameters of StepCausalConv1dMetadata
// (cattn_step_conv1d_params_t).
type StepConv1dParams struct {
	BlockM int64 // tokens per program, >= 1; 0 means 8 (vLLM's)
}

// StepLocalAttentionParams are the parameters of StepLocalAttention
// (cattn_step_local_attention_params_t). They have no default: set both to use the product.
type StepLocalAttentionParams struct {
	AttnChunkSize int64 // C >= 1
	BlockSize     int64 // >= 1, divides AttnChunkSize
}

// StepExtendParams are the parameters of StepExtendQueries (cattn_step_extend_params_t).
type StepExtendParams struct {
	// N is the number of tokens added to every request, >= 0; nil means 1 (vLLM's
	// extend_all_queries_by_1).
	N *int64
}

// KVGroupParams is one KV-cache group's geometry (cattn_kv_group_params_t). Since 1.2.
type KVGroupParams struct {
	BlockSize       int64    // the group's block size in tokens, >= 1
	KernelBlockSize int64    // divides BlockSize: the unit of the group's tables
	MaxNumBlocks    int64    // W: columns of the group's tables, >= 1
	SlotMode        SlotMode // default SlotModeTokenToKVSlot
}

// StepInputsParams are the parameters of the step-input products, StepInputs to StepSplit
// (cattn_step_inputs_params_t, without num_kv_groups: len(StepPlanDesc.KVGroups)). The zero
// value is the header's default. Since 1.2.
type StepInputsParams struct {
	SlotMappingContract SlotMappingContract // default SlotMappingMRV2
	DCPSize             int64               // the slot mappings' DCP world, >= 1; 0 means the default (1)
	DCPRank             int64               // this rank, in [0, DCPSize)
	// InterleaveSize is dcp_kv_cache_interleave_size: >= 1; 0 means the default (1).
	InterleaveSize int64
	// NumNewSampledTokens is the logits per row besides its drafts, 0 or 1; nil means the
	// header's default (1).
	NumNewSampledTokens *int64
	// DecodeThreshold is StepSplit's, 0 to INT32_MAX; nil means the header's default (1).
	DecodeThreshold *int64
	RequireUniform  bool  // StepSplit's require_uniform
	TableGroup      int32 // the group whose gathered table the 1.1 products read
}

// StepDraftParams are the parameters of the drafter products, StepDraftNextToken to
// StepDraftStep (cattn_step_draft_params_t), as the speculative-decoding calls take them. The
// zero value is the header's default: P 1, no token limit, no shift, and no vocabulary, block
// size or model length (set those the selected products read). Since 1.2.
type StepDraftParams struct {
	VocabSize int64 // StepDraftNextToken: >= 1
	// NumPaddingSlotsPerRequest is StepDraftExpand's P in [1, 65536], the bonus token plus the
	// parallel drafts; 0 means the header's default (1).
	NumPaddingSlotsPerRequest int64
	PaddingTokenID            int64 // StepDraftExpand: the token of each request's rejected tail
	ParallelDraftingTokenID   int64 // StepDraftExpand: the token of padding slots 2 to P
	MaxTokensPerRequest       int64 // StepDraftExpand: >= 0; 0 means no limit
	BlockSize                 int64 // StepDraftSlotMapping, StepDraftStep: >= 1
	MaxModelLen               int64 // StepDraftSlotMapping, StepDraftStep: >= 1
	ShiftInputIDs             bool  // StepDraftExpand: drop each request's first token (s = 1)
}

// StepPlanDesc describes a StepPlan (cattn_step_plan_desc_t): the products, the capacities and
// each product's parameters; those of the products not selected are ignored.
//
// The zero value is CATTN_STEP_PLAN_DESC_INIT (vLLM's parameter defaults; see the fields):
// set Products and the capacities, and the parameters that differ.
type StepPlanDesc struct {
	Products           StepProduct // at least one bit
	MaxNumReqs         int64       // >= 1: rows of a batch's per-request tensors (B)
	MaxNumTokens       int64       // >= 0: tokens a batch holds (T)
	MaxNumBlocksPerReq int64       // >= 1: block-table columns (mamba, local attention)
	MaxNumLogits       int64       // >= 0: entries of a batch's logits indices (fast prefill)

	DCP            StepDCPParams            // StepDCPLocalSeqLens
	Mamba          StepMambaParams          // StepMambaBlockTable
	Conv1d         StepConv1dParams         // StepCausalConv1dMetadata
	LocalAttention StepLocalAttentionParams // StepLocalAttention
	Extend         StepExtendParams         // StepExtendQueries

	// Since 1.2: R, the persistent request rows (num_computed_tokens, MRV2 tables), >= 1 with
	// a product that reads them; the step-input products' parameters; and the KV-cache groups,
	// at most MaxKVGroups (their count is num_kv_groups).
	MaxNumPersistentReqs int64
	Inputs               StepInputsParams
	KVGroups             []KVGroupParams
	// Since 1.2: the drafter products' parameters.
	Draft StepDraftParams
}

// DefaultStepPlanDesc returns CATTN_STEP_PLAN_DESC_INIT with its values spelled out: no
// products, zero capacities and every product's parameters at vLLM's defaults - DCP
// {DCPSize 1, AllDCPRanks, InterleaveSize 1}, Mamba {BlockSize 1, 0, MambaCacheModeNone},
// Conv1d {BlockM 8}, LocalAttention {0, 0} (to be set), Extend {N 1}, and (1.2) Inputs with
// its pointers set to the header's values, no KV groups, and Draft with the header's
// NumPaddingSlotsPerRequest (1). The zero StepPlanDesc means the same.
// Since 1.1.
//
// See docs/api/step_plan.md.
func DefaultStepPlanDesc() StepPlanDesc {
	return StepPlanDesc{
		DCP:    StepDCPParams{DCPSize: 1, Ranks: AllDCPRanks, InterleaveSize: 1},
		Mamba:  StepMambaParams{BlockSize: 1, Mode: MambaCacheModeNone},
		Conv1d: StepConv1dParams{BlockM: 8},
		Extend: StepExtendParams{N: Ptr[int64](1)},
		// 1.2: the header's values, read from CATTN_STEP_PLAN_DESC_INIT rather than stated
		// here (no groups, so KVGroups is nil).
		Inputs: stepPlanDescInit().Inputs,
		Draft:  stepPlanDescInit().Draft,
	}
}

// The C fields of cattn_step_plan_desc_t that StepPlanDesc names otherwise.
var stepDescRenames = []string{"desc->dcp.dcp_rank", "desc.DCP.Ranks",
	"desc->dcp.dcp_kv_cache_interleave_size", "desc.DCP.InterleaveSize",
	"desc->mamba.mamba_cache_mode", "desc.Mamba.Mode", "desc", "desc",
	"desc->inputs.num_kv_groups", "len(desc.KVGroups)",
	"desc->inputs.dcp_kv_cache_interleave_size", "desc.Inputs.InterleaveSize"}

// StepPlanShape holds the capacities a StepPlan's outputs must hold, derived from its desc
// (cattn_step_plan_shape_t); with B = MaxNumReqs, T = MaxNumTokens and C = AttnChunkSize:
type StepPlanShape struct {
	RestoreCapacity int64 // T: restore-index entries
	Conv1dCapacity  int64 // cdiv(T, BlockM) + B: causal-conv1d programs
	LocalCapacity   int64 // min(2 * B + cdiv(T, C), T + B): virtual batches
	LocalPages      int64 // C / BlockSize: columns of the local block table
	// MambaColumns: Align - 1 + NumSpeculativeBlocks; copy modes - 0 (the batch's block-table
	// columns).
	MambaColumns int64
	// DraftTokenCapacity (1.2): T + B * (P - s), the drafter's input tokens (StepDraftExpand;
	// P = Draft.NumPaddingSlotsPerRequest, s 1 with Draft.ShiftInputIDs).
	DraftTokenCapacity int64
}

// StepBatch is one step's batch (cattn_step_batch_t): int32/int64 tensors in device memory of
// one GPU (UnsafeDeviceTensor). B is QueryStartLoc's length - 1, at most MaxNumReqs, padding
// rows included. A tensor a selected product reads is required; the others may be nil and
// are not read.
type StepBatch struct {
	// QueryStartLoc: [B + 1], 1 <= B + 1 <= MaxNumReqs + 1 (all products but DCP and mamba).
	QueryStartLoc *Tensor
	SeqLens       *Tensor // [B] (DCP, mamba Align, local attention, extend)
	// BlockTable: [B, cols], 1 <= cols <= MaxNumBlocksPerReq (mamba, local attention).
	BlockTable *Tensor
	// CuNumTokens: [R + 1], R <= MaxNumReqs, the PCP restore index's input; nil =
	// QueryStartLoc.
	CuNumTokens   *Tensor
	LogitsIndices *Tensor // [L], L <= MaxNumLogits (fast prefill)
	// NumLogitsIndices: [1], how many of LogitsIndices to read, clamped to [0, L] on the
	// device; nil = all L (fast prefill).
	NumLogitsIndices *Tensor

	// Since 1.2.
	NumReqs *Tensor // [1]: live rows, clamped to [0, B]; nil = B
	// NumScheduledTokens: [B] (StepInputs); B is then its length, and QueryStartLoc, SeqLens
	// and BlockTable must be nil (the plan computes them).
	NumScheduledTokens *Tensor
	IdxMapping         *Tensor // [B] persistent rows (inputs, tables, MRV2)
	NumComputedTokens  *Tensor // [R] (StepInputs)
	NumDraftTokens     *Tensor // [B], may be nil (StepLogitsIndices)
	Positions          *Tensor // [N]: the slot mappings' without StepInputs
	// KVBlockTables: per group, [R, W] persistent rows (MRV2), [B, W] batch rows (V1 slot
	// mappings); at most MaxKVGroups.
	KVBlockTables []*Tensor
	KVNumBlocks   []*Tensor // per group, may be nil: [R] entries in use (StepBlockTables)

	// Since 1.2, the drafter products. B is the verified batch's QueryStartLoc length - 1 (the
	// chain StepDraftNextToken to StepDraftSlotMapping, whose StepDraftSlotMapping reads
	// BlockTable [B, W]), Positions' length (StepDraftStep, which reads Positions, BlockTable
	// and SeqLens), PrevPositions' length n (StepBatchChange).
	SampledTokenIDs    *Tensor // [B, S], -1 rejected (StepDraftNextToken)
	DiscardRequestMask *Tensor // [B] flags, may be nil (StepDraftNextToken)
	BackupNextTokenIDs *Tensor // [B] (StepDraftNextToken)
	CuNumDraftTokens   *Tensor // [B] inclusive sum (StepDraftPrepareInputs)
	TargetTokenIDs     *Tensor // [T], T <= MaxNumTokens (StepDraftExpand)
	TargetPositions    *Tensor // [T'] (StepDraftExpand)
	// PrevPositions: [n] the previous row of each row, negative = new (StepBatchChange; it also
	// reads NumComputedTokens, [M >= n]).
	PrevPositions          *Tensor
	NumAcceptedTokens      *Tensor // [n] (StepBatchChange)
	ValidSampledTokenCount *Tensor // [n_prev] (StepBatchChange)
	PrevNumDraftTokens     *Tensor // [n_prev] (StepBatchChange)
	CPUNumComputedTokens   *Tensor // [n] (StepBatchChange)
}

// StepOutputs are where a run writes (cattn_step_outputs_t). Every output of a selected
// product is required unless marked "may be nil"; every output of a product the plan does not
// compute must be nil. int32/int64 (flags: one byte), in device memory on the batch's GPU
// except CountsHost. Capacities come from StepPlan.Shape; a capacity output may be longer,
// and every entry past the step's values is written with its sentinel. No output may overlap
// an input or another output, except four drafter outputs that may be their input's very
// view (the same *Tensor, or one of the same address, dtype, shape and strides):
// DraftPositions and DraftSeqLens of the batch's Positions and SeqLens (StepDraftStep),
// CarriedNumComputedTokens and CarriedNumAcceptedTokens of its NumComputedTokens and
// NumAcceptedTokens (StepBatchChange).
type StepOutputs struct {
	DCPLocalSeqLens    *Tensor // [B] one rank, [B, DCPSize] all ranks
	PCPQueryRestoreIdx *Tensor // [>= RestoreCapacity]; -1 past the size
	MambaBlockTable    *Tensor // Align: [B, 1 + NumSpeculativeBlocks]; copy modes: [B, cols]
	Conv1dNums         *Tensor // [B], may be nil
	// Conv1dMList: [>= Conv1dCapacity], may be nil; PadSlotID past tot, as the next three.
	Conv1dMList               *Tensor
	Conv1dOffsetList          *Tensor // as Conv1dMList
	Conv1dBatchPtr            *Tensor // as Conv1dMList
	Conv1dTokenChunkOffsetPtr *Tensor // as Conv1dMList
	// LocalQueryStartLoc: [V_cap + 1], V_cap >= LocalCapacity; past V it repeats the total.
	LocalQueryStartLoc     *Tensor
	LocalSeqLens           *Tensor // [V_cap]; 0 past V
	LocalNumComputedTokens *Tensor // [V_cap], may be nil; 0 past V
	// LocalBlockTable: [V_cap, LocalPages], the batch BlockTable's dtype, may be nil; rows
	// past V are 0.
	LocalBlockTable     *Tensor
	DecodeQueryStartLoc *Tensor // [B + 1]: fast prefill's decode query_start_loc
	ExtendQueryStartLoc *Tensor // [B + 1]
	ExtendSeqLens       *Tensor // [B]
	Counts              *Tensor // [StepNumCounts], may be nil
	// CountsHost: [StepNumCounts], may be nil: a host mirror of Counts in pinned host memory
	// mapped for the device (cudaHostAlloc, cudaMallocHost, or cudaHostRegister with
	// cudaHostRegisterMapped), described by address with Device{Type: DeviceCUDAHost}. The
	// kernel writes it after Run returns, valid once the caller has synchronised the stream,
	// so it cannot be Go memory: a slice-backed tensor is refused.
	CountsHost *Tensor
	// Workspace is device memory of StepPlan.WorkspaceSize bytes, given as WorkspaceBytes; 0
	// when that is 0 (it is for every plan of libcattn 1.1).
	Workspace      uintptr
	WorkspaceBytes uint64

	// Since 1.2.
	QueryStartLoc     *Tensor // [B + 1] (StepInputs)
	SeqLens           *Tensor // [B] (StepInputs)
	Positions         *Tensor // at least MaxNumTokens, may be nil (StepInputs)
	NumComputedTokens *Tensor // [B], may be nil (StepInputs)
	// BlockTables: [B, W] per group (StepBlockTables); at most MaxKVGroups.
	BlockTables []*Tensor
	// SlotMappings: int64, at least MaxNumTokens per SlotModeTokenToKVSlot group, nil for
	// SlotModeNone groups (StepSlotMappings); at most MaxKVGroups.
	SlotMappings       []*Tensor
	LogitsIndices      *Tensor // at least MaxNumLogits (StepLogitsIndices)
	CuNumLogits        *Tensor // [B + 1], may be nil (StepLogitsIndices)
	ExpandedIdxMapping *Tensor // at least MaxNumLogits, may be nil (StepLogitsIndices)
	ExpandedLocalPos   *Tensor // at least MaxNumLogits, may be nil (StepLogitsIndices)
	TokenToReqIndices  *Tensor // at least MaxNumTokens (StepTokenToReq)

	// Since 1.2, the drafter products. "Tokens": at least DraftTokenCapacity entries; past the
	// step's QueryStartLoc[B] + B * (P - s) the ids are PaddingTokenID, positions 0, tokens
	// rejected and not masked, slots -1.
	NextTokenIDs            *Tensor // [>= B] (StepDraftNextToken)
	ValidSampledTokensCount *Tensor // [>= B], may be nil (StepDraftNextToken)
	TokenIndicesToSample    *Tensor // [>= B] (StepDraftPrepareInputs)
	NumRejectedTokens       *Tensor // [>= B], may be nil (StepDraftPrepareInputs)
	DraftInputIDs           *Tensor // tokens (StepDraftExpand)
	// DraftPositions: tokens (StepDraftExpand); [>= B] clamped positions (StepDraftStep: may
	// be the batch's Positions).
	DraftPositions      *Tensor
	IsRejectedTokenMask *Tensor // tokens, flags, may be nil (StepDraftExpand)
	IsMaskedTokenMask   *Tensor // tokens, flags, may be nil (StepDraftExpand)
	NewTokenIndices     *Tensor // [>= MaxNumReqs * P], -1 past B * P, may be nil (StepDraftExpand)
	// HiddenStateMapping: at least MaxNumTokens, -1 past QueryStartLoc[B], may be nil
	// (StepDraftExpand with Draft.ShiftInputIDs; nil without it).
	HiddenStateMapping *Tensor
	// DraftSlotMapping: int64, tokens (StepDraftSlotMapping); [>= B], -1 past B
	// (StepDraftStep).
	DraftSlotMapping *Tensor
	DraftSeqLens     *Tensor // [B] (StepDraftStep): may be the batch's SeqLens
	// CarriedNumComputedTokens: [>= n], [0, n) written (StepBatchChange): may be the batch's
	// NumComputedTokens.
	CarriedNumComputedTokens *Tensor
	// CarriedNumAcceptedTokens: [n] (StepBatchChange): may be the batch's NumAcceptedTokens.
	CarriedNumAcceptedTokens *Tensor
}

// StepPlan computes the selected products of one engine step from the batch's device tensors
// in a single kernel launch (cattn_step_plan_t). It is made for CUDA graphs: it keeps only
// capacities and parameters on the host, and every per-step count is derived on the device
// from the tensors, so a run captured once per batch-size bucket is correct on every replay
// with new tensor contents. Engines pad a batch to its graph's size with zero-length requests;
// each product treats those as its utility does an empty request.
//
// A StepPlan is immutable and may be used from many goroutines at once. Close it when done; a
// finalizer closes an unreachable one, but only as a safety net. Since 1.1.
type StepPlan struct {
	h *handle[cStepPlan]
}

// NewStepPlan creates a step plan from desc (cattn_step_plan_create). The launch layout is
// fixed here from the capacities alone (no device is queried, so creation needs no GPU).
// Errors: StatusInvalidArgument (no product or an unknown bit, a capacity out of range, a
// selected product's parameter out of range - named as desc->dcp.dcp_size and the like -, a
// capacity whose derived sizes overflow int64), StatusOutOfMemory. Since 1.1.
//
// See docs/api/step_plan.md.
func NewStepPlan(desc StepPlanDesc) (*StepPlan, error) {
	f := newFrame("cattn_step_plan_create", "NewStepPlan", stepDescRenames...)
	defer f.free()
	p, err := f.stepPlanCreate(&desc)
	if err != nil {
		return nil, err
	}
	return &StepPlan{h: newHandle(p, cStepPlanDestroy)}, nil
}

// Close destroys the plan (cattn_step_plan_destroy). It waits for calls using the plan to
// return; later calls fail with StatusInvalidArgument. Runs already enqueued do not need the
// plan. Closing again, or a nil plan, is a no-op. The error is always nil.
//
// See docs/api/step_plan.md.
func (plan *StepPlan) Close() error {
	if plan == nil {
		return nil
	}
	return plan.h.Close()
}

func (plan *StepPlan) acquire(f *frame) (cStepPlan, error) {
	if plan == nil {
		return nil, f.argError("plan", "is NULL", "a nil *StepPlan", "a plan")
	}
	return plan.h.acquire(f, "plan", "StepPlan", false)
}

func (plan *StepPlan) release() { plan.h.release(false) }

// Shape returns the capacities the plan's outputs must hold (cattn_step_plan_get_shape).
// Since 1.1.
//
// See docs/api/step_plan.md.
func (plan *StepPlan) Shape() (StepPlanShape, error) {
	f := newFrame("cattn_step_plan_get_shape", "StepPlan.Shape")
	defer f.free()
	p, err := plan.acquire(f)
	if err != nil {
		return StepPlanShape{}, err
	}
	defer plan.release()
	return f.stepPlanGetShape(p)
}

// WorkspaceSize returns the device workspace a run needs, in bytes
// (cattn_step_plan_workspace_size): 0 for every plan of libcattn 1.1, the query existing so
// that a later version may need one. Pass StepOutputs.Workspace of that size. Since 1.1.
//
// See docs/api/step_plan.md.
func (plan *StepPlan) WorkspaceSize() (uint64, error) {
	f := newFrame("cattn_step_plan_workspace_size", "StepPlan.WorkspaceSize")
	defer f.free()
	p, err := plan.acquire(f)
	if err != nil {
		return 0, err
	}
	defer plan.release()
	return f.stepPlanWorkspaceSize(p)
}

// The C names of StepBatch's and StepOutputs' tensors, in the order stepPlanRun takes them.
var (
	stepBatchFields = [6]string{"batch->query_start_loc", "batch->seq_lens",
		"batch->block_table", "batch->cu_num_tokens", "batch->logits_indices",
		"batch->num_logits_indices"}
	stepOutputFields = [17]string{"outputs->dcp_local_seq_lens",
		"outputs->pcp_query_restore_idx", "outputs->mamba_block_table", "outputs->conv1d_nums",
		"outputs->conv1d_mlist", "outputs->conv1d_offsetlist", "outputs->conv1d_batch_ptr",
		"outputs->conv1d_token_chunk_offset_ptr", "outputs->local_query_start_loc",
		"outputs->local_seq_lens", "outputs->local_num_computed_tokens",
		"outputs->local_block_table", "outputs->decode_query_start_loc",
		"outputs->extend_query_start_loc", "outputs->extend_seq_lens", "outputs->counts",
		"outputs->counts_host"}
	// The 1.2 tensors that are not per group.
	stepBatchFields12 = [6]string{"batch->num_reqs", "batch->num_scheduled_tokens",
		"batch->idx_mapping", "batch->num_computed_tokens", "batch->num_draft_tokens",
		"batch->positions"}
	stepOutputFields12 = [9]string{"outputs->query_start_loc", "outputs->seq_lens",
		"outputs->positions", "outputs->num_computed_tokens", "outputs->logits_indices",
		"outputs->cu_num_logits", "outputs->expanded_idx_mapping", "outputs->expanded_local_pos",
		"outputs->token_to_req_indices"}
	// The drafter products' tensors (1.2).
	stepBatchFieldsDraft = [11]string{"batch->sampled_token_ids", "batch->discard_request_mask",
		"batch->backup_next_token_ids", "batch->cu_num_draft_tokens", "batch->target_token_ids",
		"batch->target_positions", "batch->prev_positions", "batch->num_accepted_tokens",
		"batch->valid_sampled_token_count", "batch->prev_num_draft_tokens",
		"batch->cpu_num_computed_tokens"}
	stepOutputFieldsDraft = [14]string{"outputs->next_token_ids",
		"outputs->valid_sampled_tokens_count", "outputs->token_indices_to_sample",
		"outputs->num_rejected_tokens", "outputs->draft_input_ids", "outputs->draft_positions",
		"outputs->is_rejected_token_mask", "outputs->is_masked_token_mask",
		"outputs->new_token_indices", "outputs->hidden_state_mapping",
		"outputs->draft_slot_mapping", "outputs->draft_seq_lens",
		"outputs->carried_num_computed_tokens", "outputs->carried_num_accepted_tokens"}
)

// stepRunTensors are a run's 1.2 tensors in C form, in stepBatchFields12 and
// stepOutputFields12 order, then per group, then the drafter's in stepBatchFieldsDraft and
// stepOutputFieldsDraft order.
type stepRunTensors struct {
	batch                           [6]cTensor
	out                             [9]cTensor
	kvBlockTables, kvNumBlocks      [MaxKVGroups]cTensor
	outBlockTables, outSlotMappings [MaxKVGroups]cTensor
	draftBatch                      [11]cTensor
	draftOut                        [14]cTensor
}

// Run computes every product of the plan from batch's device tensors in one kernel launch on
// stream (cattn_step_plan_run): no host sync, no allocation, capturable, and correct on every
// replay with new tensor contents. Everything that needs no device data is checked first:
// shapes, dtypes, devices, the capacities, the outputs' sizes, and that no output overlaps an
// input or another output (the products run side by side, so unlike the utilities no output
// may alias its input, but for the drafter outputs StepOutputs names). What needs the data is handled on the device as each product's
// utility does: a batch of more tokens than MaxNumTokens fills a capacity output with what
// fits while the counts still report the step's full values; a decreasing QueryStartLoc entry
// counts as an empty request; an int32 output keeps a value's low 32 bits. The fast-prefill
// product always computes the decode batch (the utility's MaxQueryLen == 1 passthrough is a
// host decision the caller makes). A captured graph keeps the tensors' addresses, so they
// must outlive it. Errors: StatusInvalidArgument (a required tensor nil, an output of an
// unselected product set, shapes, dtypes, devices - host tensors other than CountsHost, a
// CountsHost that is not mapped pinned memory -, a batch past a capacity, an overlap, counts
// for a StepDraftStep or StepBatchChange plan, which writes none),
// StatusInsufficientSize (an output below its capacity), StatusNotSupported (CPU-only build,
// no usable device, a tensor off its element alignment), StatusCUDAError. Since 1.1.
//
// See docs/api/step_plan.md.
func (plan *StepPlan) Run(batch StepBatch, out StepOutputs, stream Stream) error {
	f := newFrame("cattn_step_plan_run", "StepPlan.Run", "outputs", "out", "batch", "batch",
		"desc", "desc")
	defer f.free()
	p, err := plan.acquire(f)
	if err != nil {
		return err
	}
	defer plan.release()
	if out.CountsHost != nil && out.CountsHost.slice {
		// The kernel writes it after the call returns, when Go no longer pins it.
		return f.argError("outputs->counts_host", "is Go memory", "a slice-backed Tensor",
			"pinned host memory mapped for the device, by address (UnsafeDeviceTensor)")
	}
	var bs [6]cTensor
	bts := [6]*Tensor{batch.QueryStartLoc, batch.SeqLens, batch.BlockTable, batch.CuNumTokens,
		batch.LogitsIndices, batch.NumLogitsIndices}
	if err := f.tensorsInto(bs[:], stepBatchFields[:], bts[:]); err != nil {
		return err
	}
	var outs [17]cTensor
	ots := [17]*Tensor{out.DCPLocalSeqLens, out.PCPQueryRestoreIdx, out.MambaBlockTable,
		out.Conv1dNums, out.Conv1dMList, out.Conv1dOffsetList, out.Conv1dBatchPtr,
		out.Conv1dTokenChunkOffsetPtr, out.LocalQueryStartLoc, out.LocalSeqLens,
		out.LocalNumComputedTokens, out.LocalBlockTable, out.DecodeQueryStartLoc,
		out.ExtendQueryStartLoc, out.ExtendSeqLens, out.Counts, out.CountsHost}
	if err := f.tensorsInto(outs[:], stepOutputFields[:], ots[:]); err != nil {
		return err
	}
	var t12 stepRunTensors
	if err := f.tensorsInto(t12.batch[:], stepBatchFields12[:], []*Tensor{batch.NumReqs,
		batch.NumScheduledTokens, batch.IdxMapping, batch.NumComputedTokens, batch.NumDraftTokens,
		batch.Positions}); err != nil {
		return err
	}
	if err := f.tensorsInto(t12.out[:], stepOutputFields12[:], []*Tensor{out.QueryStartLoc,
		out.SeqLens, out.Positions, out.NumComputedTokens, out.LogitsIndices, out.CuNumLogits,
		out.ExpandedIdxMapping, out.ExpandedLocalPos, out.TokenToReqIndices}); err != nil {
		return err
	}
	for _, g := range []struct {
		dst *[MaxKVGroups]cTensor
		arg string
		ts  []*Tensor
	}{{&t12.kvBlockTables, "batch->kv_block_tables", batch.KVBlockTables},
		{&t12.kvNumBlocks, "batch->kv_num_blocks", batch.KVNumBlocks},
		{&t12.outBlockTables, "outputs->block_tables", out.BlockTables},
		{&t12.outSlotMappings, "outputs->slot_mappings", out.SlotMappings}} {
		if err := f.groupTensors(g.dst, g.arg, g.ts); err != nil {
			return err
		}
	}
	if err := f.tensorsInto(t12.draftBatch[:], stepBatchFieldsDraft[:], []*Tensor{
		batch.SampledTokenIDs, batch.DiscardRequestMask, batch.BackupNextTokenIDs,
		batch.CuNumDraftTokens, batch.TargetTokenIDs, batch.TargetPositions, batch.PrevPositions,
		batch.NumAcceptedTokens, batch.ValidSampledTokenCount, batch.PrevNumDraftTokens,
		batch.CPUNumComputedTokens}); err != nil {
		return err
	}
	if err := f.tensorsInto(t12.draftOut[:], stepOutputFieldsDraft[:], []*Tensor{
		out.NextTokenIDs, out.ValidSampledTokensCount, out.TokenIndicesToSample,
		out.NumRejectedTokens, out.DraftInputIDs, out.DraftPositions, out.IsRejectedTokenMask,
		out.IsMaskedTokenMask, out.NewTokenIndices, out.HiddenStateMapping, out.DraftSlotMapping,
		out.DraftSeqLens, out.CarriedNumComputedTokens, out.CarriedNumAcceptedTokens}); err != nil {
		return err
	}
	return f.stepPlanRun(p, bs, outs, &t12, out.Workspace, out.WorkspaceBytes, stream)
}

func (f *frame) stepPlanCreate(d *StepPlanDesc) (cStepPlan, error) {
	if len(d.KVGroups) > MaxKVGroups {
		return nil, f.argError("desc->kv_groups", "has too many groups",
			strconv.Itoa(len(d.KVGroups)), "at most "+strconv.Itoa(MaxKVGroups)+
				" (CATTN_MAX_KV_GROUPS)")
	}
	c := cArgs[C.cattn_step_plan_desc_t](f)
	// The header's initialiser first: a 1.2 field the desc leaves at its zero value keeps the
	// header's default.
	cStepPlanDescInitInto(c)
	c.products = C.uint32_t(d.Products)
	c.max_num_reqs = C.int64_t(d.MaxNumReqs)
	c.max_num_tokens = C.int64_t(d.MaxNumTokens)
	c.max_num_blocks_per_req = C.int64_t(d.MaxNumBlocksPerReq)
	c.max_num_logits = C.int64_t(d.MaxNumLogits)
	c.dcp.dcp_size = C.int64_t(nonZero(d.DCP.DCPSize, 1))
	c.dcp.dcp_rank = C.int64_t(d.DCP.Ranks.c())
	c.dcp.dcp_kv_cache_interleave_size = C.int64_t(nonZero(d.DCP.InterleaveSize, 1))
	c.mamba.block_size = C.int64_t(nonZero(d.Mamba.BlockSize, 1))
	c.mamba.num_speculative_blocks = C.int64_t(d.Mamba.NumSpeculativeBlocks)
	c.mamba.mamba_cache_mode = C.int32_t(d.Mamba.Mode)
	c.conv1d.block_m = C.int64_t(nonZero(d.Conv1d.BlockM, 8))
	c.local_attention.attn_chunk_size = C.int64_t(d.LocalAttention.AttnChunkSize)
	c.local_attention.block_size = C.int64_t(d.LocalAttention.BlockSize)
	c.extend.n = C.int64_t(orDefault(d.Extend.N, 1))
	c.max_num_persistent_reqs = C.int64_t(d.MaxNumPersistentReqs)
	in := &d.Inputs
	c.inputs.num_kv_groups = C.int32_t(len(d.KVGroups))
	c.inputs.slot_mapping_contract = C.int32_t(in.SlotMappingContract)
	if in.DCPSize != 0 {
		c.inputs.dcp_size = C.int64_t(in.DCPSize)
	}
	c.inputs.dcp_rank = C.int64_t(in.DCPRank)
	if in.InterleaveSize != 0 {
		c.inputs.dcp_kv_cache_interleave_size = C.int64_t(in.InterleaveSize)
	}
	if in.NumNewSampledTokens != nil {
		c.inputs.num_new_sampled_tokens = C.int64_t(*in.NumNewSampledTokens)
	}
	if in.DecodeThreshold != nil {
		c.inputs.decode_threshold = C.int64_t(*in.DecodeThreshold)
	}
	c.inputs.require_uniform = b2i(in.RequireUniform)
	c.inputs.table_group = C.int32_t(in.TableGroup)
	for g, kv := range d.KVGroups {
		c.kv_groups[g].block_size = C.int64_t(kv.BlockSize)
		c.kv_groups[g].kernel_block_size = C.int64_t(kv.KernelBlockSize)
		c.kv_groups[g].max_num_blocks = C.int64_t(kv.MaxNumBlocks)
		c.kv_groups[g].slot_mode = C.int32_t(kv.SlotMode)
	}
	dr := &d.Draft
	c.draft.vocab_size = C.int64_t(dr.VocabSize)
	if dr.NumPaddingSlotsPerRequest != 0 {
		c.draft.num_padding_slots_per_request = C.int64_t(dr.NumPaddingSlotsPerRequest)
	}
	c.draft.padding_token_id = C.int64_t(dr.PaddingTokenID)
	c.draft.parallel_drafting_token_id = C.int64_t(dr.ParallelDraftingTokenID)
	c.draft.max_tokens_per_request = C.int64_t(dr.MaxTokensPerRequest)
	c.draft.block_size = C.int64_t(dr.BlockSize)
	c.draft.max_model_len = C.int64_t(dr.MaxModelLen)
	c.draft.shift_input_ids = b2i(dr.ShiftInputIDs)
	out := (*cStepPlan)(f.alloc(unsafe.Sizeof(cStepPlan(nil))))
	if err := f.status(cStepPlanCreate(c, out, f.msg)); err != nil {
		return nil, err
	}
	return *out, nil
}

func (f *frame) stepPlanGetShape(p cStepPlan) (StepPlanShape, error) {
	s := cArgs[C.cattn_step_plan_shape_t](f)
	if err := f.status(cStepPlanGetShape(p, s, f.msg)); err != nil {
		return StepPlanShape{}, err
	}
	return StepPlanShape{
		RestoreCapacity:    int64(s.restore_capacity),
		Conv1dCapacity:     int64(s.conv1d_capacity),
		LocalCapacity:      int64(s.local_capacity),
		LocalPages:         int64(s.local_pages),
		MambaColumns:       int64(s.mamba_columns),
		DraftTokenCapacity: int64(s.draft_token_capacity),
	}, nil
}

func (f *frame) stepPlanWorkspaceSize(p cStepPlan) (uint64, error) {
	var bytes C.size_t
	err := f.status(cStepPlanWorkspaceSize(p, &bytes, f.msg))
	return uint64(bytes), err
}

// b holds the batch's 1.1 tensors in cattn_step_batch_t order (stepBatchFields), o the
// outputs' in cattn_step_outputs_t order (stepOutputFields), t the 1.2 ones.
func (f *frame) stepPlanRun(p cStepPlan, b [6]cTensor, o [17]cTensor, t *stepRunTensors,
	workspace uintptr, workspaceBytes uint64, stream Stream) error {
	cb := cArgs[C.cattn_step_batch_t](f)
	cStepBatchInit(cb)
	cb.query_start_loc, cb.seq_lens, cb.block_table = b[0], b[1], b[2]
	cb.cu_num_tokens, cb.logits_indices, cb.num_logits_indices = b[3], b[4], b[5]
	cb.num_reqs, cb.num_scheduled_tokens, cb.idx_mapping = t.batch[0], t.batch[1], t.batch[2]
	cb.num_computed_tokens, cb.num_draft_tokens, cb.positions = t.batch[3], t.batch[4], t.batch[5]
	co := cArgs[C.cattn_step_outputs_t](f)
	cStepOutputsInit(co)
	co.dcp_local_seq_lens, co.pcp_query_restore_idx, co.mamba_block_table = o[0], o[1], o[2]
	co.conv1d_nums, co.conv1d_mlist, co.conv1d_offsetlist = o[3], o[4], o[5]
	co.conv1d_batch_ptr, co.conv1d_token_chunk_offset_ptr = o[6], o[7]
	co.local_query_start_loc, co.local_seq_lens = o[8], o[9]
	co.local_num_computed_tokens, co.local_block_table = o[10], o[11]
	co.decode_query_start_loc, co.extend_query_start_loc, co.extend_seq_lens = o[12], o[13], o[14]
	co.counts, co.counts_host = o[15], o[16]
	setAddr(&co.workspace, workspace)
	co.workspace_bytes = C.size_t(workspaceBytes)
	co.query_start_loc, co.seq_lens, co.positions = t.out[0], t.out[1], t.out[2]
	co.num_computed_tokens, co.logits_indices, co.cu_num_logits = t.out[3], t.out[4], t.out[5]
	co.expanded_idx_mapping, co.expanded_local_pos = t.out[6], t.out[7]
	co.token_to_req_indices = t.out[8]
	for g := 0; g < MaxKVGroups; g++ {
		cb.kv_block_tables[g], cb.kv_num_blocks[g] = t.kvBlockTables[g], t.kvNumBlocks[g]
		co.block_tables[g], co.slot_mappings[g] = t.outBlockTables[g], t.outSlotMappings[g]
	}
	db := &t.draftBatch
	cb.sampled_token_ids, cb.discard_request_mask, cb.backup_next_token_ids = db[0], db[1], db[2]
	cb.cu_num_draft_tokens, cb.target_token_ids, cb.target_positions = db[3], db[4], db[5]
	cb.prev_positions, cb.num_accepted_tokens = db[6], db[7]
	cb.valid_sampled_token_count, cb.prev_num_draft_tokens = db[8], db[9]
	cb.cpu_num_computed_tokens = db[10]
	do := &t.draftOut
	co.next_token_ids, co.valid_sampled_tokens_count = do[0], do[1]
	co.token_indices_to_sample, co.num_rejected_tokens = do[2], do[3]
	co.draft_input_ids, co.draft_positions = do[4], do[5]
	co.is_rejected_token_mask, co.is_masked_token_mask = do[6], do[7]
	co.new_token_indices, co.hidden_state_mapping = do[8], do[9]
	co.draft_slot_mapping, co.draft_seq_lens = do[10], do[11]
	co.carried_num_computed_tokens, co.carried_num_accepted_tokens = do[12], do[13]
	return f.status(cStepPlanRun(p, cb, co, C.uintptr_t(stream), f.msg))
}

// stepPlanDescInit returns CATTN_STEP_PLAN_DESC_INIT as a StepPlanDesc (tests compare it with
// DefaultStepPlanDesc).
func stepPlanDescInit() StepPlanDesc {
	d := cStepPlanDescInit()
	return StepPlanDesc{
		Products:           StepProduct(d.products),
		MaxNumReqs:         int64(d.max_num_reqs),
		MaxNumTokens:       int64(d.max_num_tokens),
		MaxNumBlocksPerReq: int64(d.max_num_blocks_per_req),
		MaxNumLogits:       int64(d.max_num_logits),
		DCP: StepDCPParams{DCPSize: int64(d.dcp.dcp_size), Ranks: DCPRank(int64(d.dcp.dcp_rank)),
			InterleaveSize: int64(d.dcp.dcp_kv_cache_interleave_size)},
		Mamba: StepMambaParams{BlockSize: int64(d.mamba.block_size),
			NumSpeculativeBlocks: int64(d.mamba.num_speculative_blocks),
			Mode:                 MambaCacheMode(d.mamba.mamba_cache_mode)},
		Conv1d: StepConv1dParams{BlockM: int64(d.conv1d.block_m)},
		LocalAttention: StepLocalAttentionParams{
			AttnChunkSize: int64(d.local_attention.attn_chunk_size),
			BlockSize:     int64(d.local_attention.block_size)},
		Extend:               StepExtendParams{N: Ptr(int64(d.extend.n))},
		MaxNumPersistentReqs: int64(d.max_num_persistent_reqs),
		Inputs:               stepInputsParamsOf(&d.inputs),
		KVGroups:             kvGroupsOf(&d),
		Draft:                stepDraftParamsOf(&d.draft),
	}
}

// stepDraftParamsOf returns C drafter parameters as StepDraftParams, every field spelled out.
func stepDraftParamsOf(p *C.cattn_step_draft_params_t) StepDraftParams {
	return StepDraftParams{
		VocabSize:                 int64(p.vocab_size),
		NumPaddingSlotsPerRequest: int64(p.num_padding_slots_per_request),
		PaddingTokenID:            int64(p.padding_token_id),
		ParallelDraftingTokenID:   int64(p.parallel_drafting_token_id),
		MaxTokensPerRequest:       int64(p.max_tokens_per_request),
		BlockSize:                 int64(p.block_size),
		MaxModelLen:               int64(p.max_model_len),
		ShiftInputIDs:             p.shift_input_ids != 0,
	}
}

// stepInputsParamsOf returns C step-input parameters as StepInputsParams, every field spelled
// out (the pointers set).
func stepInputsParamsOf(p *C.cattn_step_inputs_params_t) StepInputsParams {
	return StepInputsParams{
		SlotMappingContract: SlotMappingContract(p.slot_mapping_contract),
		DCPSize:             int64(p.dcp_size),
		DCPRank:             int64(p.dcp_rank),
		InterleaveSize:      int64(p.dcp_kv_cache_interleave_size),
		NumNewSampledTokens: Ptr(int64(p.num_new_sampled_tokens)),
		DecodeThreshold:     Ptr(int64(p.decode_threshold)),
		RequireUniform:      p.require_uniform != 0,
		TableGroup:          int32(p.table_group),
	}
}

// kvGroupsOf returns the first num_kv_groups groups of a C desc (nil for none).
func kvGroupsOf(d *C.cattn_step_plan_desc_t) []KVGroupParams {
	var groups []KVGroupParams
	for g := 0; g < int(d.inputs.num_kv_groups) && g < MaxKVGroups; g++ {
		kv := &d.kv_groups[g]
		groups = append(groups, KVGroupParams{BlockSize: int64(kv.block_size),
			KernelBlockSize: int64(kv.kernel_block_size), MaxNumBlocks: int64(kv.max_num_blocks),
			SlotMode: SlotMode(kv.slot_mode)})
	}
	return groups
}
