// SPDX-License-Identifier: Apache-2.0

package cattn_test

import (
	"errors"
	"fmt"

	cattn "github.com/libcattn/cattn-go"
)

func ExampleGetKVCacheLayout() {
	ctx, err := cattn.NewContext()
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	user := "NHD"
	layout, _ := ctx.GetKVCacheLayout(cattn.KVCacheLayoutArgs{Connector: cattn.KVCacheLayoutHND})
	fmt.Println("connector prefers HND:", layout)
	layout, _ = ctx.GetKVCacheLayout(cattn.KVCacheLayoutArgs{UserSetting: &user, Connector: cattn.KVCacheLayoutHND})
	fmt.Println("user says NHD:", layout)
	_ = ctx.SetKVCacheLayoutOverride(cattn.KVCacheLayoutHND)
	layout, _ = ctx.GetKVCacheLayout(cattn.KVCacheLayoutArgs{UserSetting: &user})
	fmt.Println("override HND:", layout)
	valid, _ := cattn.IsValidKVCacheLayout("hnd")
	fmt.Println(`"hnd" is valid:`, valid)
	// Output:
	// connector prefers HND: HND
	// user says NHD: NHD
	// override HND: HND
	// "hnd" is valid: false
}

func ExampleGetDCPLocalSeqLens() {
	seqLens := []int32{16, 10, 17, 33}
	perRank := make([]int32, 4*2)
	err := cattn.GetDCPLocalSeqLens(cattn.DCPLocalSeqLensArgs{
		SeqLens:        cattn.Int32Tensor(seqLens),
		DCPSize:        2,
		Ranks:          cattn.AllDCPRanks,
		InterleaveSize: 4,
		Out:            cattn.Int32Tensor(perRank, 4, 2),
	})
	fmt.Println(perRank, err)
	// Output: [8 8 6 4 9 8 17 16] <nil>
}

func ExampleGetPCPQueryRestoreIdx() {
	cu := cattn.Int64Tensor([]int64{0, 8, 20})
	size, err := cattn.GetPCPQueryRestoreIdxSize(cu)
	if err != nil {
		panic(err)
	}
	restore := make([]int64, size)
	if err := cattn.GetPCPQueryRestoreIdx(cu, cattn.Int64Tensor(restore), 0); err != nil {
		panic(err)
	}
	fmt.Println(size, restore)
	// Output: 20 [0 1 2 3 10 11 12 13 4 5 6 7 8 9 14 15 16 17 18 19]
}

func ExampleFusedPCPQKVSelect() {
	// World size 2, rank 0, one head of dimension 1; q row i holds 100 + i, K row j 200 + j,
	// V row j 300 + j.
	const nq, world, rank = 14, 2, 0
	q, k, v := make([]float32, nq), make([]float32, world*nq), make([]float32, world*nq)
	for i := range q {
		q[i] = float32(100 + i)
	}
	for j := range k {
		k[j], v[j] = float32(200+j), float32(300+j)
	}
	qHead, qTail := make([]float32, nq/2), make([]float32, nq/2)
	kHead, vHead := make([]float32, nq/2*(rank+1)), make([]float32, nq/2*(rank+1))
	kTail, vTail := make([]float32, nq/2*(2*world-rank)), make([]float32, nq/2*(2*world-rank))
	view := func(data []float32) *cattn.Tensor { return cattn.Float32Tensor(data, int64(len(data)), 1, 1) }
	err := cattn.FusedPCPQKVSelect(cattn.FusedPCPQKVSelectArgs{
		Q: view(q), K: view(k), V: view(v),
		QueryStartLoc: cattn.Int32Tensor([]int32{0, 8, 10, 14}),
		PCPWorldSize:  world, PCPRank: rank,
		QHead: view(qHead), KHead: view(kHead), VHead: view(vHead),
		QTail: view(qTail), KTail: view(kTail), VTail: view(vTail),
	})
	fmt.Println(err)
	fmt.Println("q_head", qHead)
	fmt.Println("q_tail", qTail)
	fmt.Println("k_head", kHead)
	// Output:
	// <nil>
	// q_head [100 101 102 103 108 110 111]
	// q_tail [104 105 106 107 109 112 113]
	// k_head [200 201 202 203 216 220 221]
}

