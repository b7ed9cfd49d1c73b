// SPDX-License-Identifier: Apache-2.0
//! The step plan and the two device calls of 1.1: the desc's checks (status and the message
//! naming the field), the shape's formulas, the workspace size, what a run refuses on the host,
//! and what a build or machine without a GPU answers for CUDA tensors.
//!
//! Creation needs no GPU; runs do, so on the host they can only be refused: with host tensors
//! (InvalidArgument, on every build) and, where no GPU is usable, with CUDA-labelled tensors
//! whose fake addresses are never dereferenced (NotSupported).

mod support;

use std::ffi::c_void;

use cattn::*;
use support::{expect_error, HostInts, Int, POISON};

fn untouched(t: &HostInts) -> bool {
    t.storage_values().iter().all(|&v| v == POISON)
}

fn cdiv(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// A desc of every product with valid parameters.
fn all_products(reqs: i64, tokens: i64) -> StepPlanDesc {
    StepPlanDesc {
        products: StepProducts::ALL,
        max_num_reqs: reqs,
        max_num_tokens: tokens,
        max_num_blocks_per_req: 16,
        max_num_logits: tokens,
        dcp: StepDcpParams {
            dcp_size: 2,
            dcp_rank: DcpRank::All,
            dcp_kv_cache_interleave_size: 4,
        },
        mamba: StepMambaParams {
            block_size: 16,
            num_speculative_blocks: 2,
            mode: MambaCacheMode::Align,
        },
        conv1d: StepConv1dParams { block_m: 8 },
        local_attention: StepLocalAttentionParams {
            attn_chunk_size: 16,
            block_size: 4,
        },
        extend: StepExtendParams { n: 1 },
        ..Default::default()
    }
}

/// Whether the library can run CUDA tensors here (a CUDA build on a machine with a GPU): then a
/// fake device address would reach a kernel, so the tests that use one stop short.
fn gpu_usable() -> bool {
    cuda_device_count().unwrap() != 0
}

/// Distinct fake device addresses, far apart so that no two views overlap.
fn fake(i: usize) -> *mut c_void {
    ((i + 1) << 20) as *mut c_void
}

/// A CUDA-labelled view of a fake address (never dereferenced: see the module docs).
fn dev_in(i: usize, shape: &[i64]) -> TensorRef<'static> {
    // SAFETY: the library refuses the call before it reads device memory (host checks, or no
    // device), which each test makes sure of.
    unsafe { TensorRef::from_raw_parts(fake(i), Device::Cuda(0), DataType::I32, shape, None, 0) }
}

fn dev_out(i: usize, shape: &[i64]) -> TensorMut<'static> {
    // SAFETY: as dev_in.
    unsafe { TensorMut::from_raw_parts(fake(i), Device::Cuda(0), DataType::I32, shape, None, 0) }
}

/// What a build or machine without a usable GPU answers for CUDA tensors: NotSupported, after
/// every host check, in the name of `function`.
fn expect_no_gpu(result: Result<()>, function: &str) {
    let e = result.unwrap_err();
    assert_eq!(e.status(), Status::NotSupported, "{e}");
    assert!(e.message().starts_with(&format!("{function}: ")), "{e}");
}

