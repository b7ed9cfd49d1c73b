package cattn

// How the C fields of the split calls' args structs read in SplitBatch, SplitOptions and
// SplitDeviceBatch (the b and o parameters).
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
	NumActualTokens  int64   // in: T, may include CUDA-graph padding
	MaxQueryLen      int64   // in
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

// SplitQueryStartLoc is SplitDecodesAndPrefills in one call for the common case: a host
// query_start_loc, T its last entry, max_query_len the longest query, vLLM's defaults.
func SplitQueryStartLoc(queryStartLoc []int64, decodeThreshold int64) (DecodePrefillSplit, error) {
	b := SplitBatch{QueryStartLocCPU: Int64Tensor(queryStartLoc)}
	if n := len(queryStartLoc); n > 0 {
		b.NumReqs = int64(n - 1)
		b.NumActualTokens = queryStartLoc[n-1]
		for i := 1; i < n; i++ {
			if q := queryStartLoc[i] - queryStartLoc[i-1]; q > b.MaxQueryLen {
				b.MaxQueryLen = q
			}
		}
	}
	return SplitDecodesAndPrefills(b, SplitOptions{DecodeThreshold: &decodeThreshold})
}

// SplitDecodesPrefillsAndExtends splits an ordered batch into decodes, extends and prefills
// (vLLM's split_decodes_prefills_and_extends, cattn_split_decodes_prefills_and_extends).
// seqLensUpperBound is host [NumReqs]; nil fails past the first step, as vLLM's assert.
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

// SplitDeviceBatch is a batch on the device for the device splits. NumActualTokens and
// MaxQueryLen are device [1] tensors, or nil for query_start_loc[B] and the longest query.
type SplitDeviceBatch struct {
	QueryStartLoc   *Tensor // device [B + 1] int32/int64
	NumActualTokens *Tensor
	MaxQueryLen     *Tensor
	Stream          Stream
}

// SplitDecodesAndPrefillsDevice writes the split of a device batch to result, a device [4]
// int32/int64 tensor, with one kernel on b.Stream (cattn_split_decodes_and_prefills_device).
func SplitDecodesAndPrefillsDevice(b SplitDeviceBatch, o SplitOptions, result *Tensor) error {
	f := newFrame("cattn_split_decodes_and_prefills_device", "SplitDecodesAndPrefillsDevice",
		splitDeviceRenames...)
	defer f.free()
	ts := make([]cTensor, 5)
	if err := f.tensorsInto(ts, []string{"args->query_start_loc", "args->is_prefilling",
		"args->num_actual_tokens", "args->max_query_len", "args->result"},
		[]*Tensor{b.QueryStartLoc, o.IsPrefilling, b.NumActualTokens, b.MaxQueryLen, result}); err != nil {
		return err
	}
	return f.splitDecodesAndPrefillsDevice(ts[0], ts[1], ts[2], ts[3], ts[4], o, b.Stream)
}

// SplitDecodesPrefillsAndExtendsDevice writes the extends split of a device batch to result,
// a device [6] tensor (cattn_split_decodes_prefills_and_extends_device).
func SplitDecodesPrefillsAndExtendsDevice(b SplitDeviceBatch, seqLensUpperBound *Tensor,
	decodeThreshold int64, result *Tensor) error {
	f := newFrame("cattn_split_decodes_prefills_and_extends_device",
		"SplitDecodesPrefillsAndExtendsDevice", append(splitDeviceRenames,
			"args->seq_lens_upper_bound", "seqLensUpperBound", "args->decode_threshold",
			"decodeThreshold")...)
	defer f.free()
	ts := make([]cTensor, 5)
	if err := f.tensorsInto(ts, []string{"args->query_start_loc", "args->seq_lens_upper_bound",
		"args->num_actual_tokens", "args->max_query_len", "args->result"},
		[]*Tensor{b.QueryStartLoc, seqLensUpperBound, b.NumActualTokens, b.MaxQueryLen, result}); err != nil {
		return err
	}
	return f.splitDecodesPrefillsAndExtendsDevice(ts[0], ts[1], ts[2], ts[3], ts[4],
		decodeThreshold, b.Stream)
}

// SplitPrefillChunksInto writes the chunks of prefill lengths seqLens (host [n]) that fit
// workspaceSize tokens into chunks (host [>= count, 2], or nil for the size query) and returns
// their count (vLLM's split_prefill_chunks, cattn_split_prefill_chunks).
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
// chunk, plus requestOffset.
func SplitPrefillChunks(seqLens []int64, workspaceSize, requestOffset int64) ([][2]int64, error) {
	n, err := SplitPrefillChunksInto(Int64Tensor(seqLens), workspaceSize, requestOffset, nil)
	if err != nil {
		return nil, err
	}
	flat := make([]int64, 2*n)
	if _, err := SplitPrefillChunksInto(Int64Tensor(seqLens), workspaceSize, requestOffset,
		Int64Tensor(flat, n, 2)); err != nil {
		return nil, err
	}
	out := make([][2]int64, n)
	for i := range out {
		out[i] = [2]int64{flat[2*i], flat[2*i+1]}
	}
	return out, nil
}

// ReorderBatchToSplitDecodesAndPrefillsInto computes how vLLM's
// reorder_batch_to_split_decodes_and_prefills reorders a batch of per-request scheduled,
// computed and prompt tokens (host [B] each): indexMap (host [B]) and swaps (host
// [>= max(B-1, 0), 2], or nil) are written (cattn_reorder_batch_to_split_decodes_and_prefills).
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

// ReorderBatchToSplitDecodesAndPrefills is the reorder in one call on Go slices.
func ReorderBatchToSplitDecodesAndPrefills(scheduled, computed, prompt []int64,
	decodeThreshold int64) (ReorderPlan, error) {
	b := int64(len(scheduled))
	rows := b - 1
	if rows < 0 {
		rows = 0
	}
	indexMap := make([]int64, b)
	flat := make([]int64, 2*rows)
	r, err := ReorderBatchToSplitDecodesAndPrefillsInto(Int64Tensor(scheduled),
		Int64Tensor(computed), Int64Tensor(prompt), decodeThreshold, Int64Tensor(indexMap),
		Int64Tensor(flat, rows, 2))
	if err != nil {
		return ReorderPlan{}, err
	}
	swaps := make([][2]int64, r.NumSwaps)
	for i := range swaps {
		swaps[i] = [2]int64{flat[2*i], flat[2*i+1]}
	}
	return ReorderPlan{Changed: r.Changed, IndexMap: indexMap, Swaps: swaps, Counts: r.Counts}, nil
}
