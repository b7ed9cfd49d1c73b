// SPDX-License-Identifier: Apache-2.0
//! The Rust names of the arguments libcattn names in its messages.
//!
//! The library's message has one shape, `"<C function>: <C argument> <problem> (got X,
//! expected Y)"`, the argument a C path (`args->pcp_rank`, `num_q_rows`, `args->metadata->seq_lens`)
//! running to the first space. A call of this crate turns it into `"cattn::<Rust function>:
//! <Rust argument> <problem> (got X, expected Y)"` with [`NAMES`]: for each Rust function and
//! each C function it calls, the C paths and the Rust names of the parameters or fields that
//! carry them. A path that continues past a listed one keeps the rest, `->` written `.`. A
//! message whose argument the table does not name keeps the library's wording; the original
//! is always [`crate::Error::c_message`].

/// The argument names of one C function's messages when a Rust function calls it.
pub(crate) struct CallNames {
    /// The Rust function, as the message names it after `cattn::` (`"pcp_qkv_halves"`).
    pub(crate) rust: &'static str,
    /// The C function the library names (`"cattn_fused_pcp_qkv_select"`).
    pub(crate) c: &'static str,
    /// C path -> Rust name.
    pub(crate) args: &'static [(&'static str, &'static str)],
}

/// The fields of the split's `SplitBatch` argument.
const SPLIT_BATCH: [(&str, &str); 4] = [
    ("args->query_start_loc_cpu", "batch.query_start_loc_cpu"),
    ("args->num_reqs", "batch.num_reqs"),
    ("args->num_actual_tokens", "batch.num_actual_tokens"),
    ("args->max_query_len", "batch.max_query_len"),
];