#[test]
fn the_default_desc_is_the_c_init() {
    let raw = StepPlanDesc::default().to_raw().unwrap();
    assert_eq!(
        raw.struct_size,
        std::mem::size_of::<sys::cattn_step_plan_desc_t>()
    );
    assert_eq!((raw.products, raw.reserved0), (0, 0));
    assert_eq!(
        (
            raw.max_num_reqs,
            raw.max_num_tokens,
            raw.max_num_blocks_per_req,
            raw.max_num_logits
        ),
        (0, 0, 0, 0)
    );
    // CATTN_STEP_PLAN_DESC_INIT: {1, CATTN_DCP_ALL_RANKS, 1}, {1, 0, NONE, 0}, {8}, {0, 0}, {1}.
    assert_eq!(
        (
            raw.dcp.dcp_size,
            raw.dcp.dcp_rank,
            raw.dcp.dcp_kv_cache_interleave_size
        ),
        (1, i64::from(sys::CATTN_DCP_ALL_RANKS), 1)
    );
    assert_eq!(
        (
            raw.mamba.block_size,
            raw.mamba.num_speculative_blocks,
            raw.mamba.mamba_cache_mode,
            raw.mamba.reserved0
        ),
        (1, 0, sys::CATTN_MAMBA_CACHE_MODE_NONE as i32, 0)
    );
    assert_eq!(raw.conv1d.block_m, 8);
    assert_eq!(
        (
            raw.local_attention.attn_chunk_size,
            raw.local_attention.block_size
        ),
        (0, 0)
    );
    assert_eq!(raw.extend.n, 1);
    // The 1.2 fields: CATTN_STEP_PLAN_DESC_INIT's, field by field (the Rust defaults are read
    // from the header's initialiser, which cattn-sys carries as a constant).
    let init = sys::CATTN_STEP_PLAN_DESC_INIT;
    assert_eq!(raw.max_num_persistent_reqs, init.max_num_persistent_reqs);
    let fields = |p: sys::cattn_step_inputs_params_t| {
        (
            (p.num_kv_groups, p.slot_mapping_contract, p.require_uniform),
            (p.dcp_size, p.dcp_rank, p.dcp_kv_cache_interleave_size),
            (p.num_new_sampled_tokens, p.decode_threshold, p.table_group),
        )
    };
    assert_eq!(fields(raw.inputs), fields(init.inputs));
    assert_eq!(
        (raw.inputs.num_new_sampled_tokens, raw.inputs.dcp_size),
        (1, 1)
    );
    for (g, h) in raw.kv_groups.iter().zip(init.kv_groups.iter()) {
        assert_eq!(
            (g.block_size, g.kernel_block_size, g.max_num_blocks),
            (h.block_size, h.kernel_block_size, h.max_num_blocks)
        );
        assert_eq!((g.slot_mode, g.reserved0), (h.slot_mode, h.reserved0));
    }
    // The C default names no product, which creation refuses.
    expect_error(
        StepPlan::new(&StepPlanDesc::default()),
        Status::InvalidArgument,
        "cattn::StepPlan::new: desc.products",
    );
}

