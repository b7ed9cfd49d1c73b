// SPDX-License-Identifier: Apache-2.0

// Command transcript is a test transcript: it runs every libcattn utility (1-13) through the Go
// binding on the batch of the C transcript (tests/transcripts/transcript.c at the repository
// root), with host tensors, and prints the inputs, the results and the status of every call in
// that transcript's format; scripts/test_go.sh diffs the two from their second line on. Run it
// with `go run ./internal/transcript` from bindings/go.
//
// The batch: 4 requests mixing prefill and decode, KV block size 4, 10 blocks per request.
//
//	request             0 (new prompt)   1 (chunked prefill)   2 (chunked prefill)   3 (decode)
//	query tokens        16               4                     8                     1
//	sequence length     16               10                    17                    33
//	block table row     0 1 ... 9        10 11 ... 19          20 21 ... 29          30 ... 39
//
// Exit status: 0 when every utility except 5 returned CATTN_OK, 1 otherwise.
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	cattn "github.com/libcattn/cattn-go"
)

// --- Host tensors -------------------------------------------------------------------------------

// tensor is a host tensor backed by a Go slice of its element type.
type tensor struct {
	t     *cattn.Tensor
	i32   []int32
	i64   []int64
	f32   []float32
	shape []int64
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// newTensor makes a compact tensor of the given shape, zero-filled.
func newTensor(dtype cattn.DType, shape ...int64) *tensor {
	x := &tensor{shape: shape}
	n := numel(shape)
	switch dtype {
	case cattn.Int32:
		x.i32 = make([]int32, n)
		x.t = cattn.Int32Tensor(x.i32, shape...)
	case cattn.Int64:
		x.i64 = make([]int64, n)
		x.t = cattn.Int64Tensor(x.i64, shape...)
	default:
		x.f32 = make([]float32, n)
		x.t = cattn.Float32Tensor(x.f32, shape...)
	}
	return x
}

// tensorOf makes a tensor holding values, converted to its dtype.
func tensorOf(dtype cattn.DType, values []int64, shape ...int64) *tensor {
	x := newTensor(dtype, shape...)
	for i, v := range values[:numel(shape)] {
		x.set(i, v)
	}
	return x
}

func (x *tensor) set(i int, v int64) {
	switch {
	case x.i32 != nil:
		x.i32[i] = int32(v)
	case x.i64 != nil:
		x.i64[i] = v
	default:
		x.f32[i] = float32(v)
	}
}

func (x *tensor) value(i int64) float64 {
	switch {
	case x.i32 != nil:
		return float64(x.i32[i])
	case x.i64 != nil:
		return float64(x.i64[i])
	}
	return float64(x.f32[i])
}

func (x *tensor) dtypeName() string {
	switch {
	case x.i32 != nil:
		return "int32"
	case x.i64 != nil:
		return "int64"
	}
	return "float32"
}

// --- Printing -----------------------------------------------------------------------------------

// g formats like C's %g.
func g(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func run(x *tensor, from, to int64) string {
	parts := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		parts = append(parts, g(x.value(i)))
	}
	return strings.Join(parts, ", ")
}

// printTensorHead prints label, shape, dtype and values; long tensors print `head` values and
// summarise the rest (saying so when it is one repeated value, e.g. padding).
func printTensorHead(label string, x *tensor, head int64) {
	n := numel(x.shape)
	fmt.Printf("    %-26s ", label)
	switch len(x.shape) {
	case 2:
		cols := x.shape[1]
		fmt.Printf("[%d, %d] %s\n", x.shape[0], cols, x.dtypeName())
		for r := int64(0); r < x.shape[0]; r++ {
			fmt.Printf("      [%s]\n", run(x, r*cols, (r+1)*cols))
		}
		return
	case 1:
		fmt.Printf("[%d] %s = [", x.shape[0], x.dtypeName())
	default:
		fmt.Printf("[%d, %d, %d] %s, flattened = [", x.shape[0], x.shape[1], x.shape[2], x.dtypeName())
	}
	if n <= head {
		fmt.Printf("%s]\n", run(x, 0, n))
		return
	}
	rest, same := x.value(head), true
	for i := head + 1; i < n && same; i++ {
		same = x.value(i) == rest
	}
	if same {
		fmt.Printf("%s, ... %d more, all %s]\n", run(x, 0, head), n-head, g(rest))
	} else {
		fmt.Printf("%s, ... %d more]\n", run(x, 0, head), n-head)
	}
}

func printTensor(label string, x *tensor) { printTensorHead(label, x, 40) }

func section(utility int, title string) { fmt.Printf("\n== %d. %s ==\n", utility, title) }

// --- Status bookkeeping -------------------------------------------------------------------------

const numUtilities = 13

var (
	failed   [numUtilities + 1]bool
	firstBad [numUtilities + 1]cattn.Status
)

// statusOf returns the status and the message in C terms (CMessage), which is what the C transcript
// prints; e.Message has the same text with the Go names.
func statusOf(err error) (cattn.Status, string) {
	if err == nil {
		return cattn.StatusOK, ""
	}
	var e *cattn.Error
	if errors.As(err, &e) {
		return e.Code, e.CMessage
	}
	return cattn.StatusInternal, err.Error()
}

func recordFailure(utility int, status cattn.Status) {
	if !failed[utility] {
		firstBad[utility] = status
	}
	failed[utility] = true
}

// check prints a call's status and reports whether it succeeded.
func check(utility int, call string, err error) bool {
	status, message := statusOf(err)
	if status == cattn.StatusOK {
		fmt.Printf("  %s -> CATTN_OK\n", call)
		return true
	}
	fmt.Printf("  %s -> %s\n      message: \"%s\"\n", call, status, message)
	recordFailure(utility, status)
	return false
}

// checkExpectedError prints a call made on purpose with a bad argument.
func checkExpectedError(utility int, call string, err error, expected cattn.Status) {
	status, message := statusOf(err)
	fmt.Printf("  %s -> %s (expected %s)\n      message: \"%s\"\n", call, status, expected, message)
	if status != expected {
		if status == cattn.StatusOK {
			status = cattn.StatusInternal
		}
		recordFailure(utility, status)
	}
}

// --- The batch ----------------------------------------------------------------------------------

const (
	batchSize    = 4
	kvBlock      = 4
	blocksPerReq = 10
)

var (
	queryLens = []int64{16, 4, 8, 1}
	seqLens   = []int64{16, 10, 17, 33}
)

type batch struct {
	qsl                                                   []int64
	numTokens, maxQuery, maxSeq                           int64
	blockTable                                            []int64
	queryStartLoc, queryStartLocCPU, seqLensT, seqLensCPU *tensor
	numComputedTokensCPU, blockTableT, slotMapping        *tensor
	logitsIndicesPadded                                   *tensor
	numLogitsIndices                                      int64
}

// slotMapping returns the slot of every query token: its page in the request's block table
// times the block size plus its offset in the page.
func slotMapping(qlens, slens []int64) []int64 {
	var out []int64
	for b := range qlens {
		for i := int64(0); i < qlens[b]; i++ {
			pos := slens[b] - qlens[b] + i
			out = append(out, (int64(b)*blocksPerReq+pos/kvBlock)*kvBlock+pos%kvBlock)
		}
	}
	return out
}

func makeBatch() *batch {
	// Logits at every request's last token plus one draft position (18) of request 1, padded
	// to 8 entries as for a CUDA graph.
	logits := []int64{15, 18, 19, 27, 28, 0, 0, 0}
	b := &batch{qsl: []int64{0}, numLogitsIndices: 5}
	computed := make([]int64, batchSize)
	for r := 0; r < batchSize; r++ {
		b.qsl = append(b.qsl, b.qsl[r]+queryLens[r])
		b.maxQuery = max(b.maxQuery, queryLens[r])
		b.maxSeq = max(b.maxSeq, seqLens[r])
		computed[r] = seqLens[r] - queryLens[r]
		for j := int64(0); j < blocksPerReq; j++ {
			b.blockTable = append(b.blockTable, int64(r)*10+j)
		}
	}
	b.numTokens = b.qsl[batchSize]
	slots := slotMapping(queryLens, seqLens)
	b.queryStartLoc = tensorOf(cattn.Int32, b.qsl, batchSize+1)
	b.queryStartLocCPU = tensorOf(cattn.Int32, b.qsl, batchSize+1)
	b.seqLensT = tensorOf(cattn.Int32, seqLens, batchSize)
	b.seqLensCPU = tensorOf(cattn.Int32, seqLens, batchSize)
	b.numComputedTokensCPU = tensorOf(cattn.Int32, computed, batchSize)
	b.blockTableT = tensorOf(cattn.Int32, b.blockTable, batchSize, blocksPerReq)
	b.slotMapping = tensorOf(cattn.Int64, slots, b.numTokens)
	b.logitsIndicesPadded = tensorOf(cattn.Int32, logits, 8)
	return b
}

func (b *batch) metadata() cattn.CommonAttnMetadata {
	return cattn.CommonAttnMetadata{
		QueryStartLoc: b.queryStartLoc.t, QueryStartLocCPU: b.queryStartLocCPU.t,
		SeqLens: b.seqLensT.t, SeqLensCPU: b.seqLensCPU.t,
		NumComputedTokensCPU: b.numComputedTokensCPU.t, BlockTableTensor: b.blockTableT.t,
		SlotMapping: b.slotMapping.t, LogitsIndicesPadded: b.logitsIndicesPadded.t,
		NumReqs: batchSize, NumActualTokens: b.numTokens, MaxQueryLen: b.maxQuery,
		MaxSeqLen: b.maxSeq, NumLogitsIndices: b.numLogitsIndices,
	}
}

func printScalars(m *cattn.CommonAttnMetadata) {
	causal := 0
	if !m.NonCausal {
		causal = 1
	}
	fmt.Printf("    num_reqs %d, num_actual_tokens %d, max_query_len %d, max_seq_len %d, causal %d\n",
		m.NumReqs, m.NumActualTokens, m.MaxQueryLen, m.MaxSeqLen, causal)
}

func (b *batch) print() {
	fmt.Printf("\nThe batch (inputs shared by the sections below):\n")
	printTensor("query_start_loc", b.queryStartLoc)
	printTensor("seq_lens", b.seqLensT)
	printTensor("num_computed_tokens_cpu", b.numComputedTokensCPU)
	printTensor("block_table_tensor", b.blockTableT)
	printTensor("slot_mapping", b.slotMapping)
	printTensor("logits_indices_padded", b.logitsIndicesPadded)
	fmt.Printf("    num_logits_indices %d, num_reqs %d, num_actual_tokens %d, max_query_len %d, max_seq_len %d\n",
		b.numLogitsIndices, batchSize, b.numTokens, b.maxQuery, b.maxSeq)
}

// --- 1. KV-cache layout -------------------------------------------------------------------------

func resolveLayout(ctx *cattn.Context, user *string, connector cattn.KVCacheLayout, what string) {
	layout, err := ctx.GetKVCacheLayout(cattn.KVCacheLayoutArgs{UserSetting: user, Connector: connector})
	if check(1, "cattn_get_kv_cache_layout("+what+")", err) {
		fmt.Printf("      layout = %s\n", layout)
	}
}

func transcriptKVCacheLayout() {
	section(1, "KV-cache layout (get_kv_cache_layout, is_valid_kv_cache_layout)")
	valid, err := cattn.IsValidKVCacheLayout("HND")
	if check(1, `cattn_is_valid_kv_cache_layout("HND")`, err) {
		fmt.Printf("      valid = %d\n", b2i(valid))
	}
	valid, err = cattn.IsValidKVCacheLayout("hnd")
	if check(1, `cattn_is_valid_kv_cache_layout("hnd")`, err) {
		fmt.Printf("      valid = %d (case-sensitive, as vLLM)\n", b2i(valid))
	}
	ctx, err := cattn.NewContext()
	if !check(1, "cattn_context_create", err) {
		return
	}
	defer ctx.Close()
	nhd := "NHD"
	// ReadEnvironment stays false so that the transcript does not depend on the caller's environment.
	resolveLayout(ctx, nil, cattn.KVCacheLayoutUnset, "no setting -> default")
	resolveLayout(ctx, nil, cattn.KVCacheLayoutHND, "connector prefers HND")
	resolveLayout(ctx, &nhd, cattn.KVCacheLayoutHND, "user says NHD, connector HND")
	check(1, "cattn_context_set_kv_cache_layout_override(HND)", ctx.SetKVCacheLayoutOverride(cattn.KVCacheLayoutHND))
	resolveLayout(ctx, &nhd, cattn.KVCacheLayoutUnset, "override HND beats user NHD")
	check(1, "cattn_context_set_kv_cache_layout_override(UNSET)", ctx.SetKVCacheLayoutOverride(cattn.KVCacheLayoutUnset))
	bad := "nhd"
	_, err = ctx.GetKVCacheLayout(cattn.KVCacheLayoutArgs{UserSetting: &bad})
	checkExpectedError(1, `cattn_get_kv_cache_layout(user says "nhd"; vLLM asserts)`, err,
		cattn.StatusInvalidArgument)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// --- 2. DCP local sequence lengths --------------------------------------------------------------

func transcriptDCPLocalSeqLens(b *batch) {
	all := newTensor(cattn.Int32, batchSize, 2)
	one := newTensor(cattn.Int32, batchSize)
	section(2, "DCP local sequence lengths (get_dcp_local_seq_lens)")
	fmt.Printf("  inputs: seq_lens (above), dcp_size 2, dcp_kv_cache_interleave_size 4\n")
	args := cattn.DCPLocalSeqLensArgs{SeqLens: b.seqLensT.t, DCPSize: 2, Ranks: cattn.AllDCPRanks,
		InterleaveSize: 4, Out: all.t}
	if check(2, "cattn_get_dcp_local_seq_lens(every rank)", cattn.GetDCPLocalSeqLens(args)) {
		printTensor("local seq_lens [b, rank]", all)
	}
	args.Ranks, args.Out = cattn.DCPRank(1), one.t
	if check(2, "cattn_get_dcp_local_seq_lens(rank 1)", cattn.GetDCPLocalSeqLens(args)) {
		printTensor("rank 1's seq_lens", one)
	}
}

// --- 3. PCP query restore index -----------------------------------------------------------------

func transcriptPCPQueryRestoreIdx(b *batch) {
	section(3, "PCP query restore index (get_pcp_query_restore_idx)")
	fmt.Printf("  inputs: cu_num_tokens = query_start_loc (above), sized from its host mirror " +
		"query_start_loc_cpu;\n          request 3 is a decode and takes no part\n")
	size, err := cattn.GetPCPQueryRestoreIdxSize(b.queryStartLocCPU.t)
	if !check(3, "cattn_get_pcp_query_restore_idx_size", err) {
		return
	}
	fmt.Printf("      size = %d\n", size)
	// Four spare entries show the -1 fill past the size.
	out := newTensor(cattn.Int32, size+4)
	if check(3, "cattn_get_pcp_query_restore_idx", cattn.GetPCPQueryRestoreIdx(b.queryStartLoc.t, out.t, 0)) {
		printTensor("restore_idx", out)
	}
}

// --- 4. Fused PCP Q/K/V select ------------------------------------------------------------------

func transcriptFusedPCPQKVSelect() {
	// PCP world size 2, rank 0. Requests 0-2 are split into 2W = 4 chunks; rank 0 holds chunks
	// 0 and 3, so its local query lengths are 8, 2 and 4. One head of dimension 1: q row i holds
	// 100 + i, K row j 200 + j and V row j 300 + j.
	const nq, world, rank = 14, 2, 0
	section(4, "Fused PCP Q/K/V select (fused_pcp_qkv_select)")
	values := func(base, n int64) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = base + int64(i)
		}
		return v
	}
	qsl := tensorOf(cattn.Int32, []int64{0, 8, 10, 14}, 4)
	q := tensorOf(cattn.Float32, values(100, nq), nq, 1, 1)
	k := tensorOf(cattn.Float32, values(200, world*nq), world*nq, 1, 1)
	v := tensorOf(cattn.Float32, values(300, world*nq), world*nq, 1, 1)
	qh, qt := newTensor(cattn.Float32, nq/2, 1, 1), newTensor(cattn.Float32, nq/2, 1, 1)
	kh, vh := newTensor(cattn.Float32, nq/2*(rank+1), 1, 1), newTensor(cattn.Float32, nq/2*(rank+1), 1, 1)
	kt := newTensor(cattn.Float32, nq/2*(2*world-rank), 1, 1)
	vt := newTensor(cattn.Float32, nq/2*(2*world-rank), 1, 1)
	fmt.Printf("  inputs: pcp_world_size 2, pcp_rank 0\n")
	printTensor("query_start_loc (local)", qsl)
	printTensor("q [Nq, H, Dq]", q)
	printTensor("k [W*Nq, H, Dk]", k)
	printTensor("v [W*Nq, H, Dv]", v)
	err := cattn.FusedPCPQKVSelect(cattn.FusedPCPQKVSelectArgs{
		Q: q.t, K: k.t, V: v.t, QueryStartLoc: qsl.t, PCPWorldSize: world, PCPRank: rank,
		QHead: qh.t, KHead: kh.t, VHead: vh.t, QTail: qt.t, KTail: kt.t, VTail: vt.t,
	})
	if check(4, "cattn_fused_pcp_qkv_select", err) {
		printTensor("q_head", qh)
		printTensor("k_head", kh)
		printTensor("v_head", vh)
		printTensor("q_tail", qt)
		printTensor("k_tail", kt)
		printTensor("v_tail", vt)
	}
}

