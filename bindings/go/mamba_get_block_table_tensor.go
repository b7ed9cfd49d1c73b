package cattn

// MambaCacheMode is vLLM's mamba_cache_mode (cattn_mamba_cache_mode_t).
type MambaCacheMode int32

// The modes.
const (
	MambaCacheModeNone  MambaCacheMode = 0
	MambaCacheModeAll   MambaCacheMode = 1
	MambaCacheModeAlign MambaCacheMode = 2
)

// MambaBlockTableArgs are the arguments of MambaGetBlockTableTensor
// (cattn_mamba_block_table_args_t).
type MambaBlockTableArgs struct {
	BlockTable *Tensor // in: [B, M] int32/int64
	// SeqLens: in, [B] int32/int64 (Align only; may be nil otherwise).
	SeqLens              *Tensor
	BlockSize            int64 // Align: >= 1
	NumSpeculativeBlocks int64 // Align: >= 0
	Mode                 MambaCacheMode
	// Out: All/None - [B, M], a copy (nothing is written when Out is the very BlockTable
	// view); Align - [B, 1 + NumSpeculativeBlocks]. int32/int64.
	Out    *Tensor
	Stream Stream
}

// MambaGetBlockTableTensor selects the block-table columns Mamba kernels use, as vLLM's
// mamba_get_block_table_tensor (cattn_mamba_get_block_table_tensor). Align: Out[b, j] =
// BlockTable[b, max((SeqLens[b] - 1) // BlockSize, 0) + j]. Unlike vLLM it never reads past a
// row: on the host a column >= M is StatusInvalidArgument; on the device it is written as
// PadSlotID.
func MambaGetBlockTableTensor(args MambaBlockTableArgs) error {
	f := newFrame("cattn_mamba_get_block_table_tensor", "MambaGetBlockTableTensor",
		"args->mamba_cache_mode", "args.Mode")
	defer f.free()
	var cs [3]cTensor
	names := [3]string{"args->block_table", "args->seq_lens", "args->out"}
	if err := f.tensorsInto(cs[:], names[:], []*Tensor{args.BlockTable, args.SeqLens, args.Out}); err != nil {
		return err
	}
	return f.mambaGetBlockTableTensor(cs[0], cs[1], args.BlockSize, args.NumSpeculativeBlocks,
		args.Mode, cs[2], args.Stream)
}