#[test]
fn products_and_counts_mirror_the_header() {
    let named = [
        (
            StepProducts::DCP_LOCAL_SEQ_LENS,
            sys::CATTN_STEP_DCP_LOCAL_SEQ_LENS,
        ),
        (
            StepProducts::PCP_QUERY_RESTORE_IDX,
            sys::CATTN_STEP_PCP_QUERY_RESTORE_IDX,
        ),
        (
            StepProducts::MAMBA_BLOCK_TABLE,
            sys::CATTN_STEP_MAMBA_BLOCK_TABLE,
        ),
        (
            StepProducts::CAUSAL_CONV1D_METADATA,
            sys::CATTN_STEP_CAUSAL_CONV1D_METADATA,
        ),
        (
            StepProducts::LOCAL_ATTENTION,
            sys::CATTN_STEP_LOCAL_ATTENTION,
        ),
        (StepProducts::FAST_PREFILL, sys::CATTN_STEP_FAST_PREFILL),
        (StepProducts::EXTEND_QUERIES, sys::CATTN_STEP_EXTEND_QUERIES),
    ];
    let named_1_2 = [
        (StepProducts::INPUTS, sys::CATTN_STEP_INPUTS),
        (StepProducts::BLOCK_TABLES, sys::CATTN_STEP_BLOCK_TABLES),
        (StepProducts::SLOT_MAPPINGS, sys::CATTN_STEP_SLOT_MAPPINGS),
        (StepProducts::LOGITS_INDICES, sys::CATTN_STEP_LOGITS_INDICES),
        (StepProducts::TOKEN_TO_REQ, sys::CATTN_STEP_TOKEN_TO_REQ),
        (StepProducts::SPLIT, sys::CATTN_STEP_SPLIT),
    ];
    let mut all = StepProducts::empty();
    for (p, bits) in named {
        assert_eq!(p.bits(), bits);
        assert_eq!(StepProducts::from_bits(bits), Some(p));
        all |= p;
    }
    // ALL keeps 1.1's seven products; the 1.2 ones are INPUT_PRODUCTS.
    assert_eq!(all, StepProducts::ALL);
    assert_eq!(all.bits(), sys::CATTN_STEP_ALL_PRODUCTS);
    let named_draft = [
        (
            StepProducts::DRAFT_NEXT_TOKEN,
            sys::CATTN_STEP_DRAFT_NEXT_TOKEN,
        ),
        (
            StepProducts::DRAFT_PREPARE_INPUTS,
            sys::CATTN_STEP_DRAFT_PREPARE_INPUTS,
        ),
        (StepProducts::DRAFT_EXPAND, sys::CATTN_STEP_DRAFT_EXPAND),
        (
            StepProducts::DRAFT_SLOT_MAPPING,
            sys::CATTN_STEP_DRAFT_SLOT_MAPPING,
        ),
        (StepProducts::DRAFT_STEP, sys::CATTN_STEP_DRAFT_STEP),
        (StepProducts::BATCH_CHANGE, sys::CATTN_STEP_BATCH_CHANGE),
    ];
    let mut inputs = StepProducts::empty();
    for (p, bits) in named_1_2 {
        assert_eq!(p.bits(), bits);
        assert_eq!(StepProducts::from_bits(bits), Some(p));
        assert!(!StepProducts::ALL.contains(p));
        inputs |= p;
    }
    assert_eq!(inputs, StepProducts::INPUT_PRODUCTS);
    assert_eq!(inputs.bits(), sys::CATTN_STEP_INPUT_PRODUCTS);
    let mut draft = StepProducts::empty();
    for (p, bits) in named_draft {
        assert_eq!(p.bits(), bits);
        assert_eq!(StepProducts::from_bits(bits), Some(p));
        assert!(!StepProducts::ALL.contains(p) && !inputs.contains(p));
        draft |= p;
    }
    assert_eq!(draft, StepProducts::DRAFT_PRODUCTS);
    assert_eq!(draft.bits(), sys::CATTN_STEP_DRAFT_PRODUCTS);
    assert_eq!(
        StepProducts::from_bits((StepProducts::ALL | inputs | draft).bits()),
        Some(StepProducts::ALL | inputs | draft)
    );
    assert!(StepProducts::empty().is_empty());
    assert_eq!(StepProducts::from_bits(0x80000), None);
    assert_eq!(StepProducts::from_bits_retain(0x80001).bits(), 0x80001);
    assert_eq!(
        StepProducts::ALL & StepProducts::FAST_PREFILL,
        StepProducts::FAST_PREFILL
    );
    assert_eq!(
        format!(
            "{:?}",
            StepProducts::DCP_LOCAL_SEQ_LENS | StepProducts::EXTEND_QUERIES
        ),
        "StepProducts(DCP_LOCAL_SEQ_LENS | EXTEND_QUERIES)"
    );
    assert_eq!(
        format!("{:?}", StepProducts::from_bits_retain(0x82101)),
        "StepProducts(DCP_LOCAL_SEQ_LENS | BLOCK_TABLES | DRAFT_NEXT_TOKEN | 0x80000)"
    );
    assert_eq!(format!("{:?}", StepProducts::empty()), "StepProducts(0x0)");

    assert_eq!(STEP_NUM_COUNTS, sys::CATTN_STEP_NUM_COUNTS as usize);
    assert_eq!(STEP_NUM_COUNTS_1_1, sys::CATTN_STEP_NUM_COUNTS_1_1 as usize);
    let raw = [
        sys::CATTN_STEP_COUNT_TOKENS,
        sys::CATTN_STEP_COUNT_RESTORE_SIZE,
        sys::CATTN_STEP_COUNT_CONV1D_PROGRAMS,
        sys::CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES,
        sys::CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN,
        sys::CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN,
        sys::CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN,
        sys::CATTN_STEP_COUNT_DECODE_TOKENS,
        sys::CATTN_STEP_COUNT_NUM_REQS,
        sys::CATTN_STEP_COUNT_NUM_LOGITS,
        sys::CATTN_STEP_COUNT_MAX_QUERY_LEN,
        sys::CATTN_STEP_COUNT_MAX_SEQ_LEN,
        sys::CATTN_STEP_COUNT_SPLIT_DECODES,
        sys::CATTN_STEP_COUNT_SPLIT_PREFILLS,
        sys::CATTN_STEP_COUNT_SPLIT_DECODE_TOKENS,
        sys::CATTN_STEP_COUNT_SPLIT_PREFILL_TOKENS,
    ];
    assert_eq!(raw.len(), STEP_NUM_COUNTS);
    for (i, (count, raw)) in StepCount::ALL.iter().zip(raw).enumerate() {
        assert_eq!(count.index(), raw as usize);
        assert_eq!(count.index(), i, "ALL is in the counts vector's order");
    }
}

