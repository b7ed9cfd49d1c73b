package cattn

// FusedPCPQKVSelectArgs are the arguments of FusedPCPQKVSelect
// (cattn_fused_pcp_qkv_select_args_t). Elements are moved as opaque bytes of 1, 2, 4 or 8;
// host data of any element type can be given with BytesTensor.
type FusedPCPQKVSelectArgs struct {
	Q *Tensor // in: [Nq, H, Dq], this rank's queries; last dim stride 1
	K *Tensor // in: [>= W * QueryStartLoc[B], H, Dk], keys of all ranks
	V *Tensor // in: [>= W * QueryStartLoc[B], H, Dv], values of all ranks
	// QueryStartLoc: [B + 1] int32/int64, even, non-decreasing, QueryStartLoc[B] <= Nq.
	QueryStartLoc *Tensor
	PCPWorldSize  int64   // W >= 1; 0 means 1
	PCPRank       int64   // r in [0, W)
	QHead         *Tensor // out: [Nq / 2, H, Dq], compact
	KHead         *Tensor // out: [Nq / 2 * (r + 1), H, Dk], compact
	VHead         *Tensor // out: [Nq / 2 * (r + 1), H, Dv], compact
	QTail         *Tensor // out: [Nq / 2, H, Dq], compact
	KTail         *Tensor // out: [Nq / 2 * (2W - r), H, Dk], compact
	VTail         *Tensor // out: [Nq / 2 * (2W - r), H, Dv], compact
	Stream        Stream  // CUDA tensors only
}

// FusedPCPQKVSelect selects, for every request, the head and tail halves of this rank's
// queries and the K/V rows each half attends to, in one pass, as vLLM's Triton kernel in
// fused_pcp_qkv_select (cattn_fused_pcp_qkv_select). Output rows past QueryStartLoc[B] / 2
// are not written. On the host an odd request length, or an input shorter than the batch
// needs, is StatusInvalidArgument (vLLM drops a token or reads out of bounds); see cattn.h
// for the full list of checks.
func FusedPCPQKVSelect(args FusedPCPQKVSelectArgs) error {
	f := newFrame("cattn_fused_pcp_qkv_select", "FusedPCPQKVSelect")
	defer f.free()
	names := [10]string{"args->q", "args->k", "args->v", "args->query_start_loc",
		"args->q_head", "args->k_head", "args->v_head", "args->q_tail", "args->k_tail",
		"args->v_tail"}
	ts := [10]*Tensor{args.Q, args.K, args.V, args.QueryStartLoc, args.QHead, args.KHead,
		args.VHead, args.QTail, args.KTail, args.VTail}
	var cs [10]cTensor
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return err
	}
	return f.fusedPCPQKVSelect(cs, nonZero(args.PCPWorldSize, 1), args.PCPRank, args.Stream)
}
