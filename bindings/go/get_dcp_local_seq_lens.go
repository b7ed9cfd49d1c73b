package cattn

// DCPAllRanks as DCPLocalSeqLensArgs.DCPRank asks for the lengths of every rank, vLLM's
// dcp_rank=None (CATTN_DCP_ALL_RANKS).
const DCPAllRanks = -1

// DCPLocalSeqLensArgs are the arguments of GetDCPLocalSeqLens
// (cattn_dcp_local_seq_lens_args_t). Unlike CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT the zero value
// is not usable: set DCPSize, DCPRank and InterleaveSize.
type DCPLocalSeqLensArgs struct {
	SeqLens        *Tensor // in: [B] int32/int64, values in [0, INT32_MAX]
	DCPSize        int64   // in: >= 1
	DCPRank        int64   // in: [0, DCPSize) or DCPAllRanks
	InterleaveSize int64   // in: >= 1, DCPSize * InterleaveSize <= INT32_MAX
	// Out: [B] for one rank, [B, DCPSize] for all ranks (or [B] when DCPSize is 1);
	// int32/int64, on SeqLens' device. It may be the very SeqLens view (in place).
	Out    *Tensor
	Stream Stream // CUDA tensors only
	// PreserveShape (since 1.1, CATTN_DCP_SHAPE_PRESERVE) takes SeqLens of any shape S (0 to 7
	// dimensions, vLLM's newest semantics): Out is S for one rank and S + [DCPSize] for all
	// ranks, the rank axis kept even when DCPSize is 1. False keeps the 1.0 contract above.
	PreserveShape bool
}

// GetDCPLocalSeqLens computes how many KV tokens of each request each decode-context-parallel
// rank stores, the cache being dealt out round-robin in runs of InterleaveSize tokens
// (get_dcp_local_seq_lens, cattn_get_dcp_local_seq_lens). Host tensors run synchronously;
// CUDA tensors are enqueued on args.Stream.
func GetDCPLocalSeqLens(args DCPLocalSeqLensArgs) error {
	f := newFrame("cattn_get_dcp_local_seq_lens")
	defer f.free()
	seq, err := f.tensor("args->seq_lens", args.SeqLens)
	if err != nil {
		return err
	}
	out, err := f.tensor("args->out", args.Out)
	if err != nil {
		return err
	}
	return f.getDCPLocalSeqLens(seq, args.DCPSize, args.DCPRank, args.InterleaveSize, out,
		args.PreserveShape, args.Stream)
}