#[test]
fn desc_validation_errors() {
    let base = all_products(4, 64);
    StepPlan::new(&base).unwrap();
    type Edit = fn(&mut StepPlanDesc);
    let cases: &[(Edit, &str, &str)] = &[
        (
            |d| d.products = StepProducts::empty(),
            "desc.products is not a set of products",
            "got 0",
        ),
        (
            |d| d.products = StepProducts::from_bits_retain(0x80000),
            "desc.products is not a set of products",
            "got 0x80000",
        ),
        (
            |d| d.max_num_reqs = 0,
            "desc.max_num_reqs is out of range",
            "got 0",
        ),
        (
            |d| d.max_num_tokens = -1,
            "desc.max_num_tokens is negative",
            "got -1",
        ),
        (
            |d| d.max_num_blocks_per_req = 0,
            "desc.max_num_blocks_per_req is out of range",
            "got 0",
        ),
        (
            |d| d.max_num_logits = -1,
            "desc.max_num_logits is negative",
            "got -1",
        ),
        (
            |d| d.dcp.dcp_size = 0,
            "desc.dcp.dcp_size is out of range",
            "got 0",
        ),
        (
            |d| d.dcp.dcp_rank = DcpRank::Rank(2),
            "desc.dcp.dcp_rank is out of range",
            "got 2",
        ),
        (
            |d| d.dcp.dcp_kv_cache_interleave_size = 0,
            "desc.dcp.dcp_kv_cache_interleave_size is out of range",
            "got 0",
        ),
        (
            |d| d.dcp.dcp_kv_cache_interleave_size = i64::from(i32::MAX),
            "desc.dcp.dcp_kv_cache_interleave_size times desc->dcp.dcp_size exceeds INT32_MAX",
            "",
        ),
        (
            |d| d.mamba.block_size = 0,
            "desc.mamba.block_size is out of range",
            "got 0",
        ),
        (
            |d| d.mamba.num_speculative_blocks = -1,
            "desc.mamba.num_speculative_blocks is negative",
            "got -1",
        ),
        (
            |d| d.conv1d.block_m = 0,
            "desc.conv1d.block_m is out of range",
            "got 0",
        ),
        (
            |d| d.local_attention.attn_chunk_size = 0,
            "desc.local_attention.attn_chunk_size is not positive",
            "got 0",
        ),
        (
            |d| d.local_attention.block_size = 0,
            "desc.local_attention.block_size is not positive",
            "got 0",
        ),
        (
            |d| d.local_attention.block_size = 3,
            "desc.local_attention.block_size does not divide desc->local_attention.attn_chunk_size",
            "",
        ),
        (|d| d.extend.n = -1, "desc.extend.n is negative", "got -1"),
        (|d| d.max_num_reqs = i64::MAX, "overflows int64", ""),
    ];
    for &(edit, needle, got) in cases {
        let mut desc = base;
        edit(&mut desc);
        let e = expect_error(StepPlan::new(&desc), Status::InvalidArgument, needle);
        assert!(
            e.message().starts_with("cattn::StepPlan::new: "),
            "{needle}: {e}"
        );
        assert!(e.message().contains(got), "{needle}: {e}");
    }
    // A negative rank is refused on the Rust side: in C -1 would mean every rank.
    let desc = StepPlanDesc {
        dcp: StepDcpParams {
            dcp_rank: DcpRank::Rank(-1),
            ..base.dcp
        },
        ..base
    };
    let e = expect_error(
        step_plan_create(&desc),
        Status::InvalidArgument,
        "cattn::step_plan_create: desc.dcp.dcp_rank is negative (got DcpRank::Rank(-1)",
    );
    assert!(e.message().contains("DcpRank::All"), "{e}");
    // The parameters of a product not selected are ignored.
    let desc = StepPlanDesc {
        products: StepProducts::CAUSAL_CONV1D_METADATA,
        dcp: StepDcpParams {
            dcp_size: 0,
            ..base.dcp
        },
        local_attention: StepLocalAttentionParams::default(),
        extend: StepExtendParams { n: -5 },
        ..base
    };
    StepPlan::new(&desc).unwrap();
}

