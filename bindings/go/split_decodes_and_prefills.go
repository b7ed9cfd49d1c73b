// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "unsafe"

// How the C fields of the split calls' args structs read in SplitBatch, SplitOptions and
// SplitCapturableBatch (the b and o parameters).
var (
	splitRenames = []string{"args->query_start_loc_cpu", "b.QueryStartLocCPU",
		"args->num_reqs", "b.NumReqs", "args->num_actual_tokens", "b.NumActualTokens",
		"args->max_query_len", "b.MaxQueryLen", "args->decode_threshold", "o.DecodeThreshold",
		"args->require_uniform", "o.RequireUniform", "args->treat_short_extends_as_decodes",
		"o.CountShortExtendsAsPrefills", "args->is_prefilling_cpu", "o.IsPrefilling"}
	splitDeviceRenames = []string{"args->query_start_loc", "b.QueryStartLoc",
		"args->num_actual_tokens", "b.NumActualTokens", "args->max_query_len", "b.MaxQueryLen",
		"args->decode_threshold", "o.DecodeThreshold", "args->require_uniform",
		"o.RequireUniform", "args->treat_short_extends_as_decodes",
		"o.CountShortExtendsAsPrefills", "args->is_prefilling", "o.IsPrefilling",
		"args->result", "result"}
)

// SplitBatch is the batch a split reads: the fields of vLLM's CommonAttentionMetadata it uses.
type SplitBatch struct {
	QueryStartLocCPU *Tensor // in: host [NumReqs + 1] int32/int64
	NumReqs          int64   // in: B >= 0
	// NumActualTokens: T, may include CUDA-graph padding. 0 (the zero value) means
	// CATTN_FROM_QUERY_START_LOC, the _INIT value: libcattn derives QueryStartLocCPU[NumReqs],
	// which is 0 for the batches whose T is 0 in vLLM.
	NumActualTokens int64
	// MaxQueryLen: the metadata's max_query_len. 0 (the zero value) means
	// CATTN_FROM_QUERY_START_LOC: libcattn derives the longest query (0 for an empty batch).
	MaxQueryLen int64
}

// SplitOptions are the options of SplitDecodesAndPrefills. The zero value is vLLM's defaults
// and CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT's.
type SplitOptions struct {
	// DecodeThreshold: [0, INT32_MAX]; nil means 1, vLLM's default (cattn.Ptr[int64](t) for
	// another).
	DecodeThreshold *int64
	RequireUniform  bool
	// CountShortExtendsAsPrefills is vLLM's treat_short_extends_as_decodes=False; it then reads
	// IsPrefilling.
	CountShortExtendsAsPrefills bool
	// IsPrefilling: [NumReqs], one byte per request (UInt8/Int8, nonzero = still prefilling),
	// host for the host call and device for the device call; may be nil otherwise.
	IsPrefilling *Tensor
}

// DecodePrefillSplit is the result of SplitDecodesAndPrefills.
type DecodePrefillSplit struct {
	NumDecodes, NumPrefills, NumDecodeTokens, NumPrefillTokens int64
}

// DecodeExtendPrefillSplit is the result of SplitDecodesPrefillsAndExtends.
type DecodeExtendPrefillSplit struct {
	NumDecodes, NumExtends, NumPrefills                int64
	NumDecodeTokens, NumExtendTokens, NumPrefillTokens int64
}

// ReorderResult is what ReorderBatchToSplitDecodesAndPrefillsInto reports besides its tensors.
type ReorderResult struct {
	Changed  bool     // vLLM's return value
	NumSwaps int64    // rows of the swap list written
	Counts   [4]int64 // requests per region: decode, short extend, long extend, prefill
}

// ReorderPlan is the reorder vLLM applies to a batch (ReorderBatchToSplitDecodesAndPrefills).
type ReorderPlan struct {
	Changed bool
	// IndexMap[i] is the position before the reorder of the request at position i after it.
	IndexMap []int64
	// Swaps are vLLM's swap_states(a, b) calls, in its order.
	Swaps  [][2]int64
	Counts [4]int64
}

