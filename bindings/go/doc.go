// SPDX-License-Identifier: Apache-2.0

// Package cattn is the Go binding of libcattn, vLLM's attention-backend metadata utilities
// behind a C ABI (include/cattn.h). It is built with cgo and links libcattn.so, or with
// -tags cattn_dlopen opens it at run time.
//
// # Reference
//
// What each call computes, every rule and status, the parity with vLLM, worked examples and
// the history are documented once, in the libcattn repository's docs/api pages: one per
// utility, docs/api/<utility>.md (index: docs/api/README.md; the rules every call shares:
// docs/api/conventions.md). The doc comment of each function here ends with its page and
// states only the Go side: types, zero values, errors and ownership.
//
// # Building
//
// By default the package finds libcattn with pkg-config ("#cgo pkg-config: cattn"): put a
// cattn.pc on PKG_CONFIG_PATH. With -tags cattn_srctree it builds against the source tree
// instead (include/, and libcattn.so from build/ or build-cpu/, the folders of the default and
// cpu CMake presets). With -tags
// cattn_dlopen it does not link libcattn: Load (or the first call) opens it at run time with
// dlopen, $CATTN_LIBRARY or libcattn.so.1, and calls it through cattn_get_api's table.
// README.md has the exact commands.
//
// # Naming
//
// Each utility is in a file named after vLLM's function (get_pcp_query_restore_idx.go, ...).
// Go names are the C names without the cattn_ prefix in Go case (GetPCPQueryRestoreIdx for
// cattn_get_pcp_query_restore_idx); creators are New..., and calls on a handle are its methods
// (LocalAttentionPlan.Fill for cattn_local_attention_plan_fill, StepPlan.Run for
// cattn_step_plan_run). Argument structs carry the C
// struct's fields in Go case, and their zero value is the C *_INIT value: where C's default is
// not zero, a field C refuses at 0 takes 0 for the default (DCPSize, BlockM), and a field whose
// 0 is valid is named or typed so that its zero is the default (NonCausal, Ranks of type
// DCPRanks, N as a *int64; see defaults.go).
//
// # One-call helpers
//
// Every host utility also has a helper on Go slices that makes the size query, allocates the
// outputs and runs the call: DCPLocalSeqLens, DCPLocalSeqLensAllRanks, PCPQueryRestoreIdx,
// CausalConv1dMetadata, LocalAttentionVirtualBatches, MambaBlockTable, ExtendAllQueriesByNOf,
// KVSharingFastPrefillCommonAttnMetadata, SplitQueryStartLoc(WithExtends),
// SplitPrefillChunks, ReorderBatchToSplitDecodesAndPrefills, NaiveQueryLensOf,
// NumComputedTokens, TokenToReqIndicesOf, MMPrefixRangeTensor, MMPrefixQueryRanges,
// Log2LSEToLnOf and FusedPCPQKVSelectOf, and for the step inputs of 1.2
// PreparePosSeqLensHost, GatherBlockTablesHost, ComputeSlotMappingsHost,
// CombineSampledAndDraftTokensHost and StepBatchCheckHost, and for speculative decoding
// EagleStepUpdateSlotMappingAndMetadataHost, EaglePrepareInputsPaddedHost,
// EaglePrepareNextTokenPaddedHost, ComputeNewSlotMappingHost, CopyAndExpandEagleInputsHost and
// UpdateNumComputedTokensForBatchChangeHost. Their index slices are []int32 or []int64
// (Index), and their results have the type given; flags are []bool. Their parameters come in
// the order of the C args struct's fields, as the C++ and Rust helpers' do.
//
// # Step inputs
//
// Since libcattn 1.2, PreparePosSeqLens, GatherBlockTables, ComputeSlotMappings,
// CombineSampledAndDraftTokens and StepBatchCheck compute what an engine builds every step
// before attention from the scheduler's output (query_start_loc, seq_lens, positions, the
// batch's block tables, slot mappings, logits indices), on host or device tensors, under one
// padding contract (prepare_pos_seq_lens.go). Their defaults (one new sampled token, one DCP
// rank) are the header's initialisers, which the cgo layer writes before the Go fields: a zero
// DCPSize or a nil NumNewSampledTokens keeps them. StepInputsSize counts the live tokens and
// logits their outputs need, and the Host helpers size their results with it. The step plan
// computes the same products in its launch (StepInputProducts).
//
// # Speculative decoding
//
// Since libcattn 1.2, EagleStepUpdateSlotMappingAndMetadata, EaglePrepareInputsPadded,
// EaglePrepareNextTokenPadded, ComputeNewSlotMapping, CopyAndExpandEagleInputs and
// UpdateNumComputedTokensForBatchChange are the helpers of vLLM's
// vllm/v1/spec_decode/utils.py, one call each, on host or device tensors
// (eagle_step_update_slot_mapping_and_metadata.go). Their flag tensors hold one byte per
// entry (Bool, UInt8 or Int8), and their slots are exact int64 where vLLM wraps at 2^31.
// The step plan computes them in its launch (StepDraftProducts, with StepPlanDesc.Draft).
//
// # Tensors
//
// A Tensor is a borrowed DLPack view. Host tensors are made from Go slices (Int32Tensor,
// Int64Tensor, Float32Tensor, BytesTensor) and are used in place: for the duration of a call
// the slice is pinned (runtime.Pinner) and its address stored in a DLTensor that lives in C
// memory, as do the shape and stride arrays and every argument struct, all freed when the call
// returns. C never sees Go memory that holds Go pointers, and never keeps a Go pointer. Before
// each call the view (shape, strides, byte offset, element size) is checked against the
// slice's length. Device tensors are described by address with UnsafeDeviceTensor and run on
// the Stream passed with them.
//
// # Errors
//
// Every failing call returns an *Error with the Status and libcattn's message for that call,
// in Go terms: the Go function and the Go argument or field ("cattn.GetDCPLocalSeqLens:
// args.Ranks is out of range ...") where libcattn names the C ones (kept in CMessage).
// The message is thread-local in C; it is copied inside the same cgo call as the failing
// function, so it belongs to the call even though goroutines move between OS threads. A
// failed call has written nothing to its outputs.
//
// # Device calls and the step plan
//
// Since libcattn 1.1, ComputeCausalConv1dMetadataCapturable and
// MakeLocalAttentionVirtualBatchesCapturable compute from device tensors alone, and a StepPlan
// (NewStepPlan, StepPlan.Run) computes several utilities' values for one engine step in a
// single launch; all three are capturable in a CUDA graph and correct on every replay. They
// take device tensors only (UnsafeDeviceTensor): host tensors are StatusInvalidArgument (the
// utilities have host calls), and a CPU-only libcattn answers StatusNotSupported.
//
// # Handles and concurrency
//
// Context, LocalAttentionPlan, StepPlan and Comm own C handles: Close them (Close is
// idempotent, and a finalizer is only a safety net). Every function may be called from any number of goroutines
// at once, provided no two write the same output tensor; a handle may be shared, and Close
// waits for calls in progress on it. A Comm serialises its collectives, as NCCL requires.
package cattn