#[test]
fn shape_formulas() {
    for reqs in [1i64, 2, 7, 256] {
        for tokens in [0i64, 1, 15, 16, 17, 8192] {
            for (block_m, chunk, block_size) in [(1, 1, 1), (8, 16, 4), (3, 32, 32), (64, 8, 2)] {
                for (mode, nspec) in [
                    (MambaCacheMode::Align, 0),
                    (MambaCacheMode::Align, 3),
                    (MambaCacheMode::None, 3),
                    (MambaCacheMode::All, 0),
                ] {
                    let desc = StepPlanDesc {
                        conv1d: StepConv1dParams { block_m },
                        local_attention: StepLocalAttentionParams {
                            attn_chunk_size: chunk,
                            block_size,
                        },
                        mamba: StepMambaParams {
                            block_size: 16,
                            num_speculative_blocks: nspec,
                            mode,
                        },
                        ..all_products(reqs, tokens)
                    };
                    let plan = StepPlan::new(&desc).unwrap();
                    let want = StepPlanShape {
                        restore_capacity: tokens,
                        conv1d_capacity: cdiv(tokens, block_m) + reqs,
                        local_capacity: (2 * reqs + cdiv(tokens, chunk)).min(tokens + reqs),
                        local_pages: chunk / block_size,
                        mamba_columns: if mode == MambaCacheMode::Align {
                            1 + nspec
                        } else {
                            0
                        },
                        draft_token_capacity: 0,
                    };
                    assert_eq!(plan.shape(), want, "{desc:?}");
                    assert_eq!(plan.workspace_size(), 0, "{desc:?}");
                }
            }
        }
    }
}

#[test]
fn the_workspace_is_empty_and_a_missing_one_is_fine() {
    for products in [
        StepProducts::ALL,
        StepProducts::DCP_LOCAL_SEQ_LENS,
        StepProducts::FAST_PREFILL | StepProducts::EXTEND_QUERIES,
    ] {
        let plan = StepPlan::new(&StepPlanDesc {
            products,
            ..all_products(8, 128)
        })
        .unwrap();
        assert_eq!(plan.workspace_size(), 0);
        assert!(format!("{plan:?}").contains("workspace_size: 0"));
    }
}

#[test]
fn runs_refuse_host_tensors() {
    let plan = StepPlan::new(&all_products(4, 64)).unwrap();
    // A batch of 3 requests, 20 tokens, on the host.
    let qsl = HostInts::of(&[0, 8, 12, 20], Int::I32, 1);
    let seq = HostInts::of(&[8, 20, 33], Int::I32, 1);
    let table = HostInts::shaped(&(0..48).collect::<Vec<_>>(), &[3, 16], Int::I32, 1);
    let logits = HostInts::of(&[7, 11, 19], Int::I64, 1);
    let shape = plan.shape();
    let mut dcp = HostInts::new(&[3, 2], Int::I32, 1);
    let mut restore = HostInts::new(&[shape.restore_capacity], Int::I32, 1);
    let mut mamba = HostInts::new(&[3, shape.mamba_columns], Int::I32, 1);
    let mut mlist = HostInts::new(&[shape.conv1d_capacity], Int::I32, 1);
    let mut lqsl = HostInts::new(&[shape.local_capacity + 1], Int::I32, 1);
    let mut lseq = HostInts::new(&[shape.local_capacity], Int::I32, 1);
    let mut decode = HostInts::new(&[4], Int::I32, 1);
    let mut eqsl = HostInts::new(&[4], Int::I32, 1);
    let mut eseq = HostInts::new(&[3], Int::I32, 1);
    let mut counts = HostInts::new(&[STEP_NUM_COUNTS as i64], Int::I64, 1);
    let e = expect_error(
        plan.run(
            &StepBatch {
                query_start_loc: Some(qsl.view()),
                seq_lens: Some(seq.view()),
                block_table: Some(table.view()),
                logits_indices: Some(logits.view()),
                ..Default::default()
            },
            &mut StepOutputs {
                dcp_local_seq_lens: Some(dcp.view_mut()),
                pcp_query_restore_idx: Some(restore.view_mut()),
                mamba_block_table: Some(mamba.view_mut()),
                conv1d_mlist: Some(mlist.view_mut()),
                local_query_start_loc: Some(lqsl.view_mut()),
                local_seq_lens: Some(lseq.view_mut()),
                decode_query_start_loc: Some(decode.view_mut()),
                extend_query_start_loc: Some(eqsl.view_mut()),
                extend_seq_lens: Some(eseq.view_mut()),
                counts: Some(counts.view_mut()),
                ..Default::default()
            },
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.query_start_loc is not device memory",
    );
    assert!(e.message().contains("kDLCUDA"), "{e}");
    for t in [
        &dcp, &restore, &mamba, &mlist, &lqsl, &lseq, &decode, &eqsl, &eseq, &counts,
    ] {
        assert!(untouched(t));
    }

    // The PCP restore index from cu_num_tokens alone: the library names it.
    let plan = StepPlan::new(&StepPlanDesc {
        products: StepProducts::PCP_QUERY_RESTORE_IDX,
        ..all_products(4, 64)
    })
    .unwrap();
    let mut restore = HostInts::new(&[64], Int::I64, 2);
    let mut run_restore = |batch: StepBatch<'_>| {
        plan.run(
            &batch,
            &mut StepOutputs {
                pcp_query_restore_idx: Some(restore.view_mut()),
                ..Default::default()
            },
            Stream::DEFAULT,
        )
    };
    expect_error(
        run_restore(StepBatch {
            cu_num_tokens: Some(qsl.view()),
            ..Default::default()
        }),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.cu_num_tokens is not device memory",
    );
    // With query_start_loc as well, the library refuses it itself.
    expect_error(
        run_restore(StepBatch {
            query_start_loc: Some(qsl.view()),
            cu_num_tokens: Some(qsl.view()),
            ..Default::default()
        }),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.query_start_loc is not device memory",
    );
    // cu_num_tokens alone on the device, with an output on the host: the library reports the
    // mixed devices.
    expect_error(
        run_restore(StepBatch {
            cu_num_tokens: Some(dev_in(0, &[4])),
            ..Default::default()
        }),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.pcp_query_restore_idx is on a different device",
    );
    assert!(untouched(&restore));
}