/// The one table of the crate's argument names.
pub(crate) const NAMES: &[CallNames] = &[
    // fused_pcp_qkv_select_size(num_q_rows, pcp_world_size, pcp_rank): the C names.
    CallNames {
        rust: "fused_pcp_qkv_select_size",
        c: "cattn_fused_pcp_qkv_select_size",
        args: &[
            ("num_q_rows", "num_q_rows"),
            ("pcp_world_size", "pcp_world_size"),
            ("pcp_rank", "pcp_rank"),
        ],
    },
    // fused_pcp_qkv_select(args: &FusedPcpQkvSelectArgs, out: &mut FusedPcpQkvSelectOutputs)
    CallNames {
        rust: "fused_pcp_qkv_select",
        c: "cattn_fused_pcp_qkv_select",
        args: &[
            ("args->q", "args.q"),
            ("args->k", "args.k"),
            ("args->v", "args.v"),
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->pcp_world_size", "args.pcp_world_size"),
            ("args->pcp_rank", "args.pcp_rank"),
            ("args->q_head", "out.q_head"),
            ("args->k_head", "out.k_head"),
            ("args->v_head", "out.v_head"),
            ("args->q_tail", "out.q_tail"),
            ("args->k_tail", "out.k_tail"),
            ("args->v_tail", "out.v_tail"),
        ],
    },
    // pcp_qkv_halves(q, k, v, query_start_loc, pcp_world_size, pcp_rank): the size query with
    // q's rows, then the select into outputs of its own.
    CallNames {
        rust: "pcp_qkv_halves",
        c: "cattn_fused_pcp_qkv_select_size",
        args: &[
            ("pcp_world_size", "pcp_world_size"),
            ("pcp_rank", "pcp_rank"),
        ],
    },
    CallNames {
        rust: "pcp_qkv_halves",
        c: "cattn_fused_pcp_qkv_select",
        args: &[
            ("args->q", "q"),
            ("args->k", "k"),
            ("args->v", "v"),
            ("args->query_start_loc", "query_start_loc"),
            ("args->pcp_world_size", "pcp_world_size"),
            ("args->pcp_rank", "pcp_rank"),
        ],
    },
    // get_pcp_query_restore_idx_size(cu_num_tokens),
    // get_pcp_query_restore_idx(cu_num_tokens, restore_idx, stream),
    // pcp_query_restore_idx(cu_num_tokens)
    CallNames {
        rust: "get_pcp_query_restore_idx_size",
        c: "cattn_get_pcp_query_restore_idx_size",
        args: &[("cu_num_tokens", "cu_num_tokens")],
    },
    CallNames {
        rust: "get_pcp_query_restore_idx",
        c: "cattn_get_pcp_query_restore_idx",
        args: &[
            ("args->cu_num_tokens", "cu_num_tokens"),
            ("args->restore_idx", "restore_idx"),
        ],
    },
    CallNames {
        rust: "pcp_query_restore_idx",
        c: "cattn_get_pcp_query_restore_idx_size",
        args: &[("cu_num_tokens", "cu_num_tokens")],
    },
    CallNames {
        rust: "pcp_query_restore_idx",
        c: "cattn_get_pcp_query_restore_idx",
        args: &[("args->cu_num_tokens", "cu_num_tokens")],
    },
    // get_dcp_local_seq_lens(_nd)(args: &DcpLocalSeqLensArgs, out),
    // dcp_local_seq_lens(seq_lens, dcp_size, dcp_rank, dcp_kv_cache_interleave_size),
    // dcp_local_seq_lens_all_ranks(seq_lens, dcp_size, dcp_kv_cache_interleave_size)
    CallNames {
        rust: "get_dcp_local_seq_lens",
        c: "cattn_get_dcp_local_seq_lens",
        args: &DCP_ARGS,
    },
    CallNames {
        rust: "get_dcp_local_seq_lens_nd",
        c: "cattn_get_dcp_local_seq_lens",
        args: &DCP_ARGS,
    },
    CallNames {
        rust: "dcp_local_seq_lens",
        c: "cattn_get_dcp_local_seq_lens",
        args: &DCP_PARAMETERS,
    },
    CallNames {
        rust: "dcp_local_seq_lens_all_ranks",
        c: "cattn_get_dcp_local_seq_lens",
        args: &DCP_PARAMETERS,
    },
    // split_decodes_and_prefills(batch: &SplitBatch, opts: &SplitOptions)
    CallNames {
        rust: "split_decodes_and_prefills",
        c: "cattn_split_decodes_and_prefills",
        args: &[
            SPLIT_BATCH[0],
            SPLIT_BATCH[1],
            SPLIT_BATCH[2],
            SPLIT_BATCH[3],
            ("args->is_prefilling_cpu", "opts.is_prefilling"),
            ("args->decode_threshold", "opts.decode_threshold"),
        ],
    },
    // split_decodes_prefills_and_extends(batch, seq_lens_cpu_upper_bound, decode_threshold)
    CallNames {
        rust: "split_decodes_prefills_and_extends",
        c: "cattn_split_decodes_prefills_and_extends",
        args: &[
            SPLIT_BATCH[0],
            SPLIT_BATCH[1],
            SPLIT_BATCH[2],
            SPLIT_BATCH[3],
            ("args->seq_lens_cpu_upper_bound", "seq_lens_cpu_upper_bound"),
            ("args->decode_threshold", "decode_threshold"),
        ],
    },
    // split_query_start_loc(query_start_loc, decode_threshold),
    // split_query_start_loc_with_extends(query_start_loc, seq_lens_upper_bound,
    // decode_threshold): num_reqs is the slice's length less one, T and max_query_len are
    // the library's.
    CallNames {
        rust: "split_query_start_loc",
        c: "cattn_split_decodes_and_prefills",
        args: &[
            ("args->query_start_loc_cpu", "query_start_loc"),
            ("args->decode_threshold", "decode_threshold"),
        ],
    },
    CallNames {
        rust: "split_query_start_loc_with_extends",
        c: "cattn_split_decodes_prefills_and_extends",
        args: &[
            ("args->query_start_loc_cpu", "query_start_loc"),
            ("args->seq_lens_cpu_upper_bound", "seq_lens_upper_bound"),
            ("args->decode_threshold", "decode_threshold"),
        ],
    },
    // split_prefill_chunks(seq_lens, workspace_size, request_offset)
    CallNames {
        rust: "split_prefill_chunks",
        c: "cattn_split_prefill_chunks",
        args: &[
            ("args->seq_lens_cpu", "seq_lens"),
            ("args->workspace_size", "workspace_size"),
            ("args->request_offset", "request_offset"),
        ],
    },
    // reorder_batch_to_split_decodes_and_prefills(num_scheduled_tokens, num_computed_tokens,
    // num_prompt_tokens, decode_threshold)
    CallNames {
        rust: "reorder_batch_to_split_decodes_and_prefills",
        c: "cattn_reorder_batch_to_split_decodes_and_prefills",
        args: &[
            ("args->num_scheduled_tokens", "num_scheduled_tokens"),
            ("args->num_computed_tokens", "num_computed_tokens"),
            ("args->num_prompt_tokens", "num_prompt_tokens"),
            ("args->decode_threshold", "decode_threshold"),
        ],
    },
    // split_decodes_and_prefills_capturable(args: &SplitCapturableArgs, opts, result)
    CallNames {
        rust: "split_decodes_and_prefills_capturable",
        c: "cattn_split_decodes_and_prefills_capturable",
        args: &[
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->num_actual_tokens", "args.num_actual_tokens"),
            ("args->max_query_len", "args.max_query_len"),
            ("args->is_prefilling", "opts.is_prefilling"),
            ("args->decode_threshold", "opts.decode_threshold"),
            ("args->result", "result"),
        ],
    },
    // split_decodes_prefills_and_extends_capturable(args, seq_lens_upper_bound,
    // decode_threshold, result)
    CallNames {
        rust: "split_decodes_prefills_and_extends_capturable",
        c: "cattn_split_decodes_prefills_and_extends_capturable",
        args: &[
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->num_actual_tokens", "args.num_actual_tokens"),
            ("args->max_query_len", "args.max_query_len"),
            ("args->seq_lens_upper_bound", "seq_lens_upper_bound"),
            ("args->decode_threshold", "decode_threshold"),
            ("args->result", "result"),
        ],
    },
    // compute_causal_conv1d_metadata_size(query_start_loc_cpu, block_m),
    // compute_causal_conv1d_metadata(query_start_loc_cpu, block_m, out, stream),
    // compute_causal_conv1d_metadata_capturable(query_start_loc, block_m, out, stream),
    // causal_conv1d_metadata(query_start_loc, block_m)
    CallNames {
        rust: "compute_causal_conv1d_metadata_size",
        c: "cattn_compute_causal_conv1d_metadata_size",
        args: &[
            ("query_start_loc_cpu", "query_start_loc_cpu"),
            ("block_m", "block_m"),
        ],
    },
    CallNames {
        rust: "compute_causal_conv1d_metadata",
        c: "cattn_compute_causal_conv1d_metadata",
        args: &[
            ("args->query_start_loc_cpu", "query_start_loc_cpu"),
            ("args->block_m", "block_m"),
            ("args->nums", "out.nums"),
            ("args->mlist", "out.mlist"),
            ("args->offsetlist", "out.offsetlist"),
            ("args->batch_ptr", "out.batch_ptr"),
            ("args->token_chunk_offset_ptr", "out.token_chunk_offset_ptr"),
        ],
    },
    CallNames {
        rust: "compute_causal_conv1d_metadata_capturable",
        c: "cattn_compute_causal_conv1d_metadata_capturable",
        args: &[
            ("args->query_start_loc", "query_start_loc"),
            ("args->block_m", "block_m"),
            ("args->nums", "out.nums"),
            ("args->mlist", "out.mlist"),
            ("args->offsetlist", "out.offsetlist"),
            ("args->batch_ptr", "out.batch_ptr"),
            ("args->token_chunk_offset_ptr", "out.token_chunk_offset_ptr"),
            ("args->tot", "out.tot"),
        ],
    },
    CallNames {
        rust: "causal_conv1d_metadata",
        c: "cattn_compute_causal_conv1d_metadata_size",
        args: &[
            ("query_start_loc_cpu", "query_start_loc"),
            ("block_m", "block_m"),
        ],
    },
    CallNames {
        rust: "causal_conv1d_metadata",
        c: "cattn_compute_causal_conv1d_metadata",
        args: &[
            ("args->query_start_loc_cpu", "query_start_loc"),
            ("args->block_m", "block_m"),
        ],
    },
    // max_local_attention_virtual_batches(attn_chunk_size, max_num_seqs,
    // max_num_batched_tokens)
    CallNames {
        rust: "max_local_attention_virtual_batches",
        c: "cattn_max_local_attention_virtual_batches",
        args: &[
            ("args->attn_chunk_size", "attn_chunk_size"),
            ("args->max_num_seqs", "max_num_seqs"),
            ("args->max_num_batched_tokens", "max_num_batched_tokens"),
        ],
    },
    // mamba_get_block_table_tensor(args: &MambaBlockTableArgs, out),
    // mamba_block_table(block_table, seq_lens, block_size, num_speculative_blocks, mode)
    CallNames {
        rust: "mamba_get_block_table_tensor",
        c: "cattn_mamba_get_block_table_tensor",
        args: &[
            ("args->block_table", "args.block_table"),
            ("args->seq_lens", "args.seq_lens"),
            ("args->block_size", "args.block_size"),
            (
                "args->num_speculative_blocks",
                "args.num_speculative_blocks",
            ),
            ("args->mamba_cache_mode", "args.mode"),
            ("args->out", "out"),
        ],
    },
    CallNames {
        rust: "mamba_block_table",
        c: "cattn_mamba_get_block_table_tensor",
        args: &[
            ("args->block_table", "block_table"),
            ("args->seq_lens", "seq_lens"),
            ("args->block_size", "block_size"),
            ("args->num_speculative_blocks", "num_speculative_blocks"),
            ("args->mamba_cache_mode", "mode"),
        ],
    },
    // naive_query_lens / compute_num_computed_tokens(metadata: &CommonAttnMetadata, out,
    // stream): the metadata's fields keep their names. query_lens(query_start_loc),
    // num_computed_tokens(query_start_loc, seq_lens).
    CallNames {
        rust: "naive_query_lens",
        c: "cattn_naive_query_lens",
        args: &[("args->metadata", "metadata"), ("args->out", "out")],
    },
    CallNames {
        rust: "compute_num_computed_tokens",
        c: "cattn_compute_num_computed_tokens",
        args: &[("args->metadata", "metadata"), ("args->out", "out")],
    },
    CallNames {
        rust: "query_lens",
        c: "cattn_naive_query_lens",
        args: &[("args->metadata->query_start_loc", "query_start_loc")],
    },
    CallNames {
        rust: "num_computed_tokens",
        c: "cattn_compute_num_computed_tokens",
        args: &[
            ("args->metadata->query_start_loc", "query_start_loc"),
            ("args->metadata->seq_lens", "seq_lens"),
        ],
    },
    // token_to_req_indices(metadata, buffer, stream), token_to_req_indices_vec(query_start_loc,
    // num_tokens)
    CallNames {
        rust: "token_to_req_indices",
        c: "cattn_token_to_req_indices",
        args: &[("args->metadata", "metadata"), ("args->buffer", "buffer")],
    },
    CallNames {
        rust: "token_to_req_indices_vec",
        c: "cattn_token_to_req_indices",
        args: &[
            ("args->metadata->query_start_loc", "query_start_loc"),
            ("args->metadata->num_actual_tokens", "num_tokens"),
        ],
    },
    // log2_lse_to_ln(lse, out, rounding, stream), log2_lse_to_ln_in_place(t, rounding,
    // stream), log2_lse_to_ln_vec(lse), log2_lse_to_ln_f32 / _f64(values),
    // log2_lse_to_ln_half(bits, dtype, rounding)
    CallNames {
        rust: "log2_lse_to_ln",
        c: "cattn_log2_lse_to_ln",
        args: &[
            ("args->lse", "lse"),
            ("args->out", "out"),
            ("args->half_rounding", "rounding"),
        ],
    },
    CallNames {
        rust: "log2_lse_to_ln_in_place",
        c: "cattn_log2_lse_to_ln",
        args: &[
            ("args->lse", "t"),
            ("args->out", "t"),
            ("args->half_rounding", "rounding"),
        ],
    },
    CallNames {
        rust: "log2_lse_to_ln_vec",
        c: "cattn_log2_lse_to_ln",
        args: &[("args->lse", "lse")],
    },
    CallNames {
        rust: "log2_lse_to_ln_f32",
        c: "cattn_log2_lse_to_ln",
        args: &[("args->lse", "values"), ("args->out", "values")],
    },
    CallNames {
        rust: "log2_lse_to_ln_f64",
        c: "cattn_log2_lse_to_ln",
        args: &[("args->lse", "values"), ("args->out", "values")],
    },
    CallNames {
        rust: "log2_lse_to_ln_half",
        c: "cattn_log2_lse_to_ln",
        args: &[
            ("args->lse", "bits"),
            ("args->out", "bits"),
            ("args->half_rounding", "rounding"),
        ],
    },
    // unpadded(metadata, num_actual_tokens, num_actual_reqs)
    CallNames {
        rust: "unpadded",
        c: "cattn_unpadded",
        args: &[
            ("args->metadata", "metadata"),
            ("args->num_actual_tokens", "num_actual_tokens"),
            ("args->num_actual_reqs", "num_actual_reqs"),
        ],
    },
    // compute_mm_prefix_range_tensor(_size)(ranges: Option<&MmPrefixRanges>[, out]),
    // fill_mm_prefix_query_ranges(ranges, query_start_loc_cpu, seq_lens_cpu, out),
    // mm_prefix_range_tensor(per_request), mm_prefix_query_ranges(per_request,
    // query_start_loc, seq_lens): the helpers' per-request lists are the offsets of the CSR
    // they build (its flat ranges keep the C name).
    CallNames {
        rust: "compute_mm_prefix_range_tensor",
        c: "cattn_compute_mm_prefix_range_tensor",
        args: &[
            ("args->range_offsets", "ranges.offsets"),
            ("args->ranges", "ranges.ranges"),
            ("args->out", "out"),
        ],
    },
    CallNames {
        rust: "compute_mm_prefix_range_tensor_size",
        c: "cattn_compute_mm_prefix_range_tensor",
        args: &[
            ("args->range_offsets", "ranges.offsets"),
            ("args->ranges", "ranges.ranges"),
        ],
    },
    CallNames {
        rust: "fill_mm_prefix_query_ranges",
        c: "cattn_fill_mm_prefix_query_ranges",
        args: &[
            ("args->range_offsets", "ranges.offsets"),
            ("args->ranges", "ranges.ranges"),
            ("args->query_start_loc_cpu", "query_start_loc_cpu"),
            ("args->seq_lens_cpu", "seq_lens_cpu"),
            ("args->out", "out"),
        ],
    },
    CallNames {
        rust: "mm_prefix_range_tensor",
        c: "cattn_compute_mm_prefix_range_tensor",
        args: &[("args->range_offsets", "per_request")],
    },
    CallNames {
        rust: "mm_prefix_query_ranges",
        c: "cattn_fill_mm_prefix_query_ranges",
        args: &[
            ("args->range_offsets", "per_request"),
            ("args->query_start_loc_cpu", "query_start_loc"),
            ("args->seq_lens_cpu", "seq_lens"),
        ],
    },
    // extend_all_queries_by_n(_with)(metadata, n, new_slot_mapping, out[, newer, dcp],
    // stream): out holds the four 1.0 outputs, newer the 1.1 ones.
    CallNames {
        rust: "extend_all_queries_by_n",
        c: "cattn_extend_all_queries_by_n",
        args: &EXTEND_ARGS,
    },
    CallNames {
        rust: "extend_all_queries_by_n_with",
        c: "cattn_extend_all_queries_by_n",
        args: &[
            EXTEND_ARGS[0],
            EXTEND_ARGS[1],
            EXTEND_ARGS[2],
            EXTEND_ARGS[3],
            EXTEND_ARGS[4],
            EXTEND_ARGS[5],
            EXTEND_ARGS[6],
            (
                "args->out->seq_lens_cpu_upper_bound",
                "newer.seq_lens_cpu_upper_bound",
            ),
            ("args->out->dcp_local_seq_lens", "newer.dcp_local_seq_lens"),
            (
                "args->out->dcp_local_seq_lens_cpu",
                "newer.dcp_local_seq_lens_cpu",
            ),
            ("args->out->positions", "newer.positions"),
            ("args->dcp_size", "dcp.size"),
            ("args->dcp_rank", "dcp.rank"),
            (
                "args->dcp_kv_cache_interleave_size",
                "dcp.kv_cache_interleave_size",
            ),
        ],
    },
    // extend_all_queries_by_n_in_place(_with)(tensors, [newer,] scalars, n, new_slot_mapping,
    // [dcp,] stream): the batch is `tensors` and `scalars`, and `tensors` the outputs too.
    CallNames {
        rust: "extend_all_queries_by_n_in_place",
        c: "cattn_extend_all_queries_by_n",
        args: &EXTEND_IN_PLACE_ARGS,
    },
    CallNames {
        rust: "extend_all_queries_by_n_in_place_with",
        c: "cattn_extend_all_queries_by_n",
        args: &EXTEND_IN_PLACE_ARGS,
    },
    // queries_extended_by_n(query_start_loc, seq_lens, n)
    CallNames {
        rust: "queries_extended_by_n",
        c: "cattn_extend_all_queries_by_n",
        args: &[
            ("args->metadata->query_start_loc", "query_start_loc"),
            ("args->metadata->seq_lens", "seq_lens"),
            ("args->n", "n"),
        ],
    },
    // make_kv_sharing_fast_prefill_common_attn_metadata(metadata, out: &mut
    // FastPrefillOutputs, stream), kv_sharing_fast_prefill_metadata(query_start_loc,
    // logits_indices)
    CallNames {
        rust: "make_kv_sharing_fast_prefill_common_attn_metadata",
        c: "cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
        args: &[
            ("args->metadata", "metadata"),
            ("args->out->query_start_loc", "out.query_start_loc"),
            ("args->out->query_start_loc_cpu", "out.query_start_loc_cpu"),
            ("args->decode_max_and_total", "out.decode_max_and_total"),
        ],
    },
    CallNames {
        rust: "kv_sharing_fast_prefill_metadata",
        c: "cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
        args: &[
            ("args->metadata->query_start_loc", "query_start_loc"),
            ("args->metadata->logits_indices_padded", "logits_indices"),
            ("args->metadata->num_logits_indices", "logits_indices"),
        ],
    },
    // make_local_attention_virtual_batches(_size, _with_args)(args: &LocalAttentionArgs),
    // make_local_attention_virtual_batches(metadata, attn_chunk_size, block_size) and
    // LocalAttentionPlan::new / ::with_args the same, the plan's fill(_with_upper_bound)
    // (metadata, out, [seq_lens_cpu_upper_bound,] stream) and make_block_table(block_table,
    // out, stream), the one-call local_attention_virtual_batches(attn_chunk_size, block_size,
    // query_start_loc, seq_lens, block_table) and the capturable call.
    CallNames {
        rust: "make_local_attention_virtual_batches_size",
        c: "cattn_make_local_attention_virtual_batches_size",
        args: &LOCAL_ARGS,
    },
    CallNames {
        rust: "make_local_attention_virtual_batches_with_args",
        c: "cattn_make_local_attention_virtual_batches",
        args: &LOCAL_ARGS,
    },
    CallNames {
        rust: "LocalAttentionPlan::with_args",
        c: "cattn_make_local_attention_virtual_batches",
        args: &LOCAL_ARGS,
    },
    CallNames {
        rust: "make_local_attention_virtual_batches",
        c: "cattn_make_local_attention_virtual_batches",
        args: &LOCAL_PARAMETERS,
    },
    CallNames {
        rust: "LocalAttentionPlan::new",
        c: "cattn_make_local_attention_virtual_batches",
        args: &LOCAL_PARAMETERS,
    },
    CallNames {
        rust: "LocalAttentionPlan::fill",
        c: "cattn_local_attention_plan_fill",
        args: &LOCAL_FILL,
    },
    CallNames {
        rust: "LocalAttentionPlan::fill_with_upper_bound",
        c: "cattn_local_attention_plan_fill",
        args: &[
            LOCAL_FILL[0],
            LOCAL_FILL[1],
            LOCAL_FILL[2],
            LOCAL_FILL[3],
            LOCAL_FILL[4],
            LOCAL_FILL[5],
            LOCAL_FILL[6],
            (
                "args->out->seq_lens_cpu_upper_bound",
                "seq_lens_cpu_upper_bound",
            ),
        ],
    },
    CallNames {
        rust: "LocalAttentionPlan::make_block_table",
        c: "cattn_local_attention_plan_make_block_table",
        args: &[("block_table", "block_table"), ("out", "out")],
    },
    CallNames {
        rust: "local_attention_virtual_batches",
        c: "cattn_make_local_attention_virtual_batches",
        args: &LOCAL_ONE_CALL,
    },
    CallNames {
        rust: "local_attention_virtual_batches",
        c: "cattn_local_attention_plan_fill",
        args: &[LOCAL_ONE_CALL[0], LOCAL_ONE_CALL[1], LOCAL_ONE_CALL[2]],
    },
    CallNames {
        rust: "make_local_attention_virtual_batches_capturable",
        c: "cattn_make_local_attention_virtual_batches_capturable",
        args: &[
            ("args->attn_chunk_size", "args.attn_chunk_size"),
            ("args->block_size", "args.block_size"),
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->seq_lens", "args.seq_lens"),
            ("args->block_table", "args.block_table"),
            ("args->query_start_loc_out", "out.query_start_loc_out"),
            ("args->seq_lens_out", "out.seq_lens_out"),
            (
                "args->num_computed_tokens_out",
                "out.num_computed_tokens_out",
            ),
            ("args->block_table_out", "out.block_table_out"),
            ("args->counts", "out.counts"),
        ],
    },
    // pcp_kv_allgather_and_restore(_workspace_size)(comm, args: &PcpKvAllgatherArgs[, out:
    // &mut PcpKvAllgatherOutputs])
    CallNames {
        rust: "pcp_kv_allgather_and_restore_workspace_size",
        c: "cattn_pcp_kv_allgather_and_restore_workspace_size",
        args: &[
            ALLGATHER_ARGS[0],
            ALLGATHER_ARGS[1],
            ALLGATHER_ARGS[2],
            ALLGATHER_ARGS[3],
            ALLGATHER_ARGS[4],
        ],
    },
    CallNames {
        rust: "pcp_kv_allgather_and_restore",
        c: "cattn_pcp_kv_allgather_and_restore",
        args: &ALLGATHER_ARGS,
    },
    // Comm::new(id, nranks, rank, cuda_device), Comm::borrowed(nccl_comm): the C names.
    CallNames {
        rust: "Comm::new",
        c: "cattn_comm_create",
        args: &[
            ("id", "id"),
            ("nranks", "nranks"),
            ("rank", "rank"),
            ("cuda_device", "cuda_device"),
        ],
    },
    CallNames {
        rust: "Comm::borrowed",
        c: "cattn_comm_create_borrowed",
        args: &[("nccl_comm", "nccl_comm")],
    },
    // prepare_pos_seq_lens(args: &PreparePosSeqLensArgs, out: &mut PreparePosSeqLensOutputs),
    // prepare_pos_seq_lens_host(num_scheduled_tokens, idx_mapping, num_computed_tokens,
    // num_reqs)
    CallNames {
        rust: "prepare_pos_seq_lens",
        c: "cattn_prepare_pos_seq_lens",
        args: &[
            ("args->num_scheduled_tokens", "args.num_scheduled_tokens"),
            ("args->idx_mapping", "args.idx_mapping"),
            ("args->num_computed_tokens", "args.num_computed_tokens"),
            ("args->num_reqs", "args.num_reqs"),
            ("args->query_start_loc", "out.query_start_loc"),
            ("args->seq_lens", "out.seq_lens"),
            ("args->positions", "out.positions"),
            (
                "args->batch_num_computed_tokens",
                "out.batch_num_computed_tokens",
            ),
        ],
    },
    CallNames {
        rust: "prepare_pos_seq_lens_host",
        c: "cattn_prepare_pos_seq_lens",
        args: &[
            ("args->num_scheduled_tokens", "num_scheduled_tokens"),
            ("args->idx_mapping", "idx_mapping"),
            ("args->num_computed_tokens", "num_computed_tokens"),
            ("args->num_reqs", "num_reqs"),
        ],
    },
    // gather_block_tables(args: &GatherBlockTablesArgs, out),
    // gather_block_tables_host(idx_mapping, num_reqs, block_table, num_blocks)
    CallNames {
        rust: "gather_block_tables",
        c: "cattn_gather_block_tables",
        args: &[
            ("args->idx_mapping", "args.idx_mapping"),
            ("args->num_reqs", "args.num_reqs"),
            ("args->block_table", "args.block_table"),
            ("args->num_blocks", "args.num_blocks"),
            ("args->out", "out"),
        ],
    },
    CallNames {
        rust: "gather_block_tables_host",
        c: "cattn_gather_block_tables",
        args: &[
            ("args->idx_mapping", "idx_mapping"),
            ("args->num_reqs", "num_reqs"),
            ("args->block_table", "block_table"),
            ("args->num_blocks", "num_blocks"),
        ],
    },
    // compute_slot_mappings(args: &ComputeSlotMappingsArgs, slot_mapping),
    // compute_slot_mappings_host(params, query_start_loc, num_reqs, positions, idx_mapping,
    // block_table): the scalars are the params' fields.
    CallNames {
        rust: "compute_slot_mappings",
        c: "cattn_compute_slot_mappings",
        args: &[
            ("args->contract", "args.params.contract"),
            ("args->block_size", "args.params.block_size"),
            ("args->kernel_block_size", "args.params.kernel_block_size"),
            ("args->dcp_size", "args.params.dcp_size"),
            ("args->dcp_rank", "args.params.dcp_rank"),
            (
                "args->dcp_kv_cache_interleave_size",
                "args.params.dcp_kv_cache_interleave_size",
            ),
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->num_reqs", "args.num_reqs"),
            ("args->positions", "args.positions"),
            ("args->idx_mapping", "args.idx_mapping"),
            ("args->block_table", "args.block_table"),
            ("args->slot_mapping", "slot_mapping"),
        ],
    },
    CallNames {
        rust: "compute_slot_mappings_host",
        c: "cattn_compute_slot_mappings",
        args: &[
            ("args->contract", "params.contract"),
            ("args->block_size", "params.block_size"),
            ("args->kernel_block_size", "params.kernel_block_size"),
            ("args->dcp_size", "params.dcp_size"),
            ("args->dcp_rank", "params.dcp_rank"),
            (
                "args->dcp_kv_cache_interleave_size",
                "params.dcp_kv_cache_interleave_size",
            ),
            ("args->query_start_loc", "query_start_loc"),
            ("args->num_reqs", "num_reqs"),
            ("args->positions", "positions"),
            ("args->idx_mapping", "idx_mapping"),
            ("args->block_table", "block_table"),
        ],
    },
    // combine_sampled_and_draft_tokens(args: &CombineSampledAndDraftTokensArgs, out),
    // combine_sampled_and_draft_tokens_host(num_new_sampled_tokens, query_start_loc, num_reqs,
    // num_draft_tokens, idx_mapping)
    CallNames {
        rust: "combine_sampled_and_draft_tokens",
        c: "cattn_combine_sampled_and_draft_tokens",
        args: &[
            (
                "args->num_new_sampled_tokens",
                "args.num_new_sampled_tokens",
            ),
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->num_reqs", "args.num_reqs"),
            ("args->num_draft_tokens", "args.num_draft_tokens"),
            ("args->idx_mapping", "args.idx_mapping"),
            ("args->seq_lens", "args.seq_lens"),
            ("args->prefill_len", "args.prefill_len"),
            ("args->last_sampled_tokens", "args.last_sampled_tokens"),
            ("args->draft_tokens", "args.draft_tokens"),
            ("args->logits_indices", "out.logits_indices"),
            ("args->cu_num_logits", "out.cu_num_logits"),
            ("args->expanded_idx_mapping", "out.expanded_idx_mapping"),
            ("args->expanded_local_pos", "out.expanded_local_pos"),
            ("args->input_ids", "out.input_ids"),
        ],
    },
    CallNames {
        rust: "combine_sampled_and_draft_tokens_host",
        c: "cattn_combine_sampled_and_draft_tokens",
        args: &[
            ("args->num_new_sampled_tokens", "num_new_sampled_tokens"),
            ("args->query_start_loc", "query_start_loc"),
            ("args->num_reqs", "num_reqs"),
            ("args->num_draft_tokens", "num_draft_tokens"),
            ("args->idx_mapping", "idx_mapping"),
        ],
    },
    // step_inputs_size(args: &StepInputsSizeArgs); the step-input helpers that size their
    // results with it report its refusals in their own names.
    CallNames {
        rust: "step_inputs_size",
        c: "cattn_step_inputs_size",
        args: &[
            (
                "args->num_new_sampled_tokens",
                "args.num_new_sampled_tokens",
            ),
            ("args->num_scheduled_tokens", "args.num_scheduled_tokens"),
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->num_reqs", "args.num_reqs"),
            ("args->num_draft_tokens", "args.num_draft_tokens"),
        ],
    },
    CallNames {
        rust: "prepare_pos_seq_lens_host",
        c: "cattn_step_inputs_size",
        args: &[
            ("args->num_scheduled_tokens", "num_scheduled_tokens"),
            ("args->num_reqs", "num_reqs"),
        ],
    },
    CallNames {
        rust: "compute_slot_mappings_host",
        c: "cattn_step_inputs_size",
        args: &[
            ("args->query_start_loc", "query_start_loc"),
            ("args->num_reqs", "num_reqs"),
        ],
    },
    CallNames {
        rust: "combine_sampled_and_draft_tokens_host",
        c: "cattn_step_inputs_size",
        args: &[
            ("args->num_new_sampled_tokens", "num_new_sampled_tokens"),
            ("args->query_start_loc", "query_start_loc"),
            ("args->num_reqs", "num_reqs"),
            ("args->num_draft_tokens", "num_draft_tokens"),
        ],
    },
    // step_batch_check(args: &StepBatchCheckArgs, status), step_batch_check_host(args)
    CallNames {
        rust: "step_batch_check",
        c: "cattn_step_batch_check",
        args: &[
            STEP_CHECK_ARGS[0],
            STEP_CHECK_ARGS[1],
            STEP_CHECK_ARGS[2],
            STEP_CHECK_ARGS[3],
            STEP_CHECK_ARGS[4],
            ("args->status", "status"),
        ],
    },
    CallNames {
        rust: "step_batch_check_host",
        c: "cattn_step_batch_check",
        args: &STEP_CHECK_ARGS,
    },
    // eagle_step_update_slot_mapping_and_metadata(args, out): seq_lens, read and updated in
    // place, is an output field; eagle_step_update_slot_mapping_and_metadata_host(block_size,
    // max_model_len, input_batch_size, positions, block_table, seq_lens)
    CallNames {
        rust: "eagle_step_update_slot_mapping_and_metadata",
        c: "cattn_eagle_step_update_slot_mapping_and_metadata",
        args: &[
            ("args->block_size", "args.block_size"),
            ("args->max_model_len", "args.max_model_len"),
            ("args->input_batch_size", "args.input_batch_size"),
            ("args->positions", "args.positions"),
            ("args->block_table", "args.block_table"),
            ("args->seq_lens", "out.seq_lens"),
            ("args->out_clamped_positions", "out.clamped_positions"),
            ("args->out_slot_mapping", "out.slot_mapping"),
        ],
    },
    CallNames {
        rust: "eagle_step_update_slot_mapping_and_metadata_host",
        c: "cattn_eagle_step_update_slot_mapping_and_metadata",
        args: &[
            ("args->block_size", "block_size"),
            ("args->max_model_len", "max_model_len"),
            ("args->input_batch_size", "input_batch_size"),
            ("args->positions", "positions"),
            ("args->block_table", "block_table"),
            ("args->seq_lens", "seq_lens"),
        ],
    },
    // eagle_prepare_inputs_padded(args, out), eagle_prepare_inputs_padded_host(
    // cu_num_draft_tokens, valid_sampled_tokens_count, query_start_loc)
    CallNames {
        rust: "eagle_prepare_inputs_padded",
        c: "cattn_eagle_prepare_inputs_padded",
        args: &[
            ("args->cu_num_draft_tokens", "args.cu_num_draft_tokens"),
            (
                "args->valid_sampled_tokens_count",
                "args.valid_sampled_tokens_count",
            ),
            ("args->query_start_loc", "args.query_start_loc"),
            (
                "args->token_indices_to_sample",
                "out.token_indices_to_sample",
            ),
            ("args->num_rejected_tokens", "out.num_rejected_tokens"),
        ],
    },
    CallNames {
        rust: "eagle_prepare_inputs_padded_host",
        c: "cattn_eagle_prepare_inputs_padded",
        args: &[
            ("args->cu_num_draft_tokens", "cu_num_draft_tokens"),
            (
                "args->valid_sampled_tokens_count",
                "valid_sampled_tokens_count",
            ),
            ("args->query_start_loc", "query_start_loc"),
        ],
    },
    // eagle_prepare_next_token_padded(args, out), eagle_prepare_next_token_padded_host(
    // vocab_size, sampled_token_ids, discard_request_mask, backup_next_token_ids)
    CallNames {
        rust: "eagle_prepare_next_token_padded",
        c: "cattn_eagle_prepare_next_token_padded",
        args: &[
            ("args->vocab_size", "args.vocab_size"),
            ("args->sampled_token_ids", "args.sampled_token_ids"),
            ("args->discard_request_mask", "args.discard_request_mask"),
            ("args->backup_next_token_ids", "args.backup_next_token_ids"),
            ("args->next_token_ids", "out.next_token_ids"),
            (
                "args->valid_sampled_tokens_count",
                "out.valid_sampled_tokens_count",
            ),
        ],
    },
    CallNames {
        rust: "eagle_prepare_next_token_padded_host",
        c: "cattn_eagle_prepare_next_token_padded",
        args: &[
            ("args->vocab_size", "vocab_size"),
            ("args->sampled_token_ids", "sampled_token_ids"),
            ("args->discard_request_mask", "discard_request_mask"),
            ("args->backup_next_token_ids", "backup_next_token_ids"),
        ],
    },
    // compute_new_slot_mapping(args, new_slot_mapping), compute_new_slot_mapping_host(
    // block_size, num_new_tokens, max_model_len, query_start_loc, block_table, new_positions,
    // is_rejected_token_mask)
    CallNames {
        rust: "compute_new_slot_mapping",
        c: "cattn_compute_new_slot_mapping",
        args: &[
            ("args->block_size", "args.block_size"),
            ("args->num_new_tokens", "args.num_new_tokens"),
            ("args->max_model_len", "args.max_model_len"),
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->block_table", "args.block_table"),
            ("args->new_positions", "args.new_positions"),
            (
                "args->is_rejected_token_mask",
                "args.is_rejected_token_mask",
            ),
            ("args->new_slot_mapping", "new_slot_mapping"),
        ],
    },
    CallNames {
        rust: "compute_new_slot_mapping_host",
        c: "cattn_compute_new_slot_mapping",
        args: &[
            ("args->block_size", "block_size"),
            ("args->num_new_tokens", "num_new_tokens"),
            ("args->max_model_len", "max_model_len"),
            ("args->query_start_loc", "query_start_loc"),
            ("args->block_table", "block_table"),
            ("args->new_positions", "new_positions"),
            ("args->is_rejected_token_mask", "is_rejected_token_mask"),
        ],
    },
    // copy_and_expand_eagle_inputs(args, out): the scalars are the params' fields, the
    // outputs drop their out_ prefix; copy_and_expand_eagle_inputs_host(params,
    // target_token_ids, target_positions, next_token_ids, query_start_loc, query_end_loc)
    CallNames {
        rust: "copy_and_expand_eagle_inputs",
        c: "cattn_copy_and_expand_eagle_inputs",
        args: &[
            COPY_EXPAND_PARAMS[0],
            COPY_EXPAND_PARAMS[1],
            COPY_EXPAND_PARAMS[2],
            COPY_EXPAND_PARAMS[3],
            COPY_EXPAND_PARAMS[4],
            ("args->target_token_ids", "args.target_token_ids"),
            ("args->target_positions", "args.target_positions"),
            ("args->next_token_ids", "args.next_token_ids"),
            ("args->query_start_loc", "args.query_start_loc"),
            ("args->query_end_loc", "args.query_end_loc"),
            ("args->out_input_ids", "out.input_ids"),
            ("args->out_positions", "out.positions"),
            (
                "args->out_is_rejected_token_mask",
                "out.is_rejected_token_mask",
            ),
            ("args->out_is_masked_token_mask", "out.is_masked_token_mask"),
            ("args->out_new_token_indices", "out.new_token_indices"),
            ("args->out_hidden_state_mapping", "out.hidden_state_mapping"),
        ],
    },
    CallNames {
        rust: "copy_and_expand_eagle_inputs_host",
        c: "cattn_copy_and_expand_eagle_inputs",
        args: &[
            (COPY_EXPAND_PARAMS[0].0, "params.padding_token_id"),
            (COPY_EXPAND_PARAMS[1].0, "params.parallel_drafting_token_id"),
            (
                COPY_EXPAND_PARAMS[2].0,
                "params.num_padding_slots_per_request",
            ),
            (COPY_EXPAND_PARAMS[3].0, "params.max_tokens_per_request"),
            (COPY_EXPAND_PARAMS[4].0, "params.shift_input_ids"),
            ("args->target_token_ids", "target_token_ids"),
            ("args->target_positions", "target_positions"),
            ("args->next_token_ids", "next_token_ids"),
            ("args->query_start_loc", "query_start_loc"),
            ("args->query_end_loc", "query_end_loc"),
        ],
    },
    // update_num_computed_tokens_for_batch_change(args, out): the counts, read and rewritten
    // in place, are the output fields; update_num_computed_tokens_for_batch_change_host(
    // num_computed_tokens, num_accepted_tokens, prev_positions, valid_sampled_token_count,
    // prev_num_draft_tokens, cpu_num_computed_tokens)
    CallNames {
        rust: "update_num_computed_tokens_for_batch_change",
        c: "cattn_update_num_computed_tokens_for_batch_change",
        args: &[
            ("args->num_computed_tokens", "out.num_computed_tokens"),
            ("args->num_accepted_tokens", "out.num_accepted_tokens"),
            ("args->prev_positions", "args.prev_positions"),
            (
                "args->valid_sampled_token_count",
                "args.valid_sampled_token_count",
            ),
            ("args->prev_num_draft_tokens", "args.prev_num_draft_tokens"),
            (
                "args->cpu_num_computed_tokens",
                "args.cpu_num_computed_tokens",
            ),
        ],
    },
    CallNames {
        rust: "update_num_computed_tokens_for_batch_change_host",
        c: "cattn_update_num_computed_tokens_for_batch_change",
        args: &[
            ("args->num_computed_tokens", "num_computed_tokens"),
            ("args->num_accepted_tokens", "num_accepted_tokens"),
            ("args->prev_positions", "prev_positions"),
            (
                "args->valid_sampled_token_count",
                "valid_sampled_token_count",
            ),
            ("args->prev_num_draft_tokens", "prev_num_draft_tokens"),
            ("args->cpu_num_computed_tokens", "cpu_num_computed_tokens"),
        ],
    },
    // step_plan_create(desc) and StepPlan::new(desc), StepPlan::run(batch, outputs, stream):
    // the Rust structs keep the C field names but for the Mamba mode and the workspace.
    CallNames {
        rust: "step_plan_create",
        c: "cattn_step_plan_create",
        args: &STEP_DESC,
    },
    CallNames {
        rust: "StepPlan::new",
        c: "cattn_step_plan_create",
        args: &STEP_DESC,
    },
    CallNames {
        rust: "StepPlan::run",
        c: "cattn_step_plan_run",
        args: &[
            ("batch", "batch"),
            ("outputs", "outputs"),
            ("outputs->workspace", "outputs.workspace"),
            ("outputs->workspace_bytes", "outputs.workspace"),
        ],
    },
    // get_per_layer_parameters(layers), infer_global_hyperparameters(params): the slices are
    // the arrays, their lengths the counts.
    CallNames {
        rust: "get_per_layer_parameters",
        c: "cattn_get_per_layer_parameters",
        args: &[("layers", "layers"), ("num_layers", "layers.len()")],
    },
    CallNames {
        rust: "infer_global_hyperparameters",
        c: "cattn_infer_global_hyperparameters",
        args: &[("params", "params"), ("num_layers", "params.len()")],
    },
    // The context's set_kv_cache_layout_override(layout), set_kv_cache_layout_preset(name)
    // and record_kv_cache_layout(name), CacheLayout::from_name(name) and strides(sizes). (Not
    // listed, so their messages keep the library's wording: get_kv_cache_layout, whose
    // message tests/transcripts/transcript.rs prints to compare with the C transcript's; the
    // resolver, the supported-layouts intersection and the layout properties.)
    CallNames {
        rust: "Context::set_kv_cache_layout_override",
        c: "cattn_context_set_kv_cache_layout_override",
        args: &[("layout", "layout")],
    },
    CallNames {
        rust: "Context::set_kv_cache_layout_preset",
        c: "cattn_context_set_kv_cache_layout_preset",
        args: &[("name", "name")],
    },
    CallNames {
        rust: "Context::record_kv_cache_layout",
        c: "cattn_record_kv_cache_layout",
        args: &[("name", "name")],
    },
    CallNames {
        rust: "CacheLayout::from_name",
        c: "cattn_kv_cache_layout_from_name",
        args: &[("name", "name")],
    },
    CallNames {
        rust: "CacheLayout::strides",
        c: "cattn_kv_cache_layout_strides",
        args: &[("args->layout", "self"), ("args->sizes", "sizes")],
    },
];