// SplitDecodesAndPrefills splits an ordered batch at its first prefill (vLLM's
// split_decodes_and_prefills, cattn_split_decodes_and_prefills; its quirks are kept, and what
// vLLM raises is an *Error with CATTN_INVALID_ARGUMENT).
//
// See docs/api/split_decodes_and_prefills.md.
func SplitDecodesAndPrefills(b SplitBatch, o SplitOptions) (DecodePrefillSplit, error) {
	f := newFrame("cattn_split_decodes_and_prefills", "SplitDecodesAndPrefills", splitRenames...)
	defer f.free()
	q, err := f.tensor("args->query_start_loc_cpu", b.QueryStartLocCPU)
	if err != nil {
		return DecodePrefillSplit{}, err
	}
	isp, err := f.tensor("args->is_prefilling_cpu", o.IsPrefilling)
	if err != nil {
		return DecodePrefillSplit{}, err
	}
	return f.splitDecodesAndPrefills(q, isp, b, o)
}

// The C fields of the split calls as the one-call helpers' parameters: the batch comes from
// queryStartLoc.
var splitHelperRenames = []string{"args->query_start_loc_cpu", "queryStartLoc",
	"args->num_reqs", "len(queryStartLoc) - 1", "args->num_actual_tokens",
	"queryStartLoc's last entry", "args->max_query_len", "the longest query",
	"args->decode_threshold", "decodeThreshold", "args->seq_lens_cpu_upper_bound",
	"seqLensUpperBound"}

// splitBatchOf describes the batch of a host query_start_loc; T (its last entry) and
// max_query_len (the longest query) are left to libcattn to derive.
func splitBatchOf[T Index](queryStartLoc []T) SplitBatch {
	return SplitBatch{QueryStartLocCPU: IndexTensor(queryStartLoc), NumReqs: numReqs(queryStartLoc)}
}

// splitCount is a SplitBatch count for C: 0, the zero value, is CATTN_FROM_QUERY_START_LOC.
func splitCount(v int64) C.int64_t {
	if v == 0 {
		return C.CATTN_FROM_QUERY_START_LOC
	}
	return C.int64_t(v)
}

// SplitQueryStartLoc is SplitDecodesAndPrefills in one call for the common case: a host
// query_start_loc ([B + 1]), T its last entry, max_query_len the longest query, and vLLM's
// defaults but decodeThreshold (vLLM's default is 1).
//
// See docs/api/split_decodes_and_prefills.md.
func SplitQueryStartLoc[T Index](queryStartLoc []T, decodeThreshold int64) (DecodePrefillSplit, error) {
	f := newFrame("cattn_split_decodes_and_prefills", "SplitQueryStartLoc", splitHelperRenames...)
	defer f.free()
	b := splitBatchOf(queryStartLoc)
	q, err := f.tensor("args->query_start_loc_cpu", b.QueryStartLocCPU)
	if err != nil {
		return DecodePrefillSplit{}, err
	}
	return f.splitDecodesAndPrefills(q, nil, b, SplitOptions{DecodeThreshold: &decodeThreshold})
}

// SplitQueryStartLocWithExtends is SplitDecodesPrefillsAndExtends in one call, as
// SplitQueryStartLoc is SplitDecodesAndPrefills: the batch of queryStartLoc ([B + 1]) with
// seqLensUpperBound ([B], vLLM's seq_lens_cpu_upper_bound) split into decodes, extends and
// prefills at decodeThreshold. Since 1.1.
//
// See docs/api/split_decodes_and_prefills.md.
func SplitQueryStartLocWithExtends[T Index](queryStartLoc, seqLensUpperBound []T,
	decodeThreshold int64) (DecodeExtendPrefillSplit, error) {
	f := newFrame("cattn_split_decodes_prefills_and_extends", "SplitQueryStartLocWithExtends",
		splitHelperRenames...)
	defer f.free()
	b := splitBatchOf(queryStartLoc)
	var ts [2]cTensor
	if err := f.tensorsInto(ts[:], []string{"args->query_start_loc_cpu",
		"args->seq_lens_cpu_upper_bound"}, []*Tensor{b.QueryStartLocCPU,
		IndexTensor(seqLensUpperBound)}); err != nil {
		return DecodeExtendPrefillSplit{}, err
	}
	return f.splitDecodesPrefillsAndExtends(ts[0], ts[1], b, decodeThreshold)
}