#[test]
fn runs_check_the_batch_and_the_outputs_on_the_host() {
    // Every failure here is found before any device work, so the fake addresses are safe on
    // any machine.
    let plan = StepPlan::new(&StepPlanDesc {
        products: StepProducts::CAUSAL_CONV1D_METADATA,
        ..all_products(4, 64)
    })
    .unwrap();
    let cap = plan.shape().conv1d_capacity;
    let run =
        |batch: &StepBatch<'_>, out: &mut StepOutputs<'_>| plan.run(batch, out, Stream::DEFAULT);
    let batch = StepBatch {
        query_start_loc: Some(dev_in(0, &[4])),
        ..Default::default()
    };
    // The product's input is required.
    expect_error(
        run(&StepBatch::default(), &mut StepOutputs::default()),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.query_start_loc is NULL",
    );
    // An output of a product the plan does not compute.
    expect_error(
        run(
            &batch,
            &mut StepOutputs {
                extend_seq_lens: Some(dev_out(1, &[3])),
                ..Default::default()
            },
        ),
        Status::InvalidArgument,
        "outputs.extend_seq_lens is set for a product the plan does not compute",
    );
    // A batch past max_num_reqs.
    expect_error(
        run(
            &StepBatch {
                query_start_loc: Some(dev_in(0, &[6])),
                ..Default::default()
            },
            &mut StepOutputs::default(),
        ),
        Status::InvalidArgument,
        "batch.query_start_loc exceeds the plan's capacity",
    );
    // An output below its capacity (the library answers INSUFFICIENT_SIZE, as its other
    // too-small outputs).
    let e = run(
        &batch,
        &mut StepOutputs {
            conv1d_mlist: Some(dev_out(1, &[cap - 1])),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            e.status(),
            Status::InsufficientSize | Status::InvalidArgument
        ),
        "{e}"
    );
    assert!(e.message().contains("outputs.conv1d_mlist"), "{e}");
    // An output overlapping the input.
    expect_error(
        run(
            &batch,
            &mut StepOutputs {
                conv1d_mlist: Some(dev_out(0, &[cap])),
                ..Default::default()
            },
        ),
        Status::InvalidArgument,
        "outputs.conv1d_mlist",
    );
    // counts_host must be pinned host memory, not ordinary host memory.
    let mut counts = HostInts::new(&[STEP_NUM_COUNTS as i64], Int::I64, 1);
    expect_error(
        run(
            &batch,
            &mut StepOutputs {
                counts_host: Some(counts.view_mut()),
                ..Default::default()
            },
        ),
        Status::InvalidArgument,
        "outputs.counts_host is not pinned host memory",
    );
    assert!(untouched(&counts));
    // Host and device tensors mixed.
    let mut nums = HostInts::new(&[3], Int::I32, 1);
    expect_error(
        run(
            &batch,
            &mut StepOutputs {
                conv1d_nums: Some(nums.view_mut()),
                ..Default::default()
            },
        ),
        Status::InvalidArgument,
        "cattn::StepPlan::run: ",
    );
    assert!(untouched(&nums));
}