// --- 5. PCP all-gather + restore ----------------------------------------------------------------

func transcriptPCPKVAllgatherAndRestore() {
	// 6 tokens plus 2 rows of CUDA-graph padding; key row t, element d holds 500 + 10t + d and
	// value row t 600 + 10t + d, so every output row names the input row it came from.
	const rows, tokens, outRows, heads, headDim = 8, 6, 7, 1, 2
	section(5, "PCP all-gather + restore (pcp_kv_allgather_and_restore)")
	keyValues := make([]int64, rows*heads*headDim)
	valueValues := make([]int64, rows*heads*headDim)
	for i := range keyValues {
		keyValues[i] = 500 + 10*int64(i/headDim) + int64(i%headDim)
		valueValues[i] = 600 + 10*int64(i/headDim) + int64(i%headDim)
	}
	key := tensorOf(cattn.Float32, keyValues, rows, heads, headDim)
	value := tensorOf(cattn.Float32, valueValues, rows, heads, headDim)
	idx := tensorOf(cattn.Int32, []int64{0, 1, 2, 3, 4, 5, 5}, outRows)
	keyOut := newTensor(cattn.Float32, outRows, heads, headDim)
	valueOut := newTensor(cattn.Float32, outRows, heads, headDim)
	fmt.Printf("  inputs: a PCP group of 1 rank (W = 1), num_actual_tokens %d (rows 6-7 are CUDA-graph "+
		"padding);\n          key row t holds 500 + 10t + d, value row t 600 + 10t + d; "+
		"restore_idx takes row 5\n          twice (rows may repeat)\n", tokens)
	printTensor("key [N, H, D]", key)
	printTensor("value [N, H, D]", value)
	printTensor("restore_idx", idx)
	// This transcript's tensors are host memory, and NCCL gathers device memory: the call shows what a
	// host caller gets, as the C transcript does on a machine without a GPU.
	fmt.Printf("  This utility needs GPUs and NCCL (NCCL gathers device memory): not counted on the host.\n")
	err := cattn.PCPKVAllgatherAndRestore(cattn.PCPKVAllgatherAndRestoreArgs{
		Key: key.t, Value: value.t, NumActualTokens: tokens, RestoreIdx: idx.t,
		KeyOut: keyOut.t, ValueOut: valueOut.t,
	})
	status, message := statusOf(err)
	fmt.Printf("  cattn_pcp_kv_allgather_and_restore(host tensors, comm NULL) -> %s\n      message: \"%s\"\n",
		status, message)
	if err != nil {
		recordFailure(5, status)
	}
}