// SplitDecodesPrefillsAndExtends splits an ordered batch into decodes, extends and prefills
// (vLLM's split_decodes_prefills_and_extends, cattn_split_decodes_prefills_and_extends).
// seqLensUpperBound is host [NumReqs]; nil fails past the first step, as vLLM's assert.
//
// See docs/api/split_decodes_and_prefills.md.
func SplitDecodesPrefillsAndExtends(b SplitBatch, seqLensUpperBound *Tensor,
	decodeThreshold int64) (DecodeExtendPrefillSplit, error) {
	f := newFrame("cattn_split_decodes_prefills_and_extends", "SplitDecodesPrefillsAndExtends",
		append(splitRenames, "args->seq_lens_cpu_upper_bound", "seqLensUpperBound",
			"args->decode_threshold", "decodeThreshold")...)
	defer f.free()
	q, err := f.tensor("args->query_start_loc_cpu", b.QueryStartLocCPU)
	if err != nil {
		return DecodeExtendPrefillSplit{}, err
	}
	ub, err := f.tensor("args->seq_lens_cpu_upper_bound", seqLensUpperBound)
	if err != nil {
		return DecodeExtendPrefillSplit{}, err
	}
	return f.splitDecodesPrefillsAndExtends(q, ub, b, decodeThreshold)
}

// SplitCapturableBatch is a batch on the device for the device splits. NumActualTokens and
// MaxQueryLen are device [1] tensors, or nil for query_start_loc[B] and the longest query.
type SplitCapturableBatch struct {
	QueryStartLoc   *Tensor // device [B + 1] int32/int64
	NumActualTokens *Tensor
	MaxQueryLen     *Tensor
	Stream          Stream
}

// SplitDecodesAndPrefillsCapturable writes the split of a device batch to result, a device [4]
// int32/int64 tensor, with one kernel on b.Stream (cattn_split_decodes_and_prefills_capturable).
//
// See docs/api/split_decodes_and_prefills.md.
func SplitDecodesAndPrefillsCapturable(b SplitCapturableBatch, o SplitOptions, result *Tensor) error {
	f := newFrame("cattn_split_decodes_and_prefills_capturable", "SplitDecodesAndPrefillsCapturable",
		splitDeviceRenames...)
	defer f.free()
	ts := make([]cTensor, 5)
	if err := f.tensorsInto(ts, []string{"args->query_start_loc", "args->is_prefilling",
		"args->num_actual_tokens", "args->max_query_len", "args->result"},
		[]*Tensor{b.QueryStartLoc, o.IsPrefilling, b.NumActualTokens, b.MaxQueryLen, result}); err != nil {
		return err
	}
	return f.splitDecodesAndPrefillsCapturable(ts[0], ts[1], ts[2], ts[3], ts[4], o, b.Stream)
}