#[test]
fn runs_with_cuda_tensors_without_a_gpu() {
    if gpu_usable() {
        return;
    }
    let plan = StepPlan::new(&all_products(4, 64)).unwrap();
    let s = plan.shape();
    let e = plan.run(
        &StepBatch {
            query_start_loc: Some(dev_in(0, &[4])),
            seq_lens: Some(dev_in(1, &[3])),
            block_table: Some(dev_in(2, &[3, 16])),
            logits_indices: Some(dev_in(3, &[5])),
            num_logits_indices: Some(dev_in(4, &[1])),
            ..Default::default()
        },
        &mut StepOutputs {
            dcp_local_seq_lens: Some(dev_out(10, &[3, 2])),
            pcp_query_restore_idx: Some(dev_out(11, &[s.restore_capacity])),
            mamba_block_table: Some(dev_out(12, &[3, s.mamba_columns])),
            conv1d_nums: Some(dev_out(13, &[3])),
            conv1d_mlist: Some(dev_out(14, &[s.conv1d_capacity])),
            conv1d_offsetlist: Some(dev_out(15, &[s.conv1d_capacity])),
            conv1d_batch_ptr: Some(dev_out(16, &[s.conv1d_capacity])),
            conv1d_token_chunk_offset_ptr: Some(dev_out(17, &[s.conv1d_capacity])),
            local_query_start_loc: Some(dev_out(18, &[s.local_capacity + 1])),
            local_seq_lens: Some(dev_out(19, &[s.local_capacity])),
            local_num_computed_tokens: Some(dev_out(20, &[s.local_capacity])),
            local_block_table: Some(dev_out(21, &[s.local_capacity, s.local_pages])),
            decode_query_start_loc: Some(dev_out(22, &[4])),
            extend_query_start_loc: Some(dev_out(23, &[4])),
            extend_seq_lens: Some(dev_out(24, &[3])),
            counts: Some(dev_out(25, &[STEP_NUM_COUNTS as i64])),
            ..Default::default()
        },
        Stream::DEFAULT,
    );
    expect_no_gpu(e, "cattn_step_plan_run");
}

