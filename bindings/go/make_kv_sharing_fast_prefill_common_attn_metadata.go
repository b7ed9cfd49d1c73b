package cattn

// FastPrefillMetadataArgs are the arguments of MakeKVSharingFastPrefillCommonAttnMetadata
// (cattn_fast_prefill_metadata_args_t).
type FastPrefillMetadataArgs struct {
	// Metadata is read: QueryStartLoc, LogitsIndicesPadded, NumLogitsIndices, NumReqs,
	// MaxQueryLen and (since 1.1) MaxLogitsPerReq; the rest is copied, except the newer fields
	// that vLLM's new metadata resets (see MakeKVSharingFastPrefillCommonAttnMetadata).
	Metadata *CommonAttnMetadata
	// Out: the caller sets QueryStartLoc ([NumReqs + 1], the input's device) and may set
	// QueryStartLocCPU (host path only). The call writes them, every scalar and the other
	// tensor fields, the 1.1 ones included (whatever the caller set there is replaced). On the
	// CUDA path NumActualTokens is set to -1, and MaxQueryLen too unless Metadata gives
	// MaxLogitsPerReq: their values are in DecodeMaxAndTotal.
	Out *CommonAttnMetadata
	// DecodeMaxAndTotal: out, [2] int32/int64 on the input's device: {max_query_len,
	// num_actual_tokens} of the decode batch. Required for CUDA tensors, optional on the host.
	DecodeMaxAndTotal *Tensor
	Stream            Stream
}

// MakeKVSharingFastPrefillCommonAttnMetadata builds the decode-only metadata of KV-sharing
// fast prefill, in which each request keeps only the tokens whose logits are needed, as vLLM's
// make_kv_sharing_fast_prefill_common_attn_metadata
// (cattn_make_kv_sharing_fast_prefill_common_attn_metadata). It reports passthrough: when
// Metadata.MaxQueryLen == 1 nothing is read or written but Out, which becomes a copy of
// Metadata (vLLM returns the metadata unchanged). Errors: StatusInvalidArgument (no logits
// indices when MaxQueryLen != 1, NumReqs < 1, an index at or past the last query_start_loc,
// overlapping outputs, ...), StatusInsufficientSize, StatusNotSupported, StatusCUDAError.
//
// Since 1.1, the v2 fields of CommonAttnMetadata: a given Metadata.MaxLogitsPerReq (> 0; 0 =
// not given) becomes Out.MaxQueryLen on both paths, trusted as vLLM trusts it (not compared
// with the counts; DecodeMaxAndTotal still receives the computed largest count); not given,
// the largest count is computed as in 1.0 (vLLM asserts it is given). Out keeps
// Metadata.SeqLensCPUUpperBound (the same *Tensor), as vLLM does; Out.Positions,
// IsPrefilling, CausalPerReq, DCPLocalSeqLens(CPU) and EncoderSeqLens(CPU) become nil and
// Out.MaxLogitsPerReq 0 (vLLM's defaults). The passthrough copies every field.
func MakeKVSharingFastPrefillCommonAttnMetadata(args FastPrefillMetadataArgs) (passthrough bool, err error) {
	f := newFrame("cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
		"MakeKVSharingFastPrefillCommonAttnMetadata")
	defer f.free()
	in, err := f.metadata("args->metadata", args.Metadata)
	if err != nil {
		return false, err
	}
	out, err := f.metadata("args->out", args.Out)
	if err != nil {
		return false, err
	}
	mt, err := f.tensor("args->decode_max_and_total", args.DecodeMaxAndTotal)
	if err != nil {
		return false, err
	}
	passthrough, err = f.makeKVSharingFastPrefill(in, out, mt, args.Stream)
	if err != nil {
		return false, err
	}
	return passthrough, f.readMetadata(out, args.Out)
}
