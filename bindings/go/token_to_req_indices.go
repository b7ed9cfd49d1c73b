package cattn

// TokenToReqIndices writes the request of every token into buffer ([>= max(M, T)],
// int32/int64), vLLM's CommonAttentionMetadata.token_to_req_indices
// (cattn_token_to_req_indices): buffer[0:M] repeats request r q[r] times and buffer[M:T] is 0,
// so padding tokens map to request 0; M is the mapped tokens (from md.QueryStartLocCPU when
// set) and T is md.NumActualTokens. Nothing is cached between calls. CUDA tensors are
// enqueued on stream (one kernel, capturable, correct on replay).
func TokenToReqIndices(md *CommonAttnMetadata, buffer *Tensor, stream Stream) error {
	f := newFrame("cattn_token_to_req_indices", "TokenToReqIndices", "args->metadata", "md",
		"args->buffer", "buffer")
	defer f.free()
	c, err := f.metadata("args->metadata", md)
	if err != nil {
		return err
	}
	b, err := f.tensor("args->buffer", buffer)
	if err != nil {
		return err
	}
	return f.tokenToReqIndices(c, b, stream)
}

// TokenToReqIndicesInt32 is the one-call host form: the request of each of numTokens tokens
// (padding included) of the batch queryStartLoc describes.
func TokenToReqIndicesInt32(queryStartLoc []int32, numTokens int) ([]int32, error) {
	mapped := 0
	if n := len(queryStartLoc); n > 0 && queryStartLoc[n-1] > queryStartLoc[0] {
		mapped = int(queryStartLoc[n-1] - queryStartLoc[0])
	}
	out := make([]int32, max(mapped, numTokens))
	md := &CommonAttnMetadata{QueryStartLoc: Int32Tensor(queryStartLoc),
		NumActualTokens: int64(numTokens)}
	if err := TokenToReqIndices(md, Int32Tensor(out), 0); err != nil {
		return nil, err
	}
	return out[:numTokens], nil
}