#[test]
fn the_device_calls_refuse_host_tensors() {
    let qsl = HostInts::of(&[0, 10, 16, 17], Int::I64, 1);
    let mut nums = HostInts::new(&[3], Int::I32, 1);
    let mut mlist = HostInts::new(&[8], Int::I32, 1);
    let mut tot = HostInts::new(&[1], Int::I64, 1);
    let e = expect_error(
        compute_causal_conv1d_metadata_capturable(
            &qsl.view(),
            8,
            &mut CausalConv1dCapturableOutputs {
                nums: Some(nums.view_mut()),
                mlist: Some(mlist.view_mut()),
                tot: Some(tot.view_mut()),
                ..Default::default()
            },
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::compute_causal_conv1d_metadata_capturable: query_start_loc is not device memory",
    );
    assert!(
        e.message()
            .contains("cattn_compute_causal_conv1d_metadata)"),
        "the message points to the host call: {e}"
    );
    assert!(untouched(&nums) && untouched(&mlist) && untouched(&tot));
    // Its own checks come first: block_m, and tot of one entry.
    expect_error(
        compute_causal_conv1d_metadata_capturable(
            &qsl.view(),
            0,
            &mut CausalConv1dCapturableOutputs::default(),
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::compute_causal_conv1d_metadata_capturable: block_m is out of range",
    );

    let (q, s) = (
        HostInts::of(&[0, 4, 14, 19], Int::I32, 1),
        HostInts::of(&[6, 17, 9], Int::I32, 1),
    );
    let table = HostInts::shaped(&(0..27).collect::<Vec<_>>(), &[3, 9], Int::I64, 1);
    let mut qo = HostInts::new(&[9], Int::I32, 1);
    let mut so = HostInts::new(&[8], Int::I32, 1);
    let mut co = HostInts::new(&[8], Int::I32, 1);
    let mut bo = HostInts::new(&[8, 2], Int::I64, 1);
    let mut counts = HostInts::new(&[3], Int::I32, 1);
    let mut args = LocalAttentionCapturableArgs {
        attn_chunk_size: 4,
        block_size: 2,
        query_start_loc: q.view(),
        seq_lens: s.view(),
        block_table: table.view(),
        stream: Stream::DEFAULT,
    };
    let mut run = |args: &LocalAttentionCapturableArgs<'_>| {
        make_local_attention_virtual_batches_capturable(
            args,
            &mut LocalAttentionCapturableOutputs {
                query_start_loc_out: qo.view_mut(),
                seq_lens_out: so.view_mut(),
                num_computed_tokens_out: Some(co.view_mut()),
                block_table_out: Some(bo.view_mut()),
                counts: Some(counts.view_mut()),
            },
        )
    };
    let e = expect_error(
        run(&args),
        Status::InvalidArgument,
        "cattn::make_local_attention_virtual_batches_capturable: args.query_start_loc is not device \
         memory",
    );
    assert!(e.message().contains("the plan calls"), "{e}");
    args.block_size = 3;
    expect_error(
        run(&args),
        Status::InvalidArgument,
        "args.block_size does not divide args->attn_chunk_size",
    );
    for t in [&qo, &so, &co, &bo, &counts] {
        assert!(untouched(t));
    }
}

#[test]
fn the_device_calls_with_cuda_tensors_without_a_gpu() {
    if gpu_usable() {
        return;
    }
    let e = compute_causal_conv1d_metadata_capturable(
        &dev_in(0, &[4]),
        8,
        &mut CausalConv1dCapturableOutputs {
            nums: Some(dev_out(1, &[3])),
            mlist: Some(dev_out(2, &[16])),
            offsetlist: Some(dev_out(3, &[16])),
            batch_ptr: Some(dev_out(4, &[16])),
            token_chunk_offset_ptr: Some(dev_out(5, &[16])),
            tot: Some(dev_out(6, &[1])),
        },
        Stream::DEFAULT,
    );
    expect_no_gpu(e, "cattn_compute_causal_conv1d_metadata_capturable");
    let e = make_local_attention_virtual_batches_capturable(
        &LocalAttentionCapturableArgs {
            attn_chunk_size: 4,
            block_size: 2,
            query_start_loc: dev_in(0, &[4]),
            seq_lens: dev_in(1, &[3]),
            block_table: dev_in(2, &[3, 9]),
            stream: Stream::DEFAULT,
        },
        &mut LocalAttentionCapturableOutputs {
            query_start_loc_out: dev_out(3, &[9]),
            seq_lens_out: dev_out(4, &[8]),
            num_computed_tokens_out: Some(dev_out(5, &[8])),
            block_table_out: Some(dev_out(6, &[8, 2])),
            counts: Some(dev_out(7, &[3])),
        },
    );
    expect_no_gpu(e, "cattn_make_local_attention_virtual_batches_capturable");
}

/// One plan run from several threads at once (allowed by the header); on the host every run is
/// refused the same way, each thread with its own message.
#[test]
fn a_step_plan_is_shared_across_threads() {
    let plan = StepPlan::new(&StepPlanDesc {
        products: StepProducts::EXTEND_QUERIES,
        ..all_products(4, 64)
    })
    .unwrap();
    std::thread::scope(|scope| {
        for t in 0..4i64 {
            let plan = &plan;
            scope.spawn(move || {
                for i in 0..200 {
                    let qsl = HostInts::of(&[0, t + i], Int::I32, 1);
                    let seq = HostInts::of(&[t + i], Int::I32, 1);
                    let mut q = HostInts::new(&[2], Int::I32, 1);
                    let mut s = HostInts::new(&[1], Int::I32, 1);
                    let e = plan
                        .run(
                            &StepBatch {
                                query_start_loc: Some(qsl.view()),
                                seq_lens: Some(seq.view()),
                                ..Default::default()
                            },
                            &mut StepOutputs {
                                extend_query_start_loc: Some(q.view_mut()),
                                extend_seq_lens: Some(s.view_mut()),
                                ..Default::default()
                            },
                            Stream::DEFAULT,
                        )
                        .unwrap_err();
                    assert!(e.message().contains("not device memory"), "{e}");
                    assert!(untouched(&q) && untouched(&s));
                }
            });
        }
    });
    // Moved to another thread and dropped there.
    std::thread::spawn(move || drop(plan)).join().unwrap();
}