// --- 6. Causal-conv1d metadata ------------------------------------------------------------------

func transcriptCausalConv1dMetadata(b *batch) {
	section(6, "Causal-conv1d metadata (compute_causal_conv1d_metadata)")
	fmt.Printf("  inputs: query_start_loc_cpu (above), block_m 8\n")
	tot, capacity, err := cattn.ComputeCausalConv1dMetadataSize(b.queryStartLocCPU.t, 8)
	if !check(6, "cattn_compute_causal_conv1d_metadata_size", err) {
		return
	}
	fmt.Printf("      tot = %d, capacity = %d\n", tot, capacity)
	nums := newTensor(cattn.Int32, batchSize)
	mlist, offsets := newTensor(cattn.Int32, tot), newTensor(cattn.Int32, tot)
	batchPtr, chunkPtr := newTensor(cattn.Int32, capacity), newTensor(cattn.Int32, capacity)
	got, err := cattn.ComputeCausalConv1dMetadata(cattn.CausalConv1dMetadataArgs{
		QueryStartLocCPU: b.queryStartLocCPU.t, BlockM: 8, Nums: nums.t, MList: mlist.t,
		OffsetList: offsets.t, BatchPtr: batchPtr.t, TokenChunkOffsetPtr: chunkPtr.t,
	})
	if check(6, "cattn_compute_causal_conv1d_metadata", err) {
		fmt.Printf("      tot = %d\n", got)
		printTensor("nums", nums)
		printTensor("mlist", mlist)
		printTensor("offsetlist", offsets)
		printTensorHead("batch_ptr", batchPtr, tot+3)
		printTensorHead("token_chunk_offset_ptr", chunkPtr, tot+3)
	}
}