// SplitDecodesPrefillsAndExtendsCapturable writes the extends split of a device batch to result,
// a device [6] tensor (cattn_split_decodes_prefills_and_extends_capturable).
//
// See docs/api/split_decodes_and_prefills.md.
func SplitDecodesPrefillsAndExtendsCapturable(b SplitCapturableBatch, seqLensUpperBound *Tensor,
	decodeThreshold int64, result *Tensor) error {
	f := newFrame("cattn_split_decodes_prefills_and_extends_capturable",
		"SplitDecodesPrefillsAndExtendsCapturable", append(splitDeviceRenames,
			"args->seq_lens_upper_bound", "seqLensUpperBound", "args->decode_threshold",
			"decodeThreshold")...)
	defer f.free()
	ts := make([]cTensor, 5)
	if err := f.tensorsInto(ts, []string{"args->query_start_loc", "args->seq_lens_upper_bound",
		"args->num_actual_tokens", "args->max_query_len", "args->result"},
		[]*Tensor{b.QueryStartLoc, seqLensUpperBound, b.NumActualTokens, b.MaxQueryLen, result}); err != nil {
		return err
	}
	return f.splitDecodesPrefillsAndExtendsCapturable(ts[0], ts[1], ts[2], ts[3], ts[4],
		decodeThreshold, b.Stream)
}

// SplitPrefillChunksInto writes the chunks of prefill lengths seqLens (host [n]) that fit
// workspaceSize tokens into chunks (host [>= count, 2], or nil for the size query) and returns
// their count (vLLM's split_prefill_chunks, cattn_split_prefill_chunks).
//
// See docs/api/split_prefill_chunks.md.
func SplitPrefillChunksInto(seqLens *Tensor, workspaceSize, requestOffset int64,
	chunks *Tensor) (int64, error) {
	f := newFrame("cattn_split_prefill_chunks", "SplitPrefillChunksInto", "args->seq_lens_cpu",
		"seqLens", "args->workspace_size", "workspaceSize", "workspace_size", "workspaceSize", "args->request_offset",
		"requestOffset", "args->chunks", "chunks")
	defer f.free()
	ts := make([]cTensor, 2)
	if err := f.tensorsInto(ts, []string{"args->seq_lens_cpu", "args->chunks"},
		[]*Tensor{seqLens, chunks}); err != nil {
		return 0, err
	}
	return f.splitPrefillChunks(ts[0], ts[1], workspaceSize, requestOffset)
}

// SplitPrefillChunks is SplitPrefillChunksInto in one call: the half-open bounds of every
// chunk of the prefill lengths seqLens, plus requestOffset (the size query, then the chunks).
//
// See docs/api/split_prefill_chunks.md.
func SplitPrefillChunks[T Index](seqLens []T, workspaceSize, requestOffset int64) ([][2]int64, error) {
	f := newFrame("cattn_split_prefill_chunks", "SplitPrefillChunks", "args->seq_lens_cpu",
		"seqLens", "args->workspace_size", "workspaceSize", "workspace_size", "workspaceSize",
		"args->request_offset", "requestOffset", "args->chunks", "the result")
	defer f.free()
	seq, err := f.tensor("args->seq_lens_cpu", IndexTensor(seqLens))
	if err != nil {
		return nil, err
	}
	n, err := f.splitPrefillChunks(seq, nil, workspaceSize, requestOffset)
	if err != nil {
		return nil, err
	}
	out := make([][2]int64, n)
	flat := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(out))), 2*n)
	chunks, err := f.tensor("args->chunks", Int64Tensor(flat, n, 2))
	if err != nil {
		return nil, err
	}
	if _, err := f.splitPrefillChunks(seq, chunks, workspaceSize, requestOffset); err != nil {
		return nil, err
	}
	return out, nil
}

