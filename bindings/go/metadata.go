// SPDX-License-Identifier: Apache-2.0

package cattn

// CommonAttnMetadata is vLLM's CommonAttentionMetadata (cattn_common_attn_metadata_t): the
// metadata of one batch, read by ExtendAllQueriesByN, MakeKVSharingFastPrefillCommonAttnMetadata
// and MakeLocalAttentionVirtualBatches, and written by them into a caller-provided value.
// Tensor fields are borrowed views, nil when absent; host mirrors (*CPU) are host tensors and
// the others live on the batch's device.
//
// When a call writes a metadata value it sets its tensor fields to the *Tensor values of the
// call's arguments (an output that copies an input's field gets the input's *Tensor), its
// scalars, and Causal.
//
// The zero value is CATTN_COMMON_ATTN_METADATA_INIT: causal (NonCausal false), no tensors,
// MaxLogitsPerReq not given.
//
// See docs/api/common_attn_metadata.md.
type CommonAttnMetadata struct {
	QueryStartLoc        *Tensor // [num_reqs + 1] cumulative query lengths
	QueryStartLocCPU     *Tensor // host mirror of QueryStartLoc, may be nil
	SeqLens              *Tensor // [num_reqs] sequence (context + query) lengths
	SeqLensCPU           *Tensor // host mirror of SeqLens, may be nil
	NumComputedTokensCPU *Tensor // [num_reqs], host, may be nil
	BlockTableTensor     *Tensor // [num_reqs, max_blocks_per_req], may be nil
	SlotMapping          *Tensor // [num_actual_tokens (+ padding)], may be nil
	LogitsIndicesPadded  *Tensor // [>= NumLogitsIndices], may be nil

	NumReqs          int64
	NumActualTokens  int64
	MaxQueryLen      int64
	MaxSeqLen        int64
	NumLogitsIndices int64 // meaningful only with LogitsIndicesPadded
	// NonCausal is the C causal field inverted (causal = 0), so that the zero value is
	// causal as in CATTN_COMMON_ATTN_METADATA_INIT and in vLLM's batches.
	NonCausal bool

	// Since 1.1: vLLM's newer fields, each nil when absent.
	Positions            *Tensor // [num_actual_tokens (+ padding)] token positions
	IsPrefilling         *Tensor // [num_reqs] 8-bit booleans: still in the prompt
	CausalPerReq         *Tensor // [num_reqs] 8-bit booleans, vLLM's causal as a tensor
	DCPLocalSeqLens      *Tensor // [num_reqs] this DCP rank's sequence lengths
	DCPLocalSeqLensCPU   *Tensor // host mirror of DCPLocalSeqLens
	SeqLensCPUUpperBound *Tensor // [num_reqs] host upper bound of SeqLens
	EncoderSeqLens       *Tensor // [num_reqs] cross-attention encoder lengths
	EncoderSeqLensCPU    *Tensor // host mirror of EncoderSeqLens
	MaxLogitsPerReq      int64   // the most logits indices of one request; 0 = not given
}