// --- 7. Extend queries by n ---------------------------------------------------------------------

func transcriptExtendAllQueriesByN(b *batch) {
	section(7, "Extend queries (extend_all_queries_by_1, generalised to N)")
	// The slot mapping of the extended batch (each request's new token included) is the
	// caller's, as in vLLM.
	qlens, slens := make([]int64, batchSize), make([]int64, batchSize)
	for r := range qlens {
		qlens[r], slens[r] = queryLens[r]+1, seqLens[r]+1
	}
	slots := slotMapping(qlens, slens)
	newSlots := tensorOf(cattn.Int64, slots, int64(len(slots)))
	qsl, qslCPU := newTensor(cattn.Int32, batchSize+1), newTensor(cattn.Int32, batchSize+1)
	sl, slCPU := newTensor(cattn.Int32, batchSize), newTensor(cattn.Int32, batchSize)
	fmt.Printf("  inputs: the batch, n = 1\n")
	printTensor("new_slot_mapping", newSlots)
	in := b.metadata()
	out := cattn.CommonAttnMetadata{QueryStartLoc: qsl.t, QueryStartLocCPU: qslCPU.t, SeqLens: sl.t, SeqLensCPU: slCPU.t}
	err := cattn.ExtendAllQueriesByN(cattn.ExtendAllQueriesByNArgs{Metadata: &in, NewSlotMapping: newSlots.t, Out: &out})
	if check(7, "cattn_extend_all_queries_by_n", err) {
		printTensor("query_start_loc", qsl)
		printTensor("query_start_loc_cpu", qslCPU)
		printTensor("seq_lens", sl)
		printTensor("seq_lens_cpu", slCPU)
		printScalars(&out)
		same := "NO"
		if out.SlotMapping == newSlots.t {
			same = "yes"
		}
		fmt.Printf("    slot_mapping is new_slot_mapping: %s\n", same)
	}
}