/// `StepBatchCheckArgs`' fields.
const STEP_CHECK_ARGS: [(&str, &str); 5] = [
    ("args->query_start_loc", "args.query_start_loc"),
    ("args->num_reqs", "args.num_reqs"),
    ("args->seq_lens", "args.seq_lens"),
    ("args->block_tables", "args.block_tables"),
    ("args->slot_mappings", "args.slot_mappings"),
];

/// `CopyAndExpandEagleInputsArgs`' scalars: its params' fields.
const COPY_EXPAND_PARAMS: [(&str, &str); 5] = [
    ("args->padding_token_id", "args.params.padding_token_id"),
    (
        "args->parallel_drafting_token_id",
        "args.params.parallel_drafting_token_id",
    ),
    (
        "args->num_padding_slots_per_request",
        "args.params.num_padding_slots_per_request",
    ),
    (
        "args->max_tokens_per_request",
        "args.params.max_tokens_per_request",
    ),
    ("args->shift_input_ids", "args.params.shift_input_ids"),
];

/// `StepPlanDesc`.
const STEP_DESC: [(&str, &str); 2] = [
    ("desc", "desc"),
    ("desc->mamba.mamba_cache_mode", "desc.mamba.mode"),
];

/// `PcpKvAllgatherArgs`' fields and the communicator, then `PcpKvAllgatherOutputs`'.
const ALLGATHER_ARGS: [(&str, &str); 9] = [
    ("args->comm", "comm"),
    ("args->key", "args.key"),
    ("args->value", "args.value"),
    ("args->num_actual_tokens", "args.num_actual_tokens"),
    ("args->restore_idx", "args.restore_idx"),
    ("args->key_out", "out.key_out"),
    ("args->value_out", "out.value_out"),
    ("args->workspace", "out.workspace"),
    ("args->workspace_size", "out.workspace"),
];