// ReorderBatchToSplitDecodesAndPrefillsInto computes how vLLM's
// reorder_batch_to_split_decodes_and_prefills reorders a batch of per-request scheduled,
// computed and prompt tokens (host [B] each): indexMap (host [B]) and swaps (host
// [>= max(B-1, 0), 2], or nil) are written (cattn_reorder_batch_to_split_decodes_and_prefills).
//
// See docs/api/reorder_batch_to_split_decodes_and_prefills.md.
func ReorderBatchToSplitDecodesAndPrefillsInto(scheduled, computed, prompt *Tensor,
	decodeThreshold int64, indexMap, swaps *Tensor) (ReorderResult, error) {
	f := newFrame("cattn_reorder_batch_to_split_decodes_and_prefills",
		"ReorderBatchToSplitDecodesAndPrefillsInto", "args->num_scheduled_tokens", "scheduled",
		"args->num_computed_tokens", "computed", "args->num_prompt_tokens", "prompt",
		"args->decode_threshold", "decodeThreshold", "args->index_map", "indexMap",
		"args->swaps", "swaps")
	defer f.free()
	ts := make([]cTensor, 5)
	if err := f.tensorsInto(ts, []string{"args->num_scheduled_tokens", "args->num_computed_tokens",
		"args->num_prompt_tokens", "args->index_map", "args->swaps"},
		[]*Tensor{scheduled, computed, prompt, indexMap, swaps}); err != nil {
		return ReorderResult{}, err
	}
	return f.reorderBatch(ts[0], ts[1], ts[2], ts[3], ts[4], decodeThreshold)
}

// ReorderBatchToSplitDecodesAndPrefills is the reorder in one call on Go slices of the
// per-request scheduled, computed and prompt tokens ([B] each).
//
// See docs/api/reorder_batch_to_split_decodes_and_prefills.md.
func ReorderBatchToSplitDecodesAndPrefills[T Index](scheduled, computed, prompt []T,
	decodeThreshold int64) (ReorderPlan, error) {
	f := newFrame("cattn_reorder_batch_to_split_decodes_and_prefills",
		"ReorderBatchToSplitDecodesAndPrefills", "args->num_scheduled_tokens", "scheduled",
		"args->num_computed_tokens", "computed", "args->num_prompt_tokens", "prompt",
		"args->decode_threshold", "decodeThreshold", "args->index_map", "result.IndexMap",
		"args->swaps", "result.Swaps")
	defer f.free()
	b := int64(len(scheduled))
	rows := max(b-1, 0)
	indexMap := make([]int64, b)
	swaps := make([][2]int64, rows)
	flat := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(swaps))), 2*rows)
	ts := make([]cTensor, 5)
	if err := f.tensorsInto(ts, []string{"args->num_scheduled_tokens", "args->num_computed_tokens",
		"args->num_prompt_tokens", "args->index_map", "args->swaps"},
		[]*Tensor{IndexTensor(scheduled), IndexTensor(computed), IndexTensor(prompt),
			Int64Tensor(indexMap), Int64Tensor(flat, rows, 2)}); err != nil {
		return ReorderPlan{}, err
	}
	r, err := f.reorderBatch(ts[0], ts[1], ts[2], ts[3], ts[4], decodeThreshold)
	if err != nil {
		return ReorderPlan{}, err
	}
	return ReorderPlan{Changed: r.Changed, IndexMap: indexMap, Swaps: swaps[:r.NumSwaps],
		Counts: r.Counts}, nil
}

func (f *frame) splitDecodesAndPrefills(qsl, isp cTensor, b SplitBatch, o SplitOptions) (
	DecodePrefillSplit, error) {
	a := cArgs[C.cattn_split_decodes_and_prefills_args_t](f)
	a.query_start_loc_cpu = qsl
	a.is_prefilling_cpu = isp
	a.num_reqs = C.int64_t(b.NumReqs)
	a.num_actual_tokens = splitCount(b.NumActualTokens)
	a.max_query_len = splitCount(b.MaxQueryLen)
	a.decode_threshold = C.int64_t(orDefault(o.DecodeThreshold, 1))
	a.require_uniform = b2i(o.RequireUniform)
	a.treat_short_extends_as_decodes = b2i(!o.CountShortExtendsAsPrefills)
	if err := f.status(cSplitDecodesAndPrefills(a, f.msg)); err != nil {
		return DecodePrefillSplit{}, err
	}
	return DecodePrefillSplit{int64(a.num_decodes), int64(a.num_prefills),
		int64(a.num_decode_tokens), int64(a.num_prefill_tokens)}, nil
}