// --- 8. KV-sharing fast-prefill metadata --------------------------------------------------------

func transcriptFastPrefill(b *batch) {
	qsl, qslCPU := newTensor(cattn.Int32, batchSize+1), newTensor(cattn.Int32, batchSize+1)
	maxTotal := newTensor(cattn.Int32, 2)
	section(8, "KV-sharing fast-prefill metadata (make_kv_sharing_fast_prefill_common_attn_metadata)")
	fmt.Printf("  inputs: the batch's query_start_loc and its first %d logits_indices_padded entries\n",
		b.numLogitsIndices)
	in := b.metadata()
	out := cattn.CommonAttnMetadata{QueryStartLoc: qsl.t, QueryStartLocCPU: qslCPU.t}
	passthrough, err := cattn.MakeKVSharingFastPrefillCommonAttnMetadata(cattn.FastPrefillMetadataArgs{
		Metadata: &in, Out: &out, DecodeMaxAndTotal: maxTotal.t})
	if check(8, "cattn_make_kv_sharing_fast_prefill_common_attn_metadata", err) {
		printTensor("decode query_start_loc", qsl)
		printTensor("decode query_start_loc_cpu", qslCPU)
		printTensor("decode_max_and_total", maxTotal)
		printScalars(&out)
		fmt.Printf("    passthrough %d\n", b2i(passthrough))
	}
}

// --- 9. Local-attention virtual batches ---------------------------------------------------------

func transcriptLocalAttention(b *batch) {
	section(9, "Local-attention virtual batches (make_local_attention_virtual_batches)")
	fmt.Printf("  inputs: the batch, attn_chunk_size 8, block_size 4\n")
	in := b.metadata()
	plan, err := cattn.MakeLocalAttentionVirtualBatches(8, kvBlock, &in)
	if !check(9, "cattn_make_local_attention_virtual_batches", err) {
		return
	}
	defer plan.Close()
	vb, pages, err := plan.Shape()
	if !check(9, "cattn_local_attention_plan_get_shape", err) {
		return
	}
	fmt.Printf("      virtual batches = %d, pages per virtual batch = %d\n", vb, pages)
	qslCPU, qsl := newTensor(cattn.Int32, vb+1), newTensor(cattn.Int32, vb+1)
	slCPU, sl := newTensor(cattn.Int32, vb), newTensor(cattn.Int32, vb)
	computed := newTensor(cattn.Int32, vb)
	table := newTensor(cattn.Int32, vb, pages)
	out := cattn.CommonAttnMetadata{
		QueryStartLocCPU: qslCPU.t, QueryStartLoc: qsl.t, SeqLensCPU: slCPU.t, SeqLens: sl.t,
		NumComputedTokensCPU: computed.t, BlockTableTensor: table.t,
	}
	if check(9, "cattn_local_attention_plan_fill", plan.Fill(&in, &out, 0)) {
		printTensor("query_start_loc_cpu", qslCPU)
		printTensor("query_start_loc", qsl)
		printTensor("seq_lens_cpu", slCPU)
		printTensor("seq_lens", sl)
		printTensor("num_computed_tokens_cpu", computed)
		printTensor("block_table_tensor", table)
		printScalars(&out)
	}
	// The plan is vLLM's make_block_table closure: the same gather applied to a new table.
	shifted := make([]int64, len(b.blockTable))
	for i, v := range b.blockTable {
		shifted[i] = v + 1000
	}
	newTable := tensorOf(cattn.Int32, shifted, batchSize, blocksPerReq)
	regathered := newTensor(cattn.Int32, vb, pages)
	if check(9, "cattn_local_attention_plan_make_block_table(block table + 1000)",
		plan.MakeBlockTable(newTable.t, regathered.t, 0)) {
		printTensor("re-gathered block table", regathered)
	}
}