/// `LocalAttentionArgs`' fields.
const LOCAL_ARGS: [(&str, &str); 4] = [
    ("args->metadata", "args.metadata"),
    ("args->attn_chunk_size", "args.attn_chunk_size"),
    ("args->block_size", "args.block_size"),
    ("args->max_virtual_batches", "args.max_virtual_batches"),
];

/// The plan constructors' parameters.
const LOCAL_PARAMETERS: [(&str, &str); 3] = [
    ("args->metadata", "metadata"),
    ("args->attn_chunk_size", "attn_chunk_size"),
    ("args->block_size", "block_size"),
];

/// The fill's parameters: `LocalAttentionOutputs`' fields.
const LOCAL_FILL: [(&str, &str); 7] = [
    ("args->metadata", "metadata"),
    ("args->out->query_start_loc_cpu", "out.query_start_loc_cpu"),
    ("args->out->seq_lens_cpu", "out.seq_lens_cpu"),
    (
        "args->out->num_computed_tokens_cpu",
        "out.num_computed_tokens_cpu",
    ),
    ("args->out->block_table_tensor", "out.block_table_tensor"),
    ("args->out->query_start_loc", "out.query_start_loc"),
    ("args->out->seq_lens", "out.seq_lens"),
];

/// The one-call helper's parameters, which make the metadata it plans and fills with.
const LOCAL_ONE_CALL: [(&str, &str); 5] = [
    ("args->metadata->query_start_loc_cpu", "query_start_loc"),
    ("args->metadata->seq_lens_cpu", "seq_lens"),
    ("args->metadata->block_table_tensor", "block_table"),
    ("args->attn_chunk_size", "attn_chunk_size"),
    ("args->block_size", "block_size"),
];