func (f *frame) splitDecodesPrefillsAndExtends(qsl, ub cTensor, b SplitBatch, thr int64) (
	DecodeExtendPrefillSplit, error) {
	a := cArgs[C.cattn_split_decodes_prefills_and_extends_args_t](f)
	a.query_start_loc_cpu = qsl
	a.seq_lens_cpu_upper_bound = ub
	a.num_reqs = C.int64_t(b.NumReqs)
	a.num_actual_tokens = splitCount(b.NumActualTokens)
	a.max_query_len = splitCount(b.MaxQueryLen)
	a.decode_threshold = C.int64_t(thr)
	if err := f.status(cSplitDecodesPrefillsAndExtends(a, f.msg)); err != nil {
		return DecodeExtendPrefillSplit{}, err
	}
	return DecodeExtendPrefillSplit{int64(a.num_decodes), int64(a.num_extends),
		int64(a.num_prefills), int64(a.num_decode_tokens), int64(a.num_extend_tokens),
		int64(a.num_prefill_tokens)}, nil
}

func (f *frame) splitDecodesAndPrefillsCapturable(qsl, isp, tokens, mql, result cTensor,
	o SplitOptions, stream Stream) error {
	a := cArgs[C.cattn_split_decodes_and_prefills_capturable_args_t](f)
	a.query_start_loc = qsl
	a.is_prefilling = isp
	a.num_actual_tokens = tokens
	a.max_query_len = mql
	a.decode_threshold = C.int64_t(orDefault(o.DecodeThreshold, 1))
	a.require_uniform = b2i(o.RequireUniform)
	a.treat_short_extends_as_decodes = b2i(!o.CountShortExtendsAsPrefills)
	a.result = result
	setAddr(&a.stream, uintptr(stream))
	return f.status(cSplitDecodesAndPrefillsCapturable(a, f.msg))
}

func (f *frame) splitDecodesPrefillsAndExtendsCapturable(qsl, ub, tokens, mql, result cTensor,
	thr int64, stream Stream) error {
	a := cArgs[C.cattn_split_decodes_prefills_and_extends_capturable_args_t](f)
	a.query_start_loc = qsl
	a.seq_lens_upper_bound = ub
	a.num_actual_tokens = tokens
	a.max_query_len = mql
	a.decode_threshold = C.int64_t(thr)
	a.result = result
	setAddr(&a.stream, uintptr(stream))
	return f.status(cSplitDecodesPrefillsAndExtendsCapturable(a, f.msg))
}

func (f *frame) splitPrefillChunks(seq, chunks cTensor, ws, off int64) (int64, error) {
	a := cArgs[C.cattn_split_prefill_chunks_args_t](f)
	a.seq_lens_cpu = seq
	a.workspace_size = C.int64_t(ws)
	a.request_offset = C.int64_t(off)
	a.chunks = chunks
	err := f.status(cSplitPrefillChunks(a, f.msg))
	return int64(a.num_chunks), err
}

func (f *frame) reorderBatch(s, c, p, indexMap, swaps cTensor, thr int64) (ReorderResult, error) {
	a := cArgs[C.cattn_reorder_batch_args_t](f)
	a.num_scheduled_tokens = s
	a.num_computed_tokens = c
	a.num_prompt_tokens = p
	a.decode_threshold = C.int64_t(thr)
	a.index_map = indexMap
	a.swaps = swaps
	if err := f.status(cReorderBatchToSplitDecodesAndPrefills(a, f.msg)); err != nil {
		return ReorderResult{}, err
	}
	return ReorderResult{Changed: a.changed != 0, NumSwaps: int64(a.num_swaps),
		Counts: [4]int64{int64(a.num_decodes), int64(a.num_short_extends),
			int64(a.num_long_extends), int64(a.num_prefills)}}, nil
}