// --- 10. Mamba block table ----------------------------------------------------------------------

func transcriptMambaBlockTable(b *batch) {
	out := newTensor(cattn.Int32, batchSize, 2)
	section(10, "Mamba block table (mamba_get_block_table_tensor)")
	fmt.Printf("  inputs: block_table_tensor and seq_lens (above), mode align, block_size 4, " +
		"num_speculative_blocks 1\n")
	err := cattn.MambaGetBlockTableTensor(cattn.MambaBlockTableArgs{
		BlockTable: b.blockTableT.t, SeqLens: b.seqLensT.t, BlockSize: kvBlock,
		NumSpeculativeBlocks: 1, Mode: cattn.MambaCacheModeAlign, Out: out.t,
	})
	if check(10, "cattn_mamba_get_block_table_tensor(align)", err) {
		printTensor("block table for Mamba", out)
	}
}

// --- 11. Per-layer parameters -------------------------------------------------------------------

func printParams(label string, p cattn.PerLayerParameters) {
	softCap := "None"
	if p.HasLogitsSoftCap {
		softCap = g(p.LogitsSoftCap)
	}
	fmt.Printf("    %-8s window_left %d, logits_soft_cap %s, sm_scale %s, has_sinks %d\n", label,
		p.WindowLeft, softCap, g(p.SMScale), b2i(p.HasSinks))
}

func printGlobal(gl cattn.GlobalHyperparameters) {
	fmt.Printf("    global: window_left %d, sm_scale %s, has_same_window_lefts %d, has_same_all_params %d\n",
		gl.WindowLeft, g(gl.SMScale), b2i(gl.HasSameWindowLefts), b2i(gl.HasSameAllParams))
}

func transcriptPerLayerParameters() {
	section(11, "Per-layer parameters (get_per_layer_parameters, infer_global_hyperparameters)")
	// Layers 0 and 2: sliding window (4095, 0); layer 1: global attention with a soft cap.
	window := cattn.AttentionLayer{HasSlidingWindow: true, SlidingWindow: [2]int64{4095, 0}, Scale: 0.125}
	layers := []cattn.AttentionLayer{window, {HasLogitsSoftCap: true, LogitsSoftCap: 30, Scale: 0.125}, window}
	fmt.Printf("  inputs: layer 0 and 2 - sliding_window (4095, 0), no soft cap, scale 0.125;\n" +
		"          layer 1 - no window, logits_soft_cap 30, scale 0.125\n")
	params, err := cattn.GetPerLayerParameters(layers)
	if !check(11, "cattn_get_per_layer_parameters", err) {
		return
	}
	for i, p := range params {
		printParams(fmt.Sprintf("layer %d", i), p)
	}
	global, err := cattn.InferGlobalHyperparameters(params)
	if check(11, "cattn_infer_global_hyperparameters(layers 0-2)", err) {
		printGlobal(global)
	}
	params[1] = params[2]
	global, err = cattn.InferGlobalHyperparameters(params)
	if check(11, "cattn_infer_global_hyperparameters(layers 0, 2, 2)", err) {
		printGlobal(global)
	}
}

// --- 12. KV-cache layout resolver ---------------------------------------------------------------

// layoutName is the canonical name of a layout ("?" for a value that is not one).
func layoutName(l cattn.KVCacheLayout) string {
	p, err := l.Properties()
	if err != nil {
		return "?"
	}
	return p.Name
}

