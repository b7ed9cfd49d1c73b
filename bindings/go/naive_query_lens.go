package cattn

// NaiveQueryLens writes the query lengths QueryStartLoc[i+1] - QueryStartLoc[i] into out ([B],
// int32/int64), vLLM's CommonAttentionMetadata.naive_query_lens (cattn_naive_query_lens).
// Only md.QueryStartLoc is read. Host tensors run synchronously; CUDA tensors are enqueued on
// stream (one kernel, capturable).
func NaiveQueryLens(md *CommonAttnMetadata, out *Tensor, stream Stream) error {
	return queryLens("cattn_naive_query_lens", "NaiveQueryLens", md, out, false, stream)
}

// ComputeNumComputedTokens writes SeqLens[i] minus the query length of request i into out
// ([B]), vLLM's CommonAttentionMetadata.compute_num_computed_tokens
// (cattn_compute_num_computed_tokens). No cache is kept; out may be the very SeqLens view.
func ComputeNumComputedTokens(md *CommonAttnMetadata, out *Tensor, stream Stream) error {
	return queryLens("cattn_compute_num_computed_tokens", "ComputeNumComputedTokens", md, out,
		true, stream)
}

// NumComputedTokens is the one-call host form of ComputeNumComputedTokens.
func NumComputedTokens(queryStartLoc, seqLens []int64) ([]int64, error) {
	out := make([]int64, len(seqLens))
	md := &CommonAttnMetadata{QueryStartLoc: Int64Tensor(queryStartLoc),
		SeqLens: Int64Tensor(seqLens)}
	if err := ComputeNumComputedTokens(md, Int64Tensor(out), 0); err != nil {
		return nil, err
	}
	return out, nil
}

func queryLens(fn, goName string, md *CommonAttnMetadata, out *Tensor, computed bool,
	stream Stream) error {
	f := newFrame(fn, goName, "args->metadata", "md", "args->out", "out")
	defer f.free()
	c, err := f.metadata("args->metadata", md)
	if err != nil {
		return err
	}
	o, err := f.tensor("args->out", out)
	if err != nil {
		return err
	}
	return f.naiveQueryLens(c, o, computed, stream)
}