/// The 1.0 arguments of extend_all_queries_by_n.
const EXTEND_ARGS: [(&str, &str); 7] = [
    ("args->metadata", "metadata"),
    ("args->n", "n"),
    ("args->new_slot_mapping", "new_slot_mapping"),
    ("args->out->query_start_loc", "out.query_start_loc"),
    ("args->out->query_start_loc_cpu", "out.query_start_loc_cpu"),
    ("args->out->seq_lens", "out.seq_lens"),
    ("args->out->seq_lens_cpu", "out.seq_lens_cpu"),
];

/// The in-place extend's: the batch's scalars are `scalars`, its tensors `tensors` (1.0) or
/// `newer` (1.1), on both sides.
const EXTEND_IN_PLACE_ARGS: [(&str, &str); 22] = [
    ("args->metadata", "scalars"),
    ("args->metadata->query_start_loc", "tensors.query_start_loc"),
    (
        "args->metadata->query_start_loc_cpu",
        "tensors.query_start_loc_cpu",
    ),
    ("args->metadata->seq_lens", "tensors.seq_lens"),
    ("args->metadata->seq_lens_cpu", "tensors.seq_lens_cpu"),
    (
        "args->metadata->seq_lens_cpu_upper_bound",
        "newer.seq_lens_cpu_upper_bound",
    ),
    (
        "args->metadata->dcp_local_seq_lens",
        "newer.dcp_local_seq_lens",
    ),
    (
        "args->metadata->dcp_local_seq_lens_cpu",
        "newer.dcp_local_seq_lens_cpu",
    ),
    ("args->n", "n"),
    ("args->new_slot_mapping", "new_slot_mapping"),
    ("args->out->query_start_loc", "tensors.query_start_loc"),
    (
        "args->out->query_start_loc_cpu",
        "tensors.query_start_loc_cpu",
    ),
    ("args->out->seq_lens", "tensors.seq_lens"),
    ("args->out->seq_lens_cpu", "tensors.seq_lens_cpu"),
    (
        "args->out->seq_lens_cpu_upper_bound",
        "newer.seq_lens_cpu_upper_bound",
    ),
    ("args->out->dcp_local_seq_lens", "newer.dcp_local_seq_lens"),
    (
        "args->out->dcp_local_seq_lens_cpu",
        "newer.dcp_local_seq_lens_cpu",
    ),
    ("args->out->positions", "newer.positions"),
    ("args->dcp_size", "dcp.size"),
    ("args->dcp_rank", "dcp.rank"),
    (
        "args->dcp_kv_cache_interleave_size",
        "dcp.kv_cache_interleave_size",
    ),
    ("args->out", "tensors"),
];