func ints[T int32 | int64](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.FormatInt(int64(v), 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// resolveKVLayout resolves names (the supported list of both workers) in ctx, or in a fresh
// context when ctx is nil; the layout on success, KVCacheLayoutUnset otherwise.
func resolveKVLayout(ctx *cattn.Context, names []string, connector *string, what string) cattn.KVCacheLayout {
	if ctx == nil {
		own, err := cattn.NewContext()
		if !check(12, "cattn_context_create", err) {
			return cattn.KVCacheLayoutUnset
		}
		defer own.Close()
		ctx = own
	}
	// No user setting, and never the environment.
	r, err := ctx.ResolveKVCacheLayout(cattn.ResolveKVCacheLayoutArgs{
		Workers: [][]string{names, names}, Connector: connector,
	})
	if !check(12, "cattn_resolve_kv_cache_layout("+what+")", err) {
		return cattn.KVCacheLayoutUnset
	}
	fmt.Printf("      layout = %s, connector_fell_back %d, from_preset %d\n", layoutName(r.Layout),
		b2i(r.ConnectorFellBack), b2i(r.FromPreset))
	return r.Layout
}

func transcriptKVCacheLayoutResolver() {
	section(12, "KV-cache layout resolver (resolve_kv_cache_layout, get_supported_kv_cache_layouts)")
	fmt.Printf("  inputs: backend A declares BLHNC, LBHNC, LBNHC; backend B LBNHC, BLHNC, LBHNC, BLNHC;\n" +
		"          backend C declares nothing; two workers with the same backends\n")
	// Backend A prefers BLHNC, backend B LBNHC; backend C declares nothing (any layout).
	backends := [][]cattn.KVCacheLayout{
		{cattn.KVCacheLayoutBLHNC, cattn.KVCacheLayoutLBHNC, cattn.KVCacheLayoutLBNHC},
		{cattn.KVCacheLayoutLBNHC, cattn.KVCacheLayoutBLHNC, cattn.KVCacheLayoutLBHNC, cattn.KVCacheLayoutBLNHC},
		nil,
	}
	supported, err := cattn.GetSupportedKVCacheLayouts(backends)
	if !check(12, "cattn_get_supported_kv_cache_layouts(A, B, C)", err) {
		return
	}
	names := make([]string, len(supported))
	for i, l := range supported {
		names[i] = layoutName(l)
	}
	fmt.Printf("      supported = %s\n", strings.Join(names, ", "))
	fmt.Printf("      (the layouts A and B share, by first-choice votes, ties in vLLM's order)\n")
	ctx, err := cattn.NewContext()
	if !check(12, "cattn_context_create", err) {
		return
	}
	blhnc, lhbnc := "BLHNC", "LHBNC"
	resolveKVLayout(ctx, names, nil, "no preset, setting or connector")
	resolveKVLayout(ctx, names, &blhnc, "same context, connector BLHNC")
	ctx.Close()
	chosen := resolveKVLayout(nil, names, &blhnc, "new context, connector BLHNC")
	resolveKVLayout(nil, names, &lhbnc, "new context, connector LHBNC")
	if chosen != cattn.KVCacheLayoutUnset {
		p, err := chosen.Properties()
		if check(12, "cattn_kv_cache_layout_get_properties(BLHNC)", err) {
			fmt.Printf("      stride_order %s, layer_view_order %s\n", ints(p.StrideOrder[:]),
				ints(p.LayerViewOrder[:]))
			fmt.Printf("      is_layer_compact %d, is_block_contiguous %d, is_block_compact %d, "+
				"is_block_outermost %d\n", b2i(p.IsLayerCompact), b2i(p.IsBlockContiguous),
				b2i(p.IsBlockCompact), b2i(p.IsBlockOutermost))
		}
		fi, err := chosen.FlashInferLayoutString()
		if check(12, "cattn_get_flashinfer_layout_string(BLHNC)", err) {
			fmt.Printf("      flashinfer layout = %s\n", fi)
		}
		// [L, B, H, N, C]: 2 layers, 3 blocks, 4 heads, kvBlock slots, 8 elements.
		s, err := chosen.Strides([5]int64{2, 3, 4, kvBlock, 8})
		if check(12, "cattn_kv_cache_layout_strides(BLHNC, [L, B, H, N, C] = [2, 3, 4, 4, 8])", err) {
			fmt.Printf("      strides %s, physical_shape %s, numel %d\n", ints(s.Strides[:]),
				ints(s.PhysicalShape[:]), s.Numel)
		}
	}
	_, err = cattn.KVCacheLayoutLHBNC.FlashInferLayoutString()
	checkExpectedError(12, "cattn_get_flashinfer_layout_string(LHBNC; vLLM asserts)", err,
		cattn.StatusNotSupported)
}

// --- 13. Batch split and reorder ----------------------------------------------------------------

// splitBatch splits the host batch (qsl, seqLensCPU) two ways at threshold.
func splitBatch(qsl, seqLensCPU *tensor, maxQueryLen, threshold int64, what string) {
	sb := cattn.SplitBatch{QueryStartLocCPU: qsl.t, NumReqs: batchSize,
		NumActualTokens: int64(qsl.value(batchSize)), MaxQueryLen: maxQueryLen}
	s, err := cattn.SplitDecodesAndPrefills(sb, cattn.SplitOptions{DecodeThreshold: &threshold})
	if check(13, fmt.Sprintf("cattn_split_decodes_and_prefills(%s, threshold %d)", what, threshold), err) {
		fmt.Printf("      num_decodes %d, num_prefills %d, num_decode_tokens %d, num_prefill_tokens %d\n",
			s.NumDecodes, s.NumPrefills, s.NumDecodeTokens, s.NumPrefillTokens)
	}
	s3, err := cattn.SplitDecodesPrefillsAndExtends(sb, seqLensCPU.t, threshold)
	if check(13, fmt.Sprintf("cattn_split_decodes_prefills_and_extends(%s, threshold %d)", what, threshold), err) {
		fmt.Printf("      num_decodes %d, num_extends %d, num_prefills %d, num_decode_tokens %d, "+
			"num_extend_tokens %d, num_prefill_tokens %d\n", s3.NumDecodes, s3.NumExtends,
			s3.NumPrefills, s3.NumDecodeTokens, s3.NumExtendTokens, s3.NumPrefillTokens)
	}
}

func transcriptSplitAndReorder(b *batch) {
	// The prompts of requests 1 and 2 go on past what is computed so far (chunked prefills);
	// request 3 computed its 20-token prompt and 12 generated tokens.
	promptLens := []int64{16, 24, 32, 20}
	section(13, "Batch split (split_decodes_and_prefills, split_decodes_prefills_and_extends, "+
		"split_prefill_chunks, reorder_batch_to_split_decodes_and_prefills)")
	fmt.Printf("  inputs: query_start_loc_cpu and seq_lens_cpu (above); the batch starts with a " +
		"prefill, not in vLLM's order\n")
	splitBatch(b.queryStartLocCPU, b.seqLensCPU, b.maxQuery, 1, "the batch")

	computed := make([]int64, batchSize)
	for r := range computed {
		computed[r] = seqLens[r] - queryLens[r]
	}
	fmt.Printf("  reorder inputs: num_prompt_tokens as below, decode_threshold 1\n")
	printTensor("num_scheduled_tokens", tensorOf(cattn.Int64, queryLens, batchSize))
	printTensor("num_computed_tokens", tensorOf(cattn.Int64, computed, batchSize))
	printTensor("num_prompt_tokens", tensorOf(cattn.Int64, promptLens, batchSize))
	plan, err := cattn.ReorderBatchToSplitDecodesAndPrefills(queryLens, computed, promptLens, 1)
	if !check(13, "cattn_reorder_batch_to_split_decodes_and_prefills", err) {
		return
	}
	printTensor("index_map", tensorOf(cattn.Int64, plan.IndexMap, batchSize))
	swaps := " none"
	if len(plan.Swaps) > 0 {
		parts := make([]string, len(plan.Swaps))
		for i, s := range plan.Swaps {
			parts[i] = fmt.Sprintf(" (%d, %d)", s[0], s[1])
		}
		swaps = strings.Join(parts, ",")
	}
	fmt.Printf("      changed %d, swaps%s\n", b2i(plan.Changed), swaps)
	fmt.Printf("      regions: decode %d, short extend %d, long extend %d, prefill %d\n",
		plan.Counts[0], plan.Counts[1], plan.Counts[2], plan.Counts[3])

	// What the engine then does: the batch in the new order (request IndexMap[i] at i).
	qsl := []int64{0}
	slens := make([]int64, batchSize)
	maxQ := int64(0)
	for i, from := range plan.IndexMap {
		qsl = append(qsl, qsl[i]+queryLens[from])
		slens[i] = seqLens[from]
		maxQ = max(maxQ, queryLens[from])
	}
	newQSL := tensorOf(cattn.Int32, qsl, batchSize+1)
	newSL := tensorOf(cattn.Int32, slens, batchSize)
	fmt.Printf("  the batch reordered by index_map:\n")
	printTensor("query_start_loc_cpu", newQSL)
	printTensor("seq_lens_cpu", newSL)
	splitBatch(newQSL, newSL, maxQ, 1, "reordered")
	splitBatch(newQSL, newSL, maxQ, 4, "reordered")

	// The requests after the decodes, chunked for a 32-token workspace (MLA's chunked context).
	numDecodes := plan.Counts[0]
	prefillLens := slens[numDecodes:]
	fmt.Printf("  chunk inputs: the seq_lens after the decodes, workspace_size 32, request_offset %d\n",
		numDecodes)
	printTensor("seq_lens_cpu", tensorOf(cattn.Int64, prefillLens, int64(len(prefillLens))))
	chunks, err := cattn.SplitPrefillChunks(prefillLens, 32, numDecodes)
	if check(13, "cattn_split_prefill_chunks", err) {
		flat := make([]int64, 0, 2*len(chunks))
		for _, c := range chunks {
			flat = append(flat, c[0], c[1])
		}
		printTensor("chunks [start, end)", tensorOf(cattn.Int64, flat, int64(len(chunks)), 2))
	}
}

// --- main ---------------------------------------------------------------------------------------

var utilityNames = [numUtilities + 1]string{
	"",
	"get_kv_cache_layout",
	"get_dcp_local_seq_lens",
	"get_pcp_query_restore_idx",
	"fused_pcp_qkv_select",
	"pcp_kv_allgather_and_restore",
	"compute_causal_conv1d_metadata",
	"extend_all_queries_by_1 (N)",
	"make_kv_sharing_fast_prefill_common_attn_metadata",
	"make_local_attention_virtual_batches",
	"mamba_get_block_table_tensor",
	"get_per_layer_parameters",
	"resolve_kv_cache_layout",
	"split_decodes_and_prefills",
}

func main() {
	gpus, countErr := cattn.CUDADeviceCount()
	fmt.Printf("Go binding transcript: running on the host (libcattn sees %d CUDA device(s); this transcript uses host tensors only)\n", gpus)
	fmt.Printf("libcattn %s (header %s) transcript\n", cattn.VersionString(), cattn.HeaderVersionString)
	if cattn.Version() != cattn.HeaderVersion {
		fmt.Printf("warning: library version %d differs from header version %d\n", cattn.Version(), cattn.HeaderVersion)
	}
	check(0, "cattn_cuda_device_count", countErr)
	fmt.Printf("Batch tensors live in host memory; host mirrors (*_cpu) in host memory.\n" +
		"get_kv_cache_layout, get_per_layer_parameters and resolve_kv_cache_layout take no tensors\n" +
		"and the batch split reads host tensors only: they always run on the host.\n")

	b := makeBatch()
	b.print()

	transcriptKVCacheLayout()
	transcriptDCPLocalSeqLens(b)
	transcriptPCPQueryRestoreIdx(b)
	transcriptFusedPCPQKVSelect()
	transcriptPCPKVAllgatherAndRestore()
	transcriptCausalConv1dMetadata(b)
	transcriptExtendAllQueriesByN(b)
	transcriptFastPrefill(b)
	transcriptLocalAttention(b)
	transcriptMambaBlockTable(b)
	transcriptPerLayerParameters()
	transcriptKVCacheLayoutResolver()
	transcriptSplitAndReorder(b)

	fmt.Printf("\n== Summary ==\n")
	ok := !failed[0]
	for u := 1; u <= numUtilities; u++ {
		verdict := "CATTN_OK"
		if failed[u] {
			verdict = firstBad[u].String()
		}
		note := ""
		if u == 5 {
			note = " (not counted on the host: needs GPUs and NCCL)"
		} else if failed[u] {
			ok = false
		}
		fmt.Printf("  %2d. %-50s %s%s\n", u, utilityNames[u], verdict, note)
	}
	if ok {
		fmt.Println("All counted utilities returned CATTN_OK.")
		return
	}
	fmt.Println("Some utilities FAILED.")
	os.Exit(1)
}
