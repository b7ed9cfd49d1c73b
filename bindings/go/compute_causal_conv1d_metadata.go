package cattn

// PadSlotID is the value written to BatchPtr and TokenChunkOffsetPtr past the programs in use
// (CATTN_PAD_SLOT_ID).
const PadSlotID = -1

// ComputeCausalConv1dMetadataSize returns the number of programs tot and the capacity vLLM
// allocates for the launch arrays, max(1024, tot) * 2
// (cattn_compute_causal_conv1d_metadata_size). queryStartLocCPU: host [B + 1] int32/int64,
// non-decreasing. blockM: tokens per program (vLLM: 8), >= 1.
func ComputeCausalConv1dMetadataSize(queryStartLocCPU *Tensor, blockM int64) (tot, capacity int64, err error) {
	f := newFrame("cattn_compute_causal_conv1d_metadata_size")
	defer f.free()
	qsl, err := f.tensor("query_start_loc_cpu", queryStartLocCPU)
	if err != nil {
		return 0, 0, err
	}
	return f.computeCausalConv1dMetadataSize(qsl, blockM)
}

// CausalConv1dMetadataArgs are the arguments of ComputeCausalConv1dMetadata
// (cattn_causal_conv1d_metadata_args_t). Every output is optional (nil); present ones are
// 1-D int32/int64 on one device.
type CausalConv1dMetadataArgs struct {
	// QueryStartLocCPU: host [B + 1] int32/int64, non-decreasing; an empty tensor is the
	// empty batch, as in vLLM.
	QueryStartLocCPU *Tensor
	BlockM           int64   // tokens per program (vLLM: 8), >= 1
	Nums             *Tensor // out: exactly [B], programs per request
	MList            *Tensor // out: [>= tot], request of each program
	OffsetList       *Tensor // out: [>= tot], chunk index within its request
	BatchPtr         *Tensor // out: [capacity >= tot], MList then PadSlotID
	// TokenChunkOffsetPtr: out, [capacity >= tot], OffsetList then PadSlotID.
	TokenChunkOffsetPtr *Tensor
	Stream              Stream // CUDA outputs only
}

// ComputeCausalConv1dMetadata computes causal_conv1d's launch metadata, as vLLM's
// compute_causal_conv1d_metadata (cattn_compute_causal_conv1d_metadata), and returns tot, the
// number of programs. Request i owns ceil(len_i / BlockM) consecutive programs. A decreasing
// QueryStartLocCPU is StatusInvalidArgument; outputs shorter than needed are
// StatusInsufficientSize. CUDA outputs are written by kernels enqueued on args.Stream, planned
// on the host from QueryStartLocCPU.
func ComputeCausalConv1dMetadata(args CausalConv1dMetadataArgs) (tot int64, err error) {
	f := newFrame("cattn_compute_causal_conv1d_metadata")
	defer f.free()
	var cs [6]cTensor
	names := [6]string{"args->query_start_loc_cpu", "args->nums", "args->mlist",
		"args->offsetlist", "args->batch_ptr", "args->token_chunk_offset_ptr"}
	ts := [6]*Tensor{args.QueryStartLocCPU, args.Nums, args.MList, args.OffsetList,
		args.BatchPtr, args.TokenChunkOffsetPtr}
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return 0, err
	}
	tot, err = f.computeCausalConv1dMetadata(cs, args.BlockM, args.Stream)
	if err != nil {
		return 0, err
	}
	return tot, nil
}