// The all-gather needs NCCL and GPUs: device tensors by address, a communicator per rank
// (one goroutine or process each), and a device workspace. Not run here.
func ExamplePCPKVAllgatherAndRestore() {
	var id cattn.CommUniqueID // from cattn.NewCommUniqueID on rank 0, sent to every rank
	comm, err := cattn.NewComm(id, 2, 0, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()
	var keyPtr, valuePtr, idxPtr, keyOutPtr, valueOutPtr, workspace uintptr // cudaMalloc'd
	var stream cattn.Stream                                                 // a cudaStream_t
	args := cattn.PCPKVAllgatherAndRestoreArgs{
		Comm:            comm,
		Key:             cattn.UnsafeDeviceTensor(keyPtr, cattn.CUDA(0), cattn.BFloat16, 16, 8, 128),
		Value:           cattn.UnsafeDeviceTensor(valuePtr, cattn.CUDA(0), cattn.BFloat16, 16, 8, 128),
		NumActualTokens: 16,
		RestoreIdx:      cattn.UnsafeDeviceTensor(idxPtr, cattn.CUDA(0), cattn.Int64, 32),
		KeyOut:          cattn.UnsafeDeviceTensor(keyOutPtr, cattn.CUDA(0), cattn.BFloat16, 32, 8, 128),
		ValueOut:        cattn.UnsafeDeviceTensor(valueOutPtr, cattn.CUDA(0), cattn.BFloat16, 32, 8, 128),
		Stream:          stream,
	}
	size, err := cattn.PCPKVAllgatherAndRestoreWorkspaceSize(args)
	if err != nil {
		fmt.Println(err)
		return
	}
	args.Workspace, args.WorkspaceSize = workspace, size
	fmt.Println(cattn.PCPKVAllgatherAndRestore(args))
}

func ExampleComputeCausalConv1dMetadata() {
	qsl := cattn.Int32Tensor([]int32{0, 10, 16, 17})
	tot, capacity, _ := cattn.ComputeCausalConv1dMetadataSize(qsl, 8)
	nums, mlist, offsets := make([]int32, 3), make([]int32, tot), make([]int32, tot)
	batchPtr := make([]int32, capacity)
	_, err := cattn.ComputeCausalConv1dMetadata(cattn.CausalConv1dMetadataArgs{
		QueryStartLocCPU: qsl, BlockM: 8,
		Nums: cattn.Int32Tensor(nums), MList: cattn.Int32Tensor(mlist),
		OffsetList: cattn.Int32Tensor(offsets), BatchPtr: cattn.Int32Tensor(batchPtr),
	})
	fmt.Println(err, tot, capacity, nums, mlist, offsets, batchPtr[:6])
	// Output: <nil> 4 2048 [2 1 1] [0 0 1 2] [0 1 0 0] [0 0 1 2 -1 -1]
}

func ExampleExtendAllQueriesByN() {
	qsl, seqLens := []int32{0, 15, 20, 28}, []int32{41, 31, 40}
	batch := cattn.CommonAttnMetadata{
		QueryStartLoc: cattn.Int32Tensor(qsl), SeqLens: cattn.Int32Tensor(seqLens),
		NumReqs: 3, NumActualTokens: 28, MaxQueryLen: 15, MaxSeqLen: 41}
	// In place: the output is the batch itself.
	err := cattn.ExtendAllQueriesByN(cattn.ExtendAllQueriesByNArgs{Metadata: &batch, Out: &batch})
	fmt.Println(err, qsl, seqLens, batch.NumActualTokens, batch.MaxQueryLen, batch.MaxSeqLen)
	// Output: <nil> [0 16 22 31] [42 32 41] 31 16 42
}

func ExampleMakeKVSharingFastPrefillCommonAttnMetadata() {
	batch := cattn.CommonAttnMetadata{
		QueryStartLoc:       cattn.Int32Tensor([]int32{0, 15, 20, 28}),
		LogitsIndicesPadded: cattn.Int32Tensor([]int32{14, 18, 19, 27, 0, 0}),
		NumLogitsIndices:    4,
		NumReqs:             3, NumActualTokens: 28, MaxQueryLen: 15, MaxSeqLen: 41}
	decodeQsl := make([]int32, 4)
	decode := cattn.CommonAttnMetadata{QueryStartLoc: cattn.Int32Tensor(decodeQsl)}
	passthrough, err := cattn.MakeKVSharingFastPrefillCommonAttnMetadata(
		cattn.FastPrefillMetadataArgs{Metadata: &batch, Out: &decode})
	fmt.Println(err, passthrough, decodeQsl, decode.NumActualTokens, decode.MaxQueryLen)
	// Output: <nil> false [0 1 3 4] 4 2
}

func ExampleMakeLocalAttentionVirtualBatches() {
	batch := cattn.CommonAttnMetadata{
		QueryStartLocCPU: cattn.Int32Tensor([]int32{0, 8}),
		SeqLensCPU:       cattn.Int32Tensor([]int32{12}),
		BlockTableTensor: cattn.Int32Tensor([]int32{0, 1, 2, 3, 4, 5}, 1, 6),
		NumReqs:          1, NumActualTokens: 8}
	plan, err := cattn.MakeLocalAttentionVirtualBatches(4, 2, &batch)
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	v, p, _ := plan.Shape()
	qsl, seq, computed, table := make([]int32, v+1), make([]int32, v), make([]int32, v), make([]int32, v*p)
	virtual := cattn.CommonAttnMetadata{
		QueryStartLocCPU: cattn.Int32Tensor(qsl), SeqLensCPU: cattn.Int32Tensor(seq),
		NumComputedTokensCPU: cattn.Int32Tensor(computed), BlockTableTensor: cattn.Int32Tensor(table, v, p),
	}
	err = plan.Fill(&batch, &virtual, 0)
	fmt.Println(err, v, p, qsl, seq, computed, table, virtual.MaxSeqLen)
	// Output: <nil> 2 2 [0 4 8] [4 4] [0 0] [2 3 4 5] 4
}

func ExampleMambaGetBlockTableTensor() {
	table := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	out := make([]int64, 3*3)
	err := cattn.MambaGetBlockTableTensor(cattn.MambaBlockTableArgs{
		BlockTable: cattn.Int64Tensor(table, 3, 4), SeqLens: cattn.Int64Tensor([]int64{16, 17, 1}),
		BlockSize: 16, NumSpeculativeBlocks: 2, Mode: cattn.MambaCacheModeAlign,
		Out: cattn.Int64Tensor(out, 3, 3),
	})
	fmt.Println(err, out)
	// Output: <nil> [0 1 2 5 6 7 8 9 10]
}

func ExampleGetPerLayerParameters() {
	layers := []cattn.AttentionLayer{
		{HasSlidingWindow: true, SlidingWindow: [2]int64{4095, 0}, Scale: 0.125},
		{HasLogitsSoftCap: true, LogitsSoftCap: 30, Scale: 0.125},
	}
	params, _ := cattn.GetPerLayerParameters(layers)
	global, _ := cattn.InferGlobalHyperparameters(params)
	fmt.Printf("%+v\n%+v\n", params[1], global)
	// Output:
	// {WindowLeft:-1 LogitsSoftCap:30 HasLogitsSoftCap:true SMScale:0.125 HasSinks:false}
	// {PerLayerParameters:{WindowLeft:4095 LogitsSoftCap:0 HasLogitsSoftCap:false SMScale:0.125 HasSinks:false} HasSameWindowLefts:false HasSameAllParams:false}
}

func ExampleNewStepPlan() {
	// Capacities of a vLLM engine: 256 requests, 8192 batched tokens, 512 blocks per request,
	// chunked local attention over chunks of 8192 tokens in KV blocks of 16.
	// The zero desc holds the header's defaults (BlockM 8, N 1, ...): set the products, the
	// capacities and the parameters that have none.
	var desc cattn.StepPlanDesc
	desc.Products = cattn.StepCausalConv1dMetadata | cattn.StepLocalAttention | cattn.StepExtendQueries
	desc.MaxNumReqs, desc.MaxNumTokens, desc.MaxNumBlocksPerReq = 256, 8192, 512
	desc.LocalAttention = cattn.StepLocalAttentionParams{AttnChunkSize: 8192, BlockSize: 16}
	plan, err := cattn.NewStepPlan(desc)
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	shape, _ := plan.Shape()
	workspace, _ := plan.WorkspaceSize()
	fmt.Println(shape.Conv1dCapacity, shape.LocalCapacity, shape.LocalPages, workspace)

	// A parameter out of range is refused.
	desc.Conv1d.BlockM = -1
	_, err = cattn.NewStepPlan(desc)
	fmt.Println(errors.Is(err, cattn.StatusInvalidArgument))
	// Output:
	// 1280 513 512 0
	// true
}

// A run needs a GPU: the batch and the outputs are device buffers (by address) that the engine
// rewrites before every replay of the CUDA graph the run was captured in. Not run here.
func ExampleStepPlan_Run() {
	// The zero desc holds the header's defaults (BlockM 8, N 1, ...): set the products, the
	// capacities and the parameters that have none.
	var desc cattn.StepPlanDesc
	desc.Products = cattn.StepCausalConv1dMetadata | cattn.StepExtendQueries
	desc.MaxNumReqs, desc.MaxNumTokens, desc.MaxNumBlocksPerReq = 8, 512, 1
	plan, err := cattn.NewStepPlan(desc)
	if err != nil {
		panic(err)
	}
	defer plan.Close()
	shape, _ := plan.Shape()
	const b = 8                                                  // the graph's batch size
	var qsl, seqLens, batchPtr, chunkPtr, extQsl, extSeq uintptr // cudaMalloc'd
	var counts uintptr                                           // cudaHostAlloc'd (mapped)
	var stream cattn.Stream                                      // a cudaStream_t, capturing
	dev := func(p uintptr, shape ...int64) *cattn.Tensor {
		return cattn.UnsafeDeviceTensor(p, cattn.CUDA(0), cattn.Int32, shape...)
	}
	err = plan.Run(cattn.StepBatch{QueryStartLoc: dev(qsl, b+1), SeqLens: dev(seqLens, b)},
		cattn.StepOutputs{
			Conv1dBatchPtr:            dev(batchPtr, shape.Conv1dCapacity),
			Conv1dTokenChunkOffsetPtr: dev(chunkPtr, shape.Conv1dCapacity),
			ExtendQueryStartLoc:       dev(extQsl, b+1),
			ExtendSeqLens:             dev(extSeq, b),
			CountsHost: cattn.UnsafeDeviceTensor(counts, cattn.Device{Type: cattn.DeviceCUDAHost},
				cattn.Int64, cattn.StepNumCounts),
		}, stream)
	fmt.Println(err)
	// After the stream is synchronised, counts[cattn.StepCountConv1dPrograms] holds tot.
}

func ExampleError() {
	restore := make([]int64, 10)
	err := cattn.GetPCPQueryRestoreIdx(cattn.Int64Tensor([]int64{0, 8, 20}), cattn.Int64Tensor(restore), 0)
	var e *cattn.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code)
		fmt.Println(errors.Is(err, cattn.StatusInsufficientSize))
	}
	// Output:
	// CATTN_INSUFFICIENT_SIZE
	// true
}