/// `DcpLocalSeqLensArgs`' fields and the output.
const DCP_ARGS: [(&str, &str); 5] = [
    ("args->seq_lens", "args.seq_lens"),
    ("args->dcp_size", "args.dcp_size"),
    ("args->dcp_rank", "args.dcp_rank"),
    (
        "args->dcp_kv_cache_interleave_size",
        "args.dcp_kv_cache_interleave_size",
    ),
    ("args->out", "out"),
];

/// The one-call helpers' parameters.
const DCP_PARAMETERS: [(&str, &str); 4] = [
    ("args->seq_lens", "seq_lens"),
    ("args->dcp_size", "dcp_size"),
    ("args->dcp_rank", "dcp_rank"),
    (
        "args->dcp_kv_cache_interleave_size",
        "dcp_kv_cache_interleave_size",
    ),
];

/// `c_message` in the terms of the Rust function `rust`, or `None` when [`NAMES`] does not
/// name its argument for that function.
pub(crate) fn translate(rust: &str, c_message: &str) -> Option<String> {
    let (function, rest) = c_message.split_once(": ")?;
    let path_end = rest.find(' ').unwrap_or(rest.len());
    let (path, tail) = rest.split_at(path_end);
    let mut best: Option<(&str, &str)> = None;
    for call in NAMES.iter().filter(|n| n.rust == rust && n.c == function) {
        for &(c_path, name) in call.args {
            let Some(after) = path.strip_prefix(c_path) else {
                continue;
            };
            // The whole path, or a prefix of it that ends where a field or an index follows.
            let boundary = after.is_empty()
                || after.starts_with("->")
                || after.starts_with('.')
                || after.starts_with('[');
            if boundary && best.map_or(true, |(b, _)| c_path.len() > b.len()) {
                best = Some((c_path, name));
            }
        }
    }
    let (c_path, name) = best?;
    let below = path[c_path.len()..].replace("->", ".");
    Some(format!("cattn::{rust}: {name}{below}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parameter name -> type of a comma-separated Rust parameter or field list.
    fn declarations(list: &str) -> Vec<(String, String)> {
        list.split(',')
            .filter_map(|d| {
                let (name, ty) = d.trim().split_once(':')?;
                let name = name.trim().trim_start_matches("pub ").trim();
                Some((name.to_owned(), ty.trim().to_owned()))
            })
            .collect()
    }

    /// The fields of the C struct `ty` names (`*const cattn_x_args_t`), from the generated
    /// bindings.
    fn fields(bindings: &str, ty: &str) -> Vec<(String, String)> {
        let ty = ty
            .trim_start_matches("*const ")
            .trim_start_matches("*mut ")
            .trim();
        // `pub type cattn_x_t = cattn_x;` (or another alias) then `pub struct cattn_x { ... }`.
        let mut name = ty.to_owned();
        while let Some(at) = bindings.find(&format!("pub type {name} =")) {
            let rest = &bindings[at + format!("pub type {name} =").len()..];
            name = rest[..rest.find(';').unwrap()].trim().to_owned();
        }
        let open = format!("pub struct {name} {{");
        let Some(at) = bindings.find(&open) else {
            return Vec::new();
        };
        let body = &bindings[at + open.len()..];
        let body = &body[..body.find("\n}").unwrap()];
        let body: String = body
            .lines()
            .filter(|l| !l.trim_start().starts_with("#["))
            .collect::<Vec<_>>()
            .join("\n");
        declarations(&body)
    }

    /// Every C path the table names is one the library can name: a parameter of its C
    /// function in the generated bindings (from `include/cattn.h`), each `->field` a field of
    /// the struct the parameter or field points to; and every Rust function it names exists.
    #[test]
    fn every_c_path_is_in_the_header() {
        let bindings = include_str!("../../cattn-sys/src/bindings.rs");
        let lib: String = [
            include_str!("fused_pcp_qkv_select.rs"),
            include_str!("get_pcp_query_restore_idx.rs"),
            include_str!("get_dcp_local_seq_lens.rs"),
            include_str!("split_decodes_and_prefills.rs"),
            include_str!("compute_causal_conv1d_metadata.rs"),
            include_str!("max_local_attention_virtual_batches.rs"),
            include_str!("mamba_get_block_table_tensor.rs"),
            include_str!("naive_query_lens.rs"),
            include_str!("token_to_req_indices.rs"),
            include_str!("log2_lse_to_ln.rs"),
            include_str!("unpadded.rs"),
            include_str!("compute_mm_prefix_range_tensor.rs"),
            include_str!("extend_all_queries_by_n.rs"),
            include_str!("make_kv_sharing_fast_prefill_common_attn_metadata.rs"),
            include_str!("make_local_attention_virtual_batches.rs"),
            include_str!("pcp_kv_allgather_and_restore.rs"),
            include_str!("comm.rs"),
            include_str!("step_plan.rs"),
            include_str!("prepare_pos_seq_lens.rs"),
            include_str!("gather_block_tables.rs"),
            include_str!("compute_slot_mappings.rs"),
            include_str!("combine_sampled_and_draft_tokens.rs"),
            include_str!("step_batch_check.rs"),
            include_str!("step_inputs_size.rs"),
            include_str!("eagle_step_update_slot_mapping_and_metadata.rs"),
            include_str!("eagle_prepare_inputs_padded.rs"),
            include_str!("eagle_prepare_next_token_padded.rs"),
            include_str!("compute_new_slot_mapping.rs"),
            include_str!("copy_and_expand_eagle_inputs.rs"),
            include_str!("update_num_computed_tokens_for_batch_change.rs"),
            include_str!("get_per_layer_parameters.rs"),
            include_str!("get_kv_cache_layout.rs"),
            include_str!("kv_cache_layout.rs"),
        ]
        .concat();
        let mut checked = 0;
        for call in NAMES {
            // A method ("LocalAttentionPlan::fill") by its name.
            let rust = call.rust.rsplit("::").next().unwrap();
            assert!(
                lib.contains(&format!("pub fn {rust}("))
                    || lib.contains(&format!("pub fn {rust}<"))
                    || lib.contains(&format!("pub unsafe fn {rust}(")),
                "no Rust function {}",
                call.rust
            );
            let decl = format!("pub fn {}(", call.c);
            let at = bindings
                .find(&decl)
                .unwrap_or_else(|| panic!("{} is not in the bindings", call.c));
            let params = &bindings[at + decl.len()..];
            let params = declarations(&params[..params.find(')').unwrap()]);
            for &(c_path, _) in call.args {
                let mut list = params.clone();
                let mut found = false;
                // "->" through a pointer, "." into an embedded struct.
                for part in c_path.split("->").flat_map(|p| p.split('.')) {
                    let hit = list.iter().find(|(n, _)| n == part).cloned();
                    found = hit.is_some();
                    let Some((_, ty)) = hit else { break };
                    list = fields(bindings, &ty);
                }
                assert!(found, "{}: {c_path} is not in cattn.h", call.c);
                checked += 1;
            }
        }
        assert!(checked > 50, "{checked} paths checked");
    }

    /// The speculative-decoding calls' required tensors, which the safe API cannot pass as
    /// NULL (tests/spec_decode.rs has the library refuse them through the raw table): the
    /// library's message for each comes out naming the Rust field or parameter.
    #[test]
    fn spec_decode_null_tensors_are_named_in_rust_terms() {
        let null = " is NULL (got NULL, expected a DLTensor)";
        for (rust, c, c_path, name) in [
            (
                "eagle_step_update_slot_mapping_and_metadata",
                "cattn_eagle_step_update_slot_mapping_and_metadata",
                "args->seq_lens",
                "out.seq_lens",
            ),
            (
                "eagle_step_update_slot_mapping_and_metadata_host",
                "cattn_eagle_step_update_slot_mapping_and_metadata",
                "args->seq_lens",
                "seq_lens",
            ),
            (
                "eagle_prepare_inputs_padded",
                "cattn_eagle_prepare_inputs_padded",
                "args->valid_sampled_tokens_count",
                "args.valid_sampled_tokens_count",
            ),
            (
                "eagle_prepare_next_token_padded",
                "cattn_eagle_prepare_next_token_padded",
                "args->next_token_ids",
                "out.next_token_ids",
            ),
            (
                "compute_new_slot_mapping",
                "cattn_compute_new_slot_mapping",
                "args->block_table",
                "args.block_table",
            ),
            (
                "copy_and_expand_eagle_inputs",
                "cattn_copy_and_expand_eagle_inputs",
                "args->query_end_loc",
                "args.query_end_loc",
            ),
            (
                "copy_and_expand_eagle_inputs_host",
                "cattn_copy_and_expand_eagle_inputs",
                "args->num_padding_slots_per_request",
                "params.num_padding_slots_per_request",
            ),
            (
                "update_num_computed_tokens_for_batch_change",
                "cattn_update_num_computed_tokens_for_batch_change",
                "args->prev_num_draft_tokens",
                "args.prev_num_draft_tokens",
            ),
        ] {
            assert_eq!(
                translate(rust, &format!("{c}: {c_path}{null}")),
                Some(format!("cattn::{rust}: {name}{null}")),
                "{rust}"
            );
        }
    }

    #[test]
    fn translates_the_argument_and_keeps_the_rest() {
        let c =
            "cattn_fused_pcp_qkv_select: args->pcp_rank is out of range (got 2, expected [0, 2))";
        assert_eq!(
            translate("pcp_qkv_halves", c).as_deref(),
            Some("cattn::pcp_qkv_halves: pcp_rank is out of range (got 2, expected [0, 2))")
        );
        assert_eq!(
            translate("fused_pcp_qkv_select", c).as_deref(),
            Some("cattn::fused_pcp_qkv_select: args.pcp_rank is out of range (got 2, expected [0, 2))")
        );
        // A path below a listed one keeps its rest; an unlisted one or another function's
        // message is left alone.
        assert_eq!(
            translate(
                "split_decodes_and_prefills",
                "cattn_split_decodes_and_prefills: args->query_start_loc_cpu->shape[0] is 0 (x)"
            )
            .as_deref(),
            Some("cattn::split_decodes_and_prefills: batch.query_start_loc_cpu.shape[0] is 0 (x)")
        );
        assert_eq!(
            translate(
                "pcp_qkv_halves",
                "cattn_fused_pcp_qkv_select: args->q_head is x"
            ),
            None
        );
        assert_eq!(
            translate("pcp_qkv_halves", "cattn_unpadded: args->pcp_rank is x"),
            None
        );
        assert_eq!(translate("pcp_qkv_halves", "no colon here"), None);
    }
}
