// SPDX-License-Identifier: Apache-2.0

// Command transcript is a test transcript: it runs every libcattn utility (1-15) through the Go
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
// The 1.2 sections (14, step inputs; 15, speculative decoding) take the batch as vLLM's model
// runner v2 keeps it, persistent request rows and all, plus a fifth request (a decode with 2
// drafts) in a CUDA-graph bucket of 6 rows, and then run a drafter step on it.
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
	u8    []byte // flags (the speculative-decoding masks): one byte per entry, nonzero = set
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
	case cattn.UInt8:
		x.u8 = make([]byte, n)
		x.t = cattn.BytesTensor(x.u8, cattn.UInt8, shape...)
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
	case x.u8 != nil:
		x.u8[i] = byte(v)
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
	case x.u8 != nil:
		return float64(x.u8[i])
	}
	return float64(x.f32[i])
}

func (x *tensor) dtypeName() string {
	switch {
	case x.i32 != nil:
		return "int32"
	case x.i64 != nil:
		return "int64"
	case x.u8 != nil:
		return "uint8"
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

const numUtilities = 15

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

// --- 14. Step inputs (1.2) ----------------------------------------------------------------------

// The step of the 1.2 sections: the batch above as model runner v2 (MRV2) keeps it, plus a
// fifth request, a decode with 2 drafts, in a CUDA-graph bucket of 6 batch rows whose last is
// padding, over 6 persistent request rows (persistent row 4 holds a request that is not
// scheduled this step):
//
//	batch row             0     1     2     3     4     5 (padding: never read)
//	persistent row        2     5     0     3     1     -
//	num_computed_tokens   0     6     9     32    20    -
//	scheduled tokens      16    4     8     1     3     -
//	drafts                0     0     0     0     2     -
//
// Two KV-cache groups: group 0 has blocks of 4 tokens and batch row b's blocks are 10b + j (the
// batch above's table), group 1 blocks of 8 and blocks 100 + 10b + j. Rows 0-2 are prompt
// chunks (seq_len <= prefill_len), whose input ids the engine wrote (request b's token at
// position p is 100 (b + 1) + p); rows 3 and 4 are decodes, whose ids the combine call writes.
const (
	stepRows       = 6
	stepLive       = 5
	stepPersistent = 6
	stepTokenCap   = 36
	stepLogitCap   = 8
	stepW0         = 10
	stepW1         = 5
	stepMaxDrafts  = 2
)

var (
	stepScheduled  = []int64{16, 4, 8, 1, 3, 7}
	stepIdxMapping = []int64{2, 5, 0, 3, 1, 4}
	stepDrafts     = []int64{0, 0, 0, 0, 2, 0}
	// Per persistent row: the batch row it is this step (5: none), its computed tokens, the
	// group-0 blocks in use (cdiv(seq_len, 4)) and its prompt length.
	stepOwner      = []int64{2, 4, 0, 3, 5, 1}
	stepComputed   = []int64{9, 20, 0, 32, 12, 6}
	stepNumBlocks0 = []int64{5, 6, 4, 9, 3, 3}
	stepPrefillLen = []int64{32, 18, 16, 20, 30, 24}
	// Persistent row 1's drafts; persistent row r's last sampled token is 900 + r.
	stepDraftTokens = []int64{960, 961}
)

// stepTokens returns the live rows' query_start_loc, positions and input ids: the prompt tokens
// of the prompt chunks and, with combined, each decode row's last sampled token and drafts
// (what CombineSampledAndDraftTokens writes), else 0 there.
func stepTokens(combined bool) (qsl, positions, ids []int64) {
	qsl = []int64{0}
	for b := int64(0); b < stepLive; b++ {
		r := stepIdxMapping[b]
		nct, q, d := stepComputed[r], stepScheduled[b], stepDrafts[b]
		decode := nct+q > stepPrefillLen[r]
		for j := int64(0); j < q; j++ {
			positions = append(positions, nct+j)
			switch {
			case !decode:
				ids = append(ids, 100*(b+1)+nct+j)
			case !combined:
				ids = append(ids, 0)
			case j < q-d:
				ids = append(ids, 900+r)
			default:
				ids = append(ids, stepDraftTokens[j-(q-d)])
			}
		}
		qsl = append(qsl, int64(len(positions)))
	}
	return qsl, positions, ids
}

func filled(n int, v int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func transcriptStepInputs() {
	section(14, "Step inputs, 1.2 (step_inputs_size, prepare_pos_seq_lens, gather_block_tables, "+
		"compute_slot_mappings, combine_sampled_and_draft_tokens, step_batch_check)")
	var table0, table1, draftTokens, last []int64
	for r, owner := range stepOwner {
		for j := int64(0); j < stepW0; j++ {
			table0 = append(table0, 10*owner+j)
		}
		for j := int64(0); j < stepW1; j++ {
			table1 = append(table1, 100+10*owner+j)
		}
		if int64(r) == stepIdxMapping[4] {
			draftTokens = append(draftTokens, stepDraftTokens...)
		} else {
			draftTokens = append(draftTokens, 0, 0)
		}
		last = append(last, 900+int64(r))
	}
	ids := make([]int64, stepTokenCap)
	_, _, promptIDs := stepTokens(false)
	copy(ids, promptIDs)

	sched := tensorOf(cattn.Int32, stepScheduled, stepRows)
	idx := tensorOf(cattn.Int32, stepIdxMapping, stepRows)
	drafts := tensorOf(cattn.Int32, stepDrafts, stepRows)
	numReqs := tensorOf(cattn.Int32, []int64{stepLive}, 1)
	computed := tensorOf(cattn.Int32, stepComputed, stepPersistent)
	t0 := tensorOf(cattn.Int32, table0, stepPersistent, stepW0)
	nb0 := tensorOf(cattn.Int32, stepNumBlocks0, stepPersistent)
	t1 := tensorOf(cattn.Int32, table1, stepPersistent, stepW1)
	prefill := tensorOf(cattn.Int32, stepPrefillLen, stepPersistent)
	lastT := tensorOf(cattn.Int32, last, stepPersistent)
	draftsT := tensorOf(cattn.Int32, draftTokens, stepPersistent, stepMaxDrafts)
	idsT := tensorOf(cattn.Int32, ids, stepTokenCap)
	fmt.Printf("  inputs: a CUDA-graph bucket of 6 batch rows with num_reqs 5 live (row 5 is padding: " +
		"its entries\n          are never read), 6 persistent request rows (row 4 is not " +
		"scheduled this step)\n")
	printTensor("num_reqs", numReqs)
	printTensor("num_scheduled_tokens", sched)
	printTensor("idx_mapping", idx)
	printTensor("num_draft_tokens", drafts)
	printTensor("num_computed_tokens", computed)
	printTensor("prefill_len", prefill)
	printTensor("last_sampled_tokens", lastT)
	printTensor("draft_tokens", draftsT)
	printTensor("block_table (group 0)", t0)
	printTensor("num_blocks (group 0)", nb0)
	printTensor("block_table (group 1)", t1)
	printTensor("input_ids (prompt tokens)", idsT)

	size, err := cattn.StepInputsSize(cattn.StepInputsSizeArgs{
		NumScheduledTokens: sched.t, NumReqs: numReqs.t, NumDraftTokens: drafts.t,
	})
	if !check(14, "cattn_step_inputs_size", err) {
		return
	}
	fmt.Printf("      num_tokens = %d, num_logits = %d; the outputs are sized for the bucket: "+
		"%d tokens, %d logits\n", size.NumTokens, size.NumLogits, stepTokenCap, stepLogitCap)
	if size.NumTokens > stepTokenCap || size.NumLogits > stepLogitCap {
		fmt.Printf("      the bucket is too small for the step\n")
		recordFailure(14, cattn.StatusInsufficientSize)
		return
	}

	qsl := newTensor(cattn.Int32, stepRows+1)
	seqLensT := newTensor(cattn.Int32, stepRows)
	positions := newTensor(cattn.Int32, stepTokenCap)
	batchNCT := newTensor(cattn.Int32, stepRows)
	err = cattn.PreparePosSeqLens(cattn.PreparePosSeqLensArgs{
		NumScheduledTokens: sched.t, IdxMapping: idx.t, NumComputedTokens: computed.t,
		NumReqs: numReqs.t, QueryStartLoc: qsl.t, SeqLens: seqLensT.t, Positions: positions.t,
		BatchNumComputedTokens: batchNCT.t,
	})
	if !check(14, "cattn_prepare_pos_seq_lens", err) {
		return
	}
	printTensor("query_start_loc", qsl)
	printTensor("seq_lens", seqLensT)
	printTensor("positions", positions)
	printTensor("batch_num_computed_tokens", batchNCT)

	// The gathered tables start as -1: entries past a row's num_blocks are left as they are.
	g0 := tensorOf(cattn.Int32, filled(stepRows*stepW0, -1), stepRows, stepW0)
	g1 := tensorOf(cattn.Int32, filled(stepRows*stepW1, -1), stepRows, stepW1)
	fmt.Printf("  the batch tables start as -1 (entries past a row's num_blocks are left as they are)\n")
	err = cattn.GatherBlockTables(cattn.GatherBlockTablesArgs{
		IdxMapping: idx.t, NumReqs: numReqs.t, BlockTable: t0.t, NumBlocks: nb0.t, Out: g0.t,
	})
	if check(14, "cattn_gather_block_tables(group 0, num_blocks)", err) {
		printTensor("batch table (group 0)", g0)
	}
	err = cattn.GatherBlockTables(cattn.GatherBlockTablesArgs{
		IdxMapping: idx.t, NumReqs: numReqs.t, BlockTable: t1.t, Out: g1.t,
	})
	if !check(14, "cattn_gather_block_tables(group 1, full width)", err) {
		return
	}
	printTensor("batch table (group 1)", g1)

	s0 := newTensor(cattn.Int64, stepTokenCap)
	s1 := newTensor(cattn.Int64, stepTokenCap)
	err = cattn.ComputeSlotMappings(cattn.ComputeSlotMappingsArgs{
		SlotMappingParams: cattn.SlotMappingParams{Contract: cattn.SlotMappingMRV2, BlockSize: 4,
			KernelBlockSize: 4},
		QueryStartLoc: qsl.t, NumReqs: numReqs.t, Positions: positions.t, IdxMapping: idx.t,
		BlockTable: t0.t, SlotMapping: s0.t,
	})
	if !check(14, "cattn_compute_slot_mappings(group 0: MRV2, block_size 4, persistent table)", err) {
		return
	}
	printTensor("slot_mapping (group 0)", s0)
	err = cattn.ComputeSlotMappings(cattn.ComputeSlotMappingsArgs{
		SlotMappingParams: cattn.SlotMappingParams{Contract: cattn.SlotMappingV1, BlockSize: 8,
			KernelBlockSize: 8},
		QueryStartLoc: qsl.t, NumReqs: numReqs.t, Positions: positions.t, BlockTable: g1.t,
		SlotMapping: s1.t,
	})
	if !check(14, "cattn_compute_slot_mappings(group 1: v1, block_size 8, batch table)", err) {
		return
	}
	printTensor("slot_mapping (group 1)", s1)

	logits := newTensor(cattn.Int32, stepLogitCap)
	cuLogits := newTensor(cattn.Int32, stepRows+1)
	expIdx := newTensor(cattn.Int32, stepLogitCap)
	expPos := newTensor(cattn.Int32, stepLogitCap)
	err = cattn.CombineSampledAndDraftTokens(cattn.CombineSampledAndDraftTokensArgs{
		QueryStartLoc: qsl.t, NumReqs: numReqs.t, NumDraftTokens: drafts.t, IdxMapping: idx.t,
		SeqLens: seqLensT.t, PrefillLen: prefill.t, LastSampledTokens: lastT.t,
		DraftTokens: draftsT.t, LogitsIndices: logits.t, CuNumLogits: cuLogits.t,
		ExpandedIdxMapping: expIdx.t, ExpandedLocalPos: expPos.t, InputIDs: idsT.t,
	})
	if !check(14, "cattn_combine_sampled_and_draft_tokens", err) {
		return
	}
	printTensor("logits_indices", logits)
	printTensor("cu_num_logits", cuLogits)
	printTensor("expanded_idx_mapping", expIdx)
	printTensor("expanded_local_pos", expPos)
	printTensor("input_ids", idsT)

	status := newTensor(cattn.Int32, 3)
	err = cattn.StepBatchCheck(cattn.StepBatchCheckArgs{
		QueryStartLoc: qsl.t, NumReqs: numReqs.t, SeqLens: seqLensT.t,
		BlockTables: []*cattn.Tensor{g0.t, g1.t}, SlotMappings: []*cattn.Tensor{s0.t, s1.t},
		Status: status.t,
	})
	if check(14, "cattn_step_batch_check(both groups)", err) {
		printTensor("status [field, index, group]", status)
		if cattn.StepCheckField(status.value(0)) == cattn.StepCheckOK {
			fmt.Printf("      the step keeps the padding contract\n")
		} else {
			fmt.Printf("      the step BREAKS the padding contract\n")
			recordFailure(14, cattn.StatusInternal)
		}
	}
}

// --- 15. Speculative decoding (1.2) -------------------------------------------------------------

// A drafter step after the target model verified section 14's 5 live requests, chained as
// vLLM's EAGLE proposer chains it: EAGLE fed the target's hidden states (shift s = 1) with
// parallel drafting (P = 2: the bonus token and one parallel-drafting token), so that each
// request grows by N = P - s = 1 token. Requests 1 and 2 are prompt chunks: their sampled tokens
// are discarded and they go on from a backup token. Request 4 verified its 2 drafts (960, 961):
// the target accepted 960 and sampled 705 in place of 961. The drafter's layers use KV group 1
// (blocks of 8, batch row b's blocks 100 + 10b + j); max_model_len is 34.
const (
	specReqs        = 5
	specCols        = 3 // the most drafts + 1
	specP           = 2
	specBlock       = 8
	specMaxModelLen = 34
	specGraphRows   = 8
	specNextRows    = 6
)

var (
	specSampled = []int64{701, -1, -1, 702, -1, -1, 703, -1, -1, 704, -1, -1, 960, 705, -1}
	specDiscard = []int64{0, 1, 1, 0, 0}
	specBackup  = []int64{801, 802, 803, 804, 805}
	// The next step's batch: the 4 old requests in place, a new request at row 4, old row 4 at
	// row 5; the scheduler's counts (row 5's assumes that every draft was accepted).
	nextPrevPositions = []int64{0, 1, 2, 3, -1, 4}
	nextCPUComputed   = []int64{16, 10, 17, 33, 0, 23}
)

func transcriptSpecDecode() {
	section(15, "Speculative decoding, 1.2 (eagle_prepare_next_token_padded, "+
		"eagle_prepare_inputs_padded, copy_and_expand_eagle_inputs, compute_new_slot_mapping, "+
		"eagle_step_update_slot_mapping_and_metadata, update_num_computed_tokens_for_batch_change)")
	const nNew = specP - 1 // N = P - s
	qslValues, posValues, idValues := stepTokens(true)
	numTokens := int64(len(posValues))
	nOut := numTokens + specReqs*nNew
	var cuDrafts, seqLens, table []int64
	sum := int64(0)
	for b := int64(0); b < specReqs; b++ {
		sum += stepDrafts[b]
		cuDrafts = append(cuDrafts, sum)
		// The drafter batch's seq_lens: the verified ones grown by N, as ExtendAllQueriesByN
		// grows them.
		seqLens = append(seqLens, stepComputed[stepIdxMapping[b]]+stepScheduled[b]+nNew)
		for j := int64(0); j < stepW1; j++ {
			table = append(table, 100+10*b+j)
		}
	}
	sampled := tensorOf(cattn.Int32, specSampled, specReqs, specCols)
	discard := tensorOf(cattn.UInt8, specDiscard, specReqs)
	backup := tensorOf(cattn.Int32, specBackup, specReqs)
	cuT := tensorOf(cattn.Int32, cuDrafts, specReqs)
	qsl := tensorOf(cattn.Int32, qslValues, specReqs+1)
	tok := tensorOf(cattn.Int32, idValues, numTokens)
	pos := tensorOf(cattn.Int32, posValues, numTokens)
	tableT := tensorOf(cattn.Int32, table, specReqs, stepW1)
	fmt.Printf("  inputs: the verified batch (section 14's live rows and input_ids); EAGLE, " +
		"shift_input_ids 1,\n          num_padding_slots_per_request P = 2 (N = P - 1 = 1 new " +
		"token a request), vocab_size 32000,\n          parallel_drafting_token_id 32000, " +
		"padding_token_id 0, block_size 8, max_model_len 34\n")
	printTensor("query_start_loc", qsl)
	printTensor("target_token_ids", tok)
	printTensor("target_positions", pos)
	printTensor("cu_num_draft_tokens", cuT)
	printTensor("sampled_token_ids", sampled)
	printTensor("discard_request_mask", discard)
	printTensor("backup_next_token_ids", backup)
	printTensor("block_table (group 1)", tableT)

	// 1. Each request's next token and its count of valid sampled tokens.
	next := newTensor(cattn.Int32, specReqs)
	valid := newTensor(cattn.Int32, specReqs)
	err := cattn.EaglePrepareNextTokenPadded(cattn.EaglePrepareNextTokenPaddedArgs{
		VocabSize: 32000, SampledTokenIDs: sampled.t, DiscardRequestMask: discard.t,
		BackupNextTokenIDs: backup.t, NextTokenIDs: next.t, ValidSampledTokensCount: valid.t,
	})
	if !check(15, "cattn_eagle_prepare_next_token_padded", err) {
		return
	}
	printTensor("next_token_ids", next)
	printTensor("valid_sampled_tokens_count", valid)

	// 2. The rejected tails and the token each request samples from, its last valid token.
	toSample := newTensor(cattn.Int32, specReqs)
	rejected := newTensor(cattn.Int32, specReqs)
	err = cattn.EaglePrepareInputsPadded(cattn.EaglePrepareInputsPaddedArgs{
		CuNumDraftTokens: cuT.t, ValidSampledTokensCount: valid.t, QueryStartLoc: qsl.t,
		TokenIndicesToSample: toSample.t, NumRejectedTokens: rejected.t,
	})
	if !check(15, "cattn_eagle_prepare_inputs_padded", err) {
		return
	}
	printTensor("num_rejected_tokens", rejected)
	printTensor("token_indices_to_sample", toSample)

	// 3. The drafter's first-pass inputs; QueryEndLoc is the index of step 2.
	outIDs := newTensor(cattn.Int32, nOut)
	outPos := newTensor(cattn.Int32, nOut)
	outRejected := newTensor(cattn.UInt8, nOut)
	outMasked := newTensor(cattn.UInt8, nOut)
	newIdx := newTensor(cattn.Int32, specReqs*specP)
	hidden := newTensor(cattn.Int32, numTokens)
	err = cattn.CopyAndExpandEagleInputs(cattn.CopyAndExpandEagleInputsArgs{
		EagleExpandParams: cattn.EagleExpandParams{PaddingTokenID: 0,
			ParallelDraftingTokenID: 32000, NumPaddingSlotsPerRequest: specP, ShiftInputIDs: true},
		TargetTokenIDs: tok.t, TargetPositions: pos.t, NextTokenIDs: next.t,
		QueryStartLoc: qsl.t, QueryEndLoc: toSample.t, OutInputIDs: outIDs.t,
		OutPositions: outPos.t, OutIsRejectedTokenMask: outRejected.t,
		OutIsMaskedTokenMask: outMasked.t, OutNewTokenIndices: newIdx.t,
		OutHiddenStateMapping: hidden.t,
	})
	if !check(15, "cattn_copy_and_expand_eagle_inputs(query_end_loc = token_indices_to_sample)", err) {
		return
	}
	printTensor("out_input_ids", outIDs)
	printTensor("out_positions", outPos)
	printTensor("out_is_rejected_token_mask", outRejected)
	printTensor("out_is_masked_token_mask", outMasked)
	printTensor("out_new_token_indices", newIdx)
	printTensor("out_hidden_state_mapping", hidden)

	// 4. The slots of the drafter's tokens, -1 for the rejected ones.
	newSlots := newTensor(cattn.Int64, nOut)
	err = cattn.ComputeNewSlotMapping(cattn.ComputeNewSlotMappingArgs{
		NewSlotMappingParams: cattn.NewSlotMappingParams{BlockSize: specBlock, NumNewTokens: nNew,
			MaxModelLen: specMaxModelLen},
		QueryStartLoc: qsl.t, BlockTable: tableT.t, NewPositions: outPos.t,
		IsRejectedTokenMask: outRejected.t, NewSlotMapping: newSlots.t,
	})
	if check(15, "cattn_compute_new_slot_mapping(N = 1, out_positions, out_is_rejected_token_mask)", err) {
		printTensor("new_slot_mapping", newSlots)
	}

	// 5. One autoregressive draft step from the position of each request's last new token (the
	// engine gathers it: out_positions at out_new_token_indices[2i + 1]).
	lastPos := make([]int64, specReqs)
	for b := range lastPos {
		lastPos[b] = int64(outPos.value(int64(newIdx.value(int64(b*specP + specP - 1)))))
	}
	stepPos := tensorOf(cattn.Int32, lastPos, specReqs)
	stepSeq := tensorOf(cattn.Int32, seqLens, specReqs)
	clamped := newTensor(cattn.Int32, specReqs)
	stepSlots := newTensor(cattn.Int64, specGraphRows)
	fmt.Printf("  draft step inputs: positions of each request's last new token, the drafter batch's " +
		"seq_lens\n          (the verified ones + N), input_batch_size 8 (a CUDA graph's bucket)\n")
	printTensor("positions", stepPos)
	printTensor("seq_lens", stepSeq)
	err = cattn.EagleStepUpdateSlotMappingAndMetadata(cattn.EagleStepUpdateSlotMappingAndMetadataArgs{
		EagleStepParams: cattn.EagleStepParams{BlockSize: specBlock, MaxModelLen: specMaxModelLen,
			InputBatchSize: specGraphRows},
		Positions: stepPos.t, BlockTable: tableT.t, SeqLens: stepSeq.t,
		OutClampedPositions: clamped.t, OutSlotMapping: stepSlots.t,
	})
	if check(15, "cattn_eagle_step_update_slot_mapping_and_metadata", err) {
		printTensor("out_clamped_positions", clamped)
		printTensor("out_slot_mapping", stepSlots)
		printTensor("seq_lens (updated)", stepSeq)
	}

	// 6. The next step's batch: each request's computed tokens, carried across the change. The
	// verified batch's counts in its own layout (entry 5 is past it), 1 accepted each.
	nct := make([]int64, specNextRows)
	for b := range nct {
		if b < specReqs {
			nct[b] = stepComputed[stepIdxMapping[b]]
		}
	}
	nctT := tensorOf(cattn.Int32, nct, specNextRows)
	accepted := tensorOf(cattn.Int32, filled(specNextRows, 1), specNextRows)
	prevPos := tensorOf(cattn.Int32, nextPrevPositions, specNextRows)
	prevDrafts := tensorOf(cattn.Int32, stepDrafts, specReqs)
	cpuNCT := tensorOf(cattn.Int32, nextCPUComputed, specNextRows)
	fmt.Printf("  batch change inputs: the next step keeps the 4 old requests in place, adds a new one " +
		"at row 4\n          and moves old row 4 to row 5; valid_sampled_token_count is the one " +
		"above\n")
	printTensor("prev_positions", prevPos)
	printTensor("prev_num_draft_tokens", prevDrafts)
	printTensor("cpu_num_computed_tokens", cpuNCT)
	printTensor("num_computed_tokens", nctT)
	printTensor("num_accepted_tokens", accepted)
	err = cattn.UpdateNumComputedTokensForBatchChange(cattn.UpdateNumComputedTokensForBatchChangeArgs{
		NumComputedTokens: nctT.t, NumAcceptedTokens: accepted.t, PrevPositions: prevPos.t,
		ValidSampledTokenCount: valid.t, PrevNumDraftTokens: prevDrafts.t,
		CPUNumComputedTokens: cpuNCT.t,
	})
	if check(15, "cattn_update_num_computed_tokens_for_batch_change", err) {
		printTensor("num_computed_tokens", nctT)
		printTensor("num_accepted_tokens", accepted)
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
	"step inputs (1.2)",
	"speculative decoding (1.2)",
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
	transcriptStepInputs()
	transcriptSpecDecode()

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
