// SPDX-License-Identifier: Apache-2.0
//! The step inputs of 1.2 (prepare_pos_seq_lens, gather_block_tables, compute_slot_mappings,
//! combine_sampled_and_draft_tokens, step_batch_check) and the step plan's 1.2 fields: each
//! call on host tensors of both index dtypes, compact and strided, against values computed by
//! hand from the header's rules; a refused argument named in Rust terms; the one-call helpers;
//! and CUDA-labelled tensors on a machine without a GPU (skipped where one is usable).
//!
//! One batch runs through all of them: B = 3 rows, the first 2 live (num_reqs 2), row 2
//! padding; persistent rows R = 3 with num_computed_tokens [5, 0, 7]; idx_mapping [2, 0, 9]
//! (row 2's 9 is outside the persistent rows, and never read); num_scheduled [3, 1, 4] (row
//! 2's 4 never read). Then query_start_loc [0, 3, 4, 4], seq_lens [7 + 3, 5 + 1, 0] = [10, 6,
//! 0], positions [7, 8, 9, 5] and 0 past the 4 live tokens.

mod support;

use std::ffi::c_void;

use cattn::*;
use support::{expect_error, HostInts, Int, BOTH, POISON};

const NUM_SCHEDULED: [i64; 3] = [3, 1, 4];
const IDX: [i64; 3] = [2, 0, 9];
const NCT: [i64; 3] = [5, 0, 7];
const QSL: [i64; 4] = [0, 3, 4, 4];
const SEQ: [i64; 3] = [10, 6, 0];
/// The positions of a 6-entry buffer: the 4 live tokens, then 0.
const POS: [i64; 6] = [7, 8, 9, 5, 0, 0];
/// The persistent table, R = 3 rows of W = 4 kernel blocks.
const TABLE: [i64; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13];

/// Views of `values` in `dtype`, compact (step 1) and strided (step 2).
fn layouts() -> Vec<(Int, i64)> {
    BOTH.iter().flat_map(|&d| [(d, 1), (d, 2)]).collect()
}

fn gpu_usable() -> bool {
    cuda_device_count().unwrap() != 0
}

fn expect_no_gpu(result: Result<()>, function: &str) {
    let e = result.unwrap_err();
    assert_eq!(e.status(), Status::NotSupported, "{e}");
    assert!(e.message().starts_with(&format!("{function}: ")), "{e}");
}

#[test]
fn prepare_pos_seq_lens_pads_rows_past_num_reqs() {
    for (dtype, step) in layouts() {
        let sched = HostInts::of(&NUM_SCHEDULED, dtype, step);
        let idx = HostInts::of(&IDX, dtype, step);
        let nct = HostInts::of(&NCT, dtype, step);
        let live = HostInts::of(&[2], dtype.other(), 1);
        let mut qsl = HostInts::new(&[4], dtype, step);
        let mut seq = HostInts::new(&[3], dtype, step);
        let mut pos = HostInts::new(&[6], dtype, step);
        let mut bnct = HostInts::new(&[3], dtype, step);
        prepare_pos_seq_lens(
            &PreparePosSeqLensArgs {
                num_scheduled_tokens: sched.view(),
                idx_mapping: idx.view(),
                num_computed_tokens: nct.view(),
                num_reqs: Some(live.view()),
                stream: Stream::DEFAULT,
            },
            &mut PreparePosSeqLensOutputs {
                query_start_loc: qsl.view_mut(),
                seq_lens: seq.view_mut(),
                positions: Some(pos.view_mut()),
                batch_num_computed_tokens: Some(bnct.view_mut()),
            },
        )
        .unwrap();
        let what = format!("{dtype:?} step {step}");
        assert_eq!(qsl.values(), QSL, "{what}");
        assert_eq!(seq.values(), SEQ, "{what}");
        assert_eq!(pos.values(), POS, "{what}");
        assert_eq!(bnct.values(), [7, 5, 0], "{what}");
        if step > 1 {
            // The gaps between strided elements are not written.
            let gaps = qsl.storage_values();
            assert!(gaps.iter().skip(1).step_by(2).all(|&v| v == POISON));
        }
    }
    // Without num_reqs every row is live: row 2 (persistent row 1, 0 computed) too.
    let s =
        prepare_pos_seq_lens_host(&[3i32, 1, 4], &[2, 0, 1], &NCT.map(|v| v as i32), None).unwrap();
    assert_eq!(s.query_start_loc, [0, 3, 4, 8]);
    assert_eq!(s.seq_lens, [10, 6, 4]);
    assert_eq!(s.positions, [7, 8, 9, 5, 0, 1, 2, 3]);
    assert_eq!(s.num_computed_tokens, [7, 5, 0]);
}

#[test]
fn prepare_pos_seq_lens_host_helper() {
    let s = prepare_pos_seq_lens_host(&NUM_SCHEDULED, &IDX, &NCT, Some(2)).unwrap();
    assert_eq!(
        s,
        StepInputs {
            query_start_loc: QSL.to_vec(),
            seq_lens: SEQ.to_vec(),
            positions: POS[..4].to_vec(),
            num_computed_tokens: vec![7, 5, 0],
        }
    );
    // num_reqs 0: no live row.
    let none = prepare_pos_seq_lens_host(&[3i32, 1, 4], &[2, 0, 9], &[5, 0, 7], Some(0)).unwrap();
    assert_eq!(none.query_start_loc, [0, 0, 0, 0]);
    assert_eq!(none.seq_lens, [0, 0, 0]);
    assert!(none.positions.is_empty());
}

#[test]
fn prepare_pos_seq_lens_refuses_a_row_outside_the_persistent_state() {
    // A live row mapped to persistent row 3 of 3.
    let e = expect_error(
        prepare_pos_seq_lens_host(&[3i64, 1, 4], &[3, 0, 9], &NCT, Some(2)),
        Status::InvalidArgument,
        "cattn::prepare_pos_seq_lens_host: idx_mapping",
    );
    assert!(
        e.c_message()
            .starts_with("cattn_prepare_pos_seq_lens: args->idx_mapping"),
        "{e:?}"
    );
    // The tensor form names the field, and an output too short for the total.
    let (sched, idx, nct) = ([3i32, 1, 4], [2i32, 0, 9], [5i32, 0, 7]);
    let live = [2i64];
    let (mut qsl, mut seq, mut pos) = ([0i32; 4], [0i32; 3], [0i32; 3]);
    expect_error(
        prepare_pos_seq_lens(
            &PreparePosSeqLensArgs {
                num_scheduled_tokens: TensorRef::from_slice(&sched),
                idx_mapping: TensorRef::from_slice(&idx),
                num_computed_tokens: TensorRef::from_slice(&nct),
                num_reqs: Some(TensorRef::from_slice(&live)),
                stream: Stream::DEFAULT,
            },
            &mut PreparePosSeqLensOutputs {
                query_start_loc: TensorMut::from_slice(&mut qsl),
                seq_lens: TensorMut::from_slice(&mut seq),
                positions: Some(TensorMut::from_slice(&mut pos)),
                batch_num_computed_tokens: None,
            },
        ),
        Status::InsufficientSize,
        "cattn::prepare_pos_seq_lens: out.positions",
    );
}

#[test]
fn gather_block_tables_copies_the_rows_in_use() {
    let used = [4i64, 1, 2]; // per persistent row
    for (dtype, step) in layouts() {
        let idx = HostInts::of(&IDX, dtype, step);
        let table = HostInts::shaped(&TABLE, &[3, 4], dtype, step);
        let blocks = HostInts::of(&used, dtype, step);
        let live = HostInts::of(&[2], Int::I64, 1);
        let mut out = HostInts::new(&[3, 4], dtype, step);
        gather_block_tables(
            &GatherBlockTablesArgs {
                idx_mapping: idx.view(),
                num_reqs: Some(live.view()),
                block_table: table.view(),
                num_blocks: Some(blocks.view()),
                stream: Stream::DEFAULT,
            },
            &mut out.view_mut(),
        )
        .unwrap();
        // Row 0: persistent row 2, 2 blocks in use (the rest left alone); row 1: persistent
        // row 0, all 4; row 2: padding, zero across the width.
        let p = POISON;
        assert_eq!(
            out.values(),
            [10, 11, p, p, 1, 2, 3, 4, 0, 0, 0, 0],
            "{dtype:?} step {step}"
        );
    }
    let table = [[1i32, 2, 3, 4], [5, 6, 7, 8], [10, 11, 12, 13]];
    assert_eq!(
        gather_block_tables_host(&[2, 0, 9], Some(2), &table, None).unwrap(),
        [[10, 11, 12, 13], [1, 2, 3, 4], [0, 0, 0, 0]]
    );
    assert_eq!(
        gather_block_tables_host(&[2, 0, 9], Some(2), &table, Some(&[4, 1, 2])).unwrap(),
        [[10, 11, 0, 0], [1, 2, 3, 4], [0, 0, 0, 0]]
    );
}

#[test]
fn gather_block_tables_refuses_its_arguments_by_name() {
    let table = [[1i64, 2, 3, 4], [5, 6, 7, 8], [10, 11, 12, 13]];
    expect_error(
        gather_block_tables_host(&[2, 3, 0], None, &table, None),
        Status::InvalidArgument,
        "cattn::gather_block_tables_host: idx_mapping",
    );
    expect_error(
        gather_block_tables_host(&[0], None, &[vec![1i64, 2], vec![3]], None),
        Status::InvalidArgument,
        "cattn::gather_block_tables_host: block_table[1] is not as long as the first row",
    );
    // An output of another width than the table.
    let (idx, flat) = ([0i32], [1i32, 2, 3, 4]);
    let mut out = [0i32; 3];
    expect_error(
        gather_block_tables(
            &GatherBlockTablesArgs {
                idx_mapping: TensorRef::from_slice(&idx),
                num_reqs: None,
                block_table: TensorRef::new(&flat, &[1, 4]).unwrap(),
                num_blocks: None,
                stream: Stream::DEFAULT,
            },
            &mut TensorMut::new(&mut out, &[1, 3]).unwrap(),
        ),
        Status::InsufficientSize,
        "cattn::gather_block_tables: out has the wrong size",
    );
}

fn kbs4() -> SlotMappingParams {
    SlotMappingParams {
        block_size: 4,
        kernel_block_size: 4,
        ..Default::default()
    }
}

/// The size query counts what the calls write: from the scheduled counts or a
/// query_start_loc, with the calls' refusals, named in Rust terms (its own, or a helper's that
/// sized with it).
#[test]
fn step_inputs_size_counts_the_live_rows() {
    for (dtype, step) in layouts() {
        let sched = HostInts::of(&[3, 1, 4, 9], dtype, step);
        let drafts = HostInts::of(&[2, 0, 3, 7], dtype, step);
        let live = HostInts::of(&[3], dtype, 1);
        let n = step_inputs_size(&StepInputsSizeArgs {
            num_scheduled_tokens: Some(sched.view()),
            num_reqs: Some(live.view()),
            num_draft_tokens: Some(drafts.view()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            n,
            StepInputsSize {
                num_tokens: 8,
                num_logits: 8
            },
            "{dtype:?} step {step}"
        );
        let qsl = HostInts::of(&[0, 3, 4, 8, 17], dtype, step);
        let n = step_inputs_size(&StepInputsSizeArgs {
            num_new_sampled_tokens: Some(0),
            query_start_loc: Some(qsl.view()),
            num_draft_tokens: Some(drafts.view()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            (n.num_tokens, n.num_logits),
            (17, 12),
            "{dtype:?} step {step}"
        );
    }
    let qsl = [0i64, 3, 4];
    let big = [3i64];
    let e = step_inputs_size(&StepInputsSizeArgs {
        query_start_loc: Some(TensorRef::from_slice(&qsl)),
        num_reqs: Some(TensorRef::from_slice(&big)),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .starts_with("cattn::step_inputs_size: args.num_reqs is out of range"),
        "{e}"
    );
    assert!(
        e.c_message()
            .starts_with("cattn_step_inputs_size: args->num_reqs "),
        "{e:?}"
    );
    let e = step_inputs_size(&StepInputsSizeArgs::default()).unwrap_err();
    assert!(
        e.message()
            .starts_with("cattn::step_inputs_size: args.num_scheduled_tokens is NULL"),
        "{e}"
    );
    let e =
        combine_sampled_and_draft_tokens_host(None, &qsl, None, Some(&[0, -1]), None).unwrap_err();
    assert!(
        e.message().starts_with(
            "cattn::combine_sampled_and_draft_tokens_host: num_draft_tokens is negative"
        ),
        "{e}"
    );
}

#[test]
fn compute_slot_mappings_mrv2_and_v1() {
    for (dtype, step) in layouts() {
        let qsl = HostInts::of(&QSL, dtype, step);
        let pos = HostInts::of(&POS, dtype, step);
        let idx = HostInts::of(&IDX, dtype, step);
        let table = HostInts::shaped(&TABLE, &[3, 4], dtype, step);
        let live = HostInts::of(&[2], dtype, 1);
        let mut slots = HostInts::new(&[6], Int::I64, step);
        compute_slot_mappings(
            &ComputeSlotMappingsArgs {
                params: kbs4(),
                query_start_loc: qsl.view(),
                num_reqs: Some(live.view()),
                positions: pos.view(),
                idx_mapping: Some(idx.view()),
                block_table: table.view(),
                stream: Stream::DEFAULT,
            },
            &mut slots.view_mut(),
        )
        .unwrap();
        // Row 0 (persistent row 2 = [10, 11, 12, 13]): positions 7, 8, 9 are in kernel blocks
        // 1, 2, 2: 11 * 4 + 3, 12 * 4 + 0, 12 * 4 + 1. Row 1 (row 0 = [1, 2, 3, 4]): position
        // 5 in block 1: 2 * 4 + 1. Then -1 from the live total on.
        assert_eq!(
            slots.values(),
            [47, 48, 49, 9, -1, -1],
            "{dtype:?} step {step}"
        );
    }
    // The helper returns the live tokens' slots only (the total step_inputs_size counts).
    let table = [[1i32, 2, 3, 4], [5, 6, 7, 8], [10, 11, 12, 13]];
    let qsl = QSL.map(|v| v as i32);
    let pos = POS.map(|v| v as i32);
    assert_eq!(
        compute_slot_mappings_host(&kbs4(), &qsl, Some(2), &pos, Some(&[2, 0, 9]), &table).unwrap(),
        [47, 48, 49, 9]
    );
    // Two DCP ranks, interleave 1, rank 1: positions split into blocks of 4 * 2 tokens; in a
    // block, offset `off` belongs to rank off % 2 at local offset off / 2. Position 7: block 0,
    // offset 7, rank 1, local 3: 10 * 4 + 3. Position 8: block 1, offset 0, rank 0: -1.
    // Position 9: block 1, offset 1, local 0: 11 * 4. Position 5 of row 1: block 0, offset 5,
    // local 2: 1 * 4 + 2.
    let dcp = SlotMappingParams {
        dcp_size: 2,
        dcp_rank: 1,
        ..kbs4()
    };
    assert_eq!(
        compute_slot_mappings_host(&dcp, &qsl, Some(2), &pos, Some(&[2, 0, 9]), &table).unwrap(),
        [43, -1, 44, 6]
    );
    // v1: the table's rows are the batch's (the rows gathered above), no idx_mapping.
    let v1 = SlotMappingParams {
        contract: SlotMappingContract::V1,
        ..kbs4()
    };
    let batch_table = [[10i32, 11, 12, 13], [1, 2, 3, 4], [0, 0, 0, 0]];
    assert_eq!(
        compute_slot_mappings_host(&v1, &qsl, Some(2), &pos, None, &batch_table).unwrap(),
        [47, 48, 49, 9]
    );
}

#[test]
fn compute_slot_mappings_refuses_its_parameters_by_name() {
    let table = [[1i64, 2, 3, 4], [5, 6, 7, 8], [10, 11, 12, 13]];
    let bad_rank = SlotMappingParams {
        dcp_size: 2,
        dcp_rank: 2,
        ..kbs4()
    };
    expect_error(
        compute_slot_mappings_host(&bad_rank, &QSL, Some(2), &POS, Some(&IDX), &table),
        Status::InvalidArgument,
        "cattn::compute_slot_mappings_host: params.dcp_rank",
    );
    let bad_contract = SlotMappingParams {
        contract: SlotMappingContract::from_raw(7),
        ..kbs4()
    };
    expect_error(
        compute_slot_mappings_host(&bad_contract, &QSL, Some(2), &POS, Some(&IDX), &table),
        Status::InvalidArgument,
        "cattn::compute_slot_mappings_host: params.contract",
    );
    // v1 takes no idx_mapping.
    let v1 = SlotMappingParams {
        contract: SlotMappingContract::V1,
        ..kbs4()
    };
    expect_error(
        compute_slot_mappings_host(&v1, &QSL, Some(2), &POS, Some(&IDX), &table),
        Status::InvalidArgument,
        "cattn::compute_slot_mappings_host: idx_mapping",
    );
    // The tensor form names the params' field.
    let (qsl, pos, idx, flat) = ([0i64, 1], [0i64], [0i64], [1i64, 2, 3, 4]);
    let mut slots = [0i64; 1];
    expect_error(
        compute_slot_mappings(
            &ComputeSlotMappingsArgs {
                params: SlotMappingParams::default(), // block sizes 0: to be set
                query_start_loc: TensorRef::from_slice(&qsl),
                num_reqs: None,
                positions: TensorRef::from_slice(&pos),
                idx_mapping: Some(TensorRef::from_slice(&idx)),
                block_table: TensorRef::new(&flat, &[1, 4]).unwrap(),
                stream: Stream::DEFAULT,
            },
            &mut TensorMut::from_slice(&mut slots),
        ),
        Status::InvalidArgument,
        "cattn::compute_slot_mappings: args.params.",
    );
}

#[test]
fn slot_mapping_defaults_are_the_headers() {
    let init = sys::CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
    let p = SlotMappingParams::default();
    assert_eq!(p.contract.raw(), init.contract);
    assert_eq!(p.contract, SlotMappingContract::MRV2);
    assert_eq!(
        (p.block_size, p.kernel_block_size),
        (init.block_size, init.kernel_block_size)
    );
    assert_eq!(
        (p.dcp_size, p.dcp_rank, p.dcp_kv_cache_interleave_size),
        (1, 0, 1)
    );
    assert_eq!(SlotMode::default(), SlotMode::TOKEN_TO_KV_SLOT);
    assert_eq!(format!("{:?}", SlotMode::from_raw(5)), "SlotMode(5)");
    assert_eq!(
        CombineSampledAndDraftTokensArgs::new(TensorRef::from_slice(&[0i32]))
            .num_new_sampled_tokens,
        None
    );
    assert_eq!(
        sys::CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT.num_new_sampled_tokens,
        1
    );
}

#[test]
fn combine_sampled_and_draft_tokens_logits() {
    for (dtype, step) in layouts() {
        let qsl = HostInts::of(&QSL, dtype, step);
        let drafts = HostInts::of(&[2, 0, 5], dtype, step); // row 2's 5 never read
        let idx = HostInts::of(&IDX, dtype, step);
        let live = HostInts::of(&[2], dtype, 1);
        let mut logits = HostInts::new(&[6], dtype, step);
        let mut cu = HostInts::new(&[4], dtype, step);
        let mut expanded = HostInts::new(&[6], dtype, step);
        let mut local = HostInts::new(&[6], dtype, step);
        combine_sampled_and_draft_tokens(
            &CombineSampledAndDraftTokensArgs {
                num_reqs: Some(live.view()),
                num_draft_tokens: Some(drafts.view()),
                idx_mapping: Some(idx.view()),
                ..CombineSampledAndDraftTokensArgs::new(qsl.view())
            },
            &mut CombineSampledAndDraftTokensOutputs {
                logits_indices: logits.view_mut(),
                cu_num_logits: Some(cu.view_mut()),
                expanded_idx_mapping: Some(expanded.view_mut()),
                expanded_local_pos: Some(local.view_mut()),
                input_ids: None,
            },
        )
        .unwrap();
        // Row 0 owns 1 + 2 logits, the last 3 tokens of its query [0, 3); row 1 owns 1, token
        // 3; row 2 none. 0 past the 4 logits.
        let what = format!("{dtype:?} step {step}");
        assert_eq!(logits.values(), [0, 1, 2, 3, 0, 0], "{what}");
        assert_eq!(cu.values(), [0, 3, 4, 4], "{what}");
        assert_eq!(expanded.values(), [2, 2, 2, 0, 0, 0], "{what}");
        assert_eq!(local.values(), [0, 1, 2, 0, 0, 0], "{what}");
    }
    // No new sampled token: row 0 owns its 2 drafts' logits, tokens 1 and 2; row 1 none.
    let l = combine_sampled_and_draft_tokens_host(Some(0), &QSL, Some(2), Some(&[2, 0, 5]), None)
        .unwrap();
    assert_eq!(l.logits_indices, [1, 2]);
    assert_eq!(l.cu_num_logits, [0, 2, 2, 2]);
    assert_eq!(l.expanded_local_pos, [0, 1]);
    assert!(l.expanded_idx_mapping.is_empty());
    // The default: one new sampled token per live row.
    let l = combine_sampled_and_draft_tokens_host(
        None,
        &[0i32, 3, 4, 4],
        Some(2),
        None,
        Some(&[2, 0, 9]),
    )
    .unwrap();
    assert_eq!(l.logits_indices, [2, 3]);
    assert_eq!(l.cu_num_logits, [0, 1, 2, 2]);
    assert_eq!(l.expanded_idx_mapping, [2, 0]);
}

#[test]
fn combine_sampled_and_draft_tokens_input_ids() {
    // Row 0 (persistent row 2) is past its prompt of 5 (seq_len 10), and so is its first
    // logit (position 7): token 0 gets its last sampled token, tokens 1 and 2 its 2 drafts.
    // Row 1 (persistent row 0) ends its prompt (seq_len 6 = prefill 6): nothing written.
    let (qsl, drafts, idx, seq) = ([0i64, 3, 4, 4], [2i64, 0, 0], [2i64, 0, 9], [10i64, 6, 0]);
    let prefill = [6i64, 1, 5];
    let last = [500i64, 501, 502];
    let draft_tokens = [600i64, 601, 610, 611, 620, 621];
    let live = [2i64];
    let mut logits = [0i64; 4];
    let mut ids = [100i64, 101, 102, 103];
    combine_sampled_and_draft_tokens(
        &CombineSampledAndDraftTokensArgs {
            num_reqs: Some(TensorRef::from_slice(&live)),
            num_draft_tokens: Some(TensorRef::from_slice(&drafts)),
            idx_mapping: Some(TensorRef::from_slice(&idx)),
            seq_lens: Some(TensorRef::from_slice(&seq)),
            prefill_len: Some(TensorRef::from_slice(&prefill)),
            last_sampled_tokens: Some(TensorRef::from_slice(&last)),
            draft_tokens: Some(TensorRef::new(&draft_tokens, &[3, 2]).unwrap()),
            ..CombineSampledAndDraftTokensArgs::new(TensorRef::from_slice(&qsl))
        },
        &mut CombineSampledAndDraftTokensOutputs {
            logits_indices: TensorMut::from_slice(&mut logits),
            cu_num_logits: None,
            expanded_idx_mapping: None,
            expanded_local_pos: None,
            input_ids: Some(TensorMut::from_slice(&mut ids)),
        },
    )
    .unwrap();
    assert_eq!(logits, [0, 1, 2, 3]);
    assert_eq!(ids, [502, 620, 621, 103]);
}

#[test]
fn combine_sampled_and_draft_tokens_refuses_its_arguments_by_name() {
    expect_error(
        combine_sampled_and_draft_tokens_host(Some(2), &QSL, Some(2), None, None),
        Status::InvalidArgument,
        "cattn::combine_sampled_and_draft_tokens_host: num_new_sampled_tokens",
    );
    let qsl = [0i32, 3];
    let mut logits = [0i32; 3];
    expect_error(
        combine_sampled_and_draft_tokens(
            &CombineSampledAndDraftTokensArgs {
                num_new_sampled_tokens: Some(-1),
                ..CombineSampledAndDraftTokensArgs::new(TensorRef::from_slice(&qsl))
            },
            &mut CombineSampledAndDraftTokensOutputs {
                logits_indices: TensorMut::from_slice(&mut logits),
                cu_num_logits: None,
                expanded_idx_mapping: None,
                expanded_local_pos: None,
                input_ids: None,
            },
        ),
        Status::InvalidArgument,
        "cattn::combine_sampled_and_draft_tokens: args.num_new_sampled_tokens",
    );
}

#[test]
fn step_batch_check_reports_the_first_defect() {
    let (qsl, seq, live) = (QSL, SEQ, [2i64]);
    let good_table = [10i64, 11, 12, 13, 1, 2, 3, 4, 0, 0, 0, 0];
    let bad_table = [10i64, 11, 12, 13, 1, 2, 3, 4, 0, 5, 0, 0];
    let slots = [47i64, 48, 49, 9, -1, -1];
    let bad_slots = [47i64, 48, 49, 9, 3, -1];
    let check = |table1: &[i64], slots0: &[i64], live: &[i64]| {
        let mut args = StepBatchCheckArgs {
            num_reqs: Some(TensorRef::from_slice(live)),
            seq_lens: Some(TensorRef::from_slice(&seq)),
            ..StepBatchCheckArgs::new(TensorRef::from_slice(&qsl))
        };
        args.block_tables[0] = Some(TensorRef::new(&good_table, &[3, 4]).unwrap());
        args.block_tables[1] = Some(TensorRef::new(table1, &[3, 4]).unwrap());
        args.slot_mappings[0] = Some(TensorRef::from_slice(slots0));
        step_batch_check_host(&args).unwrap()
    };
    let ok = check(&good_table, &slots, &live);
    assert!(ok.is_ok(), "{ok:?}");
    assert_eq!((ok.index, ok.group), (0, 0));
    let r = check(&bad_table, &slots, &live);
    assert_eq!(
        r,
        StepCheckReport {
            field: StepCheckField::BLOCK_TABLE,
            index: 2,
            group: 1
        }
    );
    let r = check(&good_table, &bad_slots, &live);
    assert_eq!(
        r,
        StepCheckReport {
            field: StepCheckField::SLOT_MAPPING,
            index: 4,
            group: 0
        }
    );
    // num_reqs past B comes first.
    let r = check(&bad_table, &bad_slots, &[4]);
    assert_eq!(r.field, StepCheckField::NUM_REQS, "{r:?}");
    // A padded query_start_loc entry that is not the total; the tensor form, int32 status.
    let bad_qsl = [0i32, 3, 4, 5];
    let mut status = [POISON as i32; 3];
    step_batch_check(
        &StepBatchCheckArgs {
            num_reqs: Some(TensorRef::from_slice(&live)),
            ..StepBatchCheckArgs::new(TensorRef::from_slice(&bad_qsl))
        },
        &mut TensorMut::from_slice(&mut status),
    )
    .unwrap();
    assert_eq!(
        i64::from(status[0]),
        StepCheckField::QUERY_START_LOC.raw(),
        "{status:?}"
    );
    assert_eq!(
        format!("{:?}", StepCheckField::from_raw(2)),
        "StepCheckField::QUERY_START_LOC"
    );
}

#[test]
fn step_batch_check_refuses_its_arguments_by_name() {
    let slots = [1.0f32, 2.0, 3.0, 4.0];
    let mut args = StepBatchCheckArgs::new(TensorRef::from_slice(&[0i64, 3, 4, 4]));
    args.slot_mappings[2] = Some(TensorRef::from_slice(&slots));
    expect_error(
        step_batch_check_host(&args),
        Status::InvalidArgument,
        "cattn::step_batch_check_host: args.slot_mappings[2]",
    );
    let mut status = [0i64; 3];
    expect_error(
        step_batch_check(&args, &mut TensorMut::from_slice(&mut status)),
        Status::InvalidArgument,
        "cattn::step_batch_check: args.slot_mappings[2]",
    );
}

#[test]
fn the_step_inputs_with_cuda_tensors_without_a_gpu() {
    if gpu_usable() {
        return; // the fake addresses would reach a kernel
    }
    expect_no_gpu(
        prepare_pos_seq_lens(
            &PreparePosSeqLensArgs {
                num_scheduled_tokens: support::fake_cuda_in(DataType::I32, 0, &[3]),
                idx_mapping: support::fake_cuda_in(DataType::I32, 1, &[3]),
                num_computed_tokens: support::fake_cuda_in(DataType::I32, 2, &[3]),
                num_reqs: None,
                stream: Stream::DEFAULT,
            },
            &mut PreparePosSeqLensOutputs {
                query_start_loc: support::fake_cuda_out(DataType::I32, 3, &[4]),
                seq_lens: support::fake_cuda_out(DataType::I32, 4, &[3]),
                positions: None,
                batch_num_computed_tokens: None,
            },
        ),
        "cattn_prepare_pos_seq_lens",
    );
    expect_no_gpu(
        gather_block_tables(
            &GatherBlockTablesArgs {
                idx_mapping: support::fake_cuda_in(DataType::I32, 0, &[3]),
                num_reqs: None,
                block_table: support::fake_cuda_in(DataType::I32, 1, &[3, 4]),
                num_blocks: None,
                stream: Stream::DEFAULT,
            },
            &mut support::fake_cuda_out(DataType::I32, 2, &[3, 4]),
        ),
        "cattn_gather_block_tables",
    );
    // SAFETY: as dev_out; the slot mapping is int64.
    let mut slots = unsafe {
        TensorMut::from_raw_parts(
            (9 << 20) as *mut c_void,
            Device::Cuda(0),
            DataType::I64,
            &[6],
            None,
            0,
        )
    };
    expect_no_gpu(
        compute_slot_mappings(
            &ComputeSlotMappingsArgs {
                params: kbs4(),
                query_start_loc: support::fake_cuda_in(DataType::I32, 0, &[4]),
                num_reqs: None,
                positions: support::fake_cuda_in(DataType::I32, 1, &[6]),
                idx_mapping: Some(support::fake_cuda_in(DataType::I32, 2, &[3])),
                block_table: support::fake_cuda_in(DataType::I32, 3, &[3, 4]),
                stream: Stream::DEFAULT,
            },
            &mut slots,
        ),
        "cattn_compute_slot_mappings",
    );
    expect_no_gpu(
        combine_sampled_and_draft_tokens(
            &CombineSampledAndDraftTokensArgs::new(support::fake_cuda_in(DataType::I32, 0, &[4])),
            &mut CombineSampledAndDraftTokensOutputs {
                logits_indices: support::fake_cuda_out(DataType::I32, 1, &[6]),
                cu_num_logits: None,
                expanded_idx_mapping: None,
                expanded_local_pos: None,
                input_ids: None,
            },
        ),
        "cattn_combine_sampled_and_draft_tokens",
    );
    expect_no_gpu(
        step_batch_check(
            &StepBatchCheckArgs::new(support::fake_cuda_in(DataType::I32, 0, &[4])),
            &mut support::fake_cuda_out(DataType::I32, 1, &[3]),
        ),
        "cattn_step_batch_check",
    );
}

/// A desc of the step-input products: two groups, the second a Mamba group without slots.
fn inputs_desc() -> StepPlanDesc {
    let mut desc = StepPlanDesc {
        products: StepProducts::INPUTS
            | StepProducts::BLOCK_TABLES
            | StepProducts::SLOT_MAPPINGS
            | StepProducts::LOGITS_INDICES
            | StepProducts::TOKEN_TO_REQ
            | StepProducts::SPLIT,
        max_num_reqs: 4,
        max_num_tokens: 64,
        max_num_logits: 16,
        max_num_persistent_reqs: 8,
        inputs: StepInputsParams {
            num_kv_groups: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    desc.kv_groups[0] = KvGroupParams {
        block_size: 16,
        kernel_block_size: 16,
        max_num_blocks: 8,
        slot_mode: SlotMode::TOKEN_TO_KV_SLOT,
    };
    desc.kv_groups[1] = KvGroupParams {
        block_size: 32,
        kernel_block_size: 32,
        max_num_blocks: 4,
        slot_mode: SlotMode::NONE,
    };
    desc
}

#[test]
fn step_plan_inputs_desc_and_host_checks() {
    let plan = StepPlan::new(&inputs_desc()).unwrap();
    assert_eq!(plan.workspace_size(), 0);
    // The persistent rows are needed by the step inputs.
    expect_error(
        StepPlan::new(&StepPlanDesc {
            max_num_persistent_reqs: 0,
            ..inputs_desc()
        }),
        Status::InvalidArgument,
        "cattn::StepPlan::new: desc.max_num_persistent_reqs",
    );
    expect_error(
        StepPlan::new(&StepPlanDesc {
            inputs: StepInputsParams {
                num_kv_groups: MAX_KV_GROUPS as i32 + 1,
                ..inputs_desc().inputs
            },
            ..inputs_desc()
        }),
        Status::InvalidArgument,
        "cattn::StepPlan::new: desc.inputs.num_kv_groups",
    );
    // A run refuses host tensors, naming the 1.2 batch field.
    let (sched, idx, nct) = ([3i32, 1, 0, 0], [2i32, 0, 0, 0], [5i32; 8]);
    let mut batch = StepBatch {
        num_scheduled_tokens: Some(TensorRef::from_slice(&sched)),
        idx_mapping: Some(TensorRef::from_slice(&idx)),
        num_computed_tokens: Some(TensorRef::from_slice(&nct)),
        ..Default::default()
    };
    let table0 = [0i32; 64];
    let table1 = [0i32; 32];
    batch.kv_block_tables[0] = Some(TensorRef::new(&table0, &[8, 8]).unwrap());
    batch.kv_block_tables[1] = Some(TensorRef::new(&table1, &[8, 4]).unwrap());
    let e = plan
        .run(&batch, &mut StepOutputs::default(), Stream::DEFAULT)
        .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument, "{e}");
    assert!(e.message().starts_with("cattn::StepPlan::run: "), "{e}");
    assert!(
        e.message().contains("batch.") || e.message().contains("outputs."),
        "{e}"
    );
}

#[test]
fn step_plan_inputs_with_cuda_tensors_without_a_gpu() {
    if gpu_usable() {
        return;
    }
    // INPUTS alone reads no group: the desc names none.
    let plan = StepPlan::new(&StepPlanDesc {
        products: StepProducts::INPUTS,
        inputs: StepInputsParams::default(),
        kv_groups: Default::default(),
        ..inputs_desc()
    })
    .unwrap();
    let batch = StepBatch {
        num_scheduled_tokens: Some(support::fake_cuda_in(DataType::I32, 0, &[4])),
        idx_mapping: Some(support::fake_cuda_in(DataType::I32, 1, &[4])),
        num_computed_tokens: Some(support::fake_cuda_in(DataType::I32, 2, &[8])),
        ..Default::default()
    };
    let mut out = StepOutputs {
        query_start_loc: Some(support::fake_cuda_out(DataType::I32, 3, &[5])),
        seq_lens: Some(support::fake_cuda_out(DataType::I32, 4, &[4])),
        ..Default::default()
    };
    expect_no_gpu(
        plan.run(&batch, &mut out, Stream::DEFAULT),
        "cattn_step_plan_run",
    );
}

/// vLLM leaves these entries unwritten in the vectors; libcattn's padding contract writes them
/// (positions 0, slots -1).
const UNWRITTEN: i64 = -7777;

fn unwritten_as(values: &[i64], value: i64) -> Vec<i64> {
    values
        .iter()
        .map(|&v| if v == UNWRITTEN { value } else { v })
        .collect()
}

/// One case of tests/vectors/step_inputs.json through the five calls with index dtype
/// `dtype` (positions and slots int64), as tests/support/step_inputs_case.h runs it in C.
fn vector_case(c: &support::json::Json, dtype: Int) {
    let name = c.get("name").str();
    let what = format!("{name} {dtype:?}");
    let (b, r, t) = (c.get("B").i64(), c.get("R").i64(), c.get("T_cap").i64());
    let e = c.get("expected");
    let sched = HostInts::of(&c.get("num_scheduled_tokens").ints(), dtype, 1);
    let idx = HostInts::of(&c.get("idx_mapping").ints(), dtype, 1);
    let nct = HostInts::of(&c.get("num_computed_tokens").ints(), dtype, 1);
    let live = HostInts::of(&[c.get("num_reqs").i64()], dtype, 1);
    let mut qsl = HostInts::new(&[b + 1], dtype, 1);
    let mut seq = HostInts::new(&[b], dtype, 1);
    let mut pos = HostInts::new(&[t], Int::I64, 1);
    prepare_pos_seq_lens(
        &PreparePosSeqLensArgs {
            num_scheduled_tokens: sched.view(),
            idx_mapping: idx.view(),
            num_computed_tokens: nct.view(),
            num_reqs: Some(live.view()),
            stream: Stream::DEFAULT,
        },
        &mut PreparePosSeqLensOutputs {
            query_start_loc: qsl.view_mut(),
            seq_lens: seq.view_mut(),
            positions: Some(pos.view_mut()),
            batch_num_computed_tokens: None,
        },
    )
    .unwrap_or_else(|err| panic!("{what}: {err}"));
    assert_eq!(qsl.values(), e.get("query_start_loc").ints(), "{what}");
    assert_eq!(
        seq.values(),
        unwritten_as(&e.get("seq_lens").ints(), 0),
        "{what}"
    );
    assert_eq!(
        pos.values(),
        unwritten_as(&e.get("positions").ints(), 0),
        "{what}"
    );

    let dcp = c.get("dcp");
    let mut tables = Vec::new();
    let mut slot_mappings = Vec::new();
    for (g, grp) in c.get("groups").array().iter().enumerate() {
        let w = grp.get("table").array()[0].ints().len() as i64;
        let table = HostInts::shaped(&grp.get("table").flat_ints(), &[r, w], dtype, 1);
        let blocks = HostInts::of(&grp.get("num_blocks").ints(), dtype, 1);
        let mut gathered = HostInts::shaped(&grp.get("gather_init").flat_ints(), &[b, w], dtype, 1);
        gather_block_tables(
            &GatherBlockTablesArgs {
                idx_mapping: idx.view(),
                num_reqs: Some(live.view()),
                block_table: table.view(),
                num_blocks: Some(blocks.view()),
                stream: Stream::DEFAULT,
            },
            &mut gathered.view_mut(),
        )
        .unwrap_or_else(|err| panic!("{what} group {g}: {err}"));
        let want_table = e.get("block_tables").array()[g].flat_ints();
        assert_eq!(gathered.values(), want_table, "{what} group {g}");
        if grp.get("slot_mode").i64() != i64::from(SlotMode::TOKEN_TO_KV_SLOT.raw()) {
            tables.push(gathered);
            continue;
        }
        let batch_table = HostInts::shaped(&want_table, &[b, w], dtype, 1);
        for contract in [SlotMappingContract::MRV2, SlotMappingContract::V1] {
            let v1 = contract == SlotMappingContract::V1;
            let mut slots = HostInts::of(&vec![UNWRITTEN; t as usize], Int::I64, 1);
            compute_slot_mappings(
                &ComputeSlotMappingsArgs {
                    params: SlotMappingParams {
                        contract,
                        block_size: grp.get("block_size").i64(),
                        kernel_block_size: grp.get("kernel_block_size").i64(),
                        dcp_size: dcp.get("size").i64(),
                        dcp_rank: dcp.get("rank").i64(),
                        dcp_kv_cache_interleave_size: dcp.get("interleave").i64(),
                    },
                    query_start_loc: qsl.view(),
                    num_reqs: Some(live.view()),
                    positions: pos.view(),
                    idx_mapping: (!v1).then(|| idx.view()),
                    block_table: if v1 { batch_table.view() } else { table.view() },
                    stream: Stream::DEFAULT,
                },
                &mut slots.view_mut(),
            )
            .unwrap_or_else(|err| panic!("{what} group {g} {contract:?}: {err}"));
            let key = if v1 {
                "slot_mappings_v1"
            } else if e.has("slot_mappings_mrv2_int64")
                && !e.get("slot_mappings_mrv2_int64").array()[g].is_null()
            {
                "slot_mappings_mrv2_int64"
            } else {
                "slot_mappings_mrv2"
            };
            let want = unwritten_as(&e.get(key).array()[g].ints(), -1);
            assert_eq!(slots.values(), want, "{what} group {g} {key}");
            if !v1 {
                slot_mappings.push((g, slots));
            }
        }
        tables.push(gathered);
    }

    let logits = e.get("logits_indices").ints();
    let cap = logits.len() as i64 + 3;
    let drafts = HostInts::of(&c.get("num_draft_tokens").ints(), dtype, 1);
    let prefill = HostInts::of(&c.get("prefill_len").ints(), dtype, 1);
    let last = HostInts::of(&c.get("last_sampled_tokens").ints(), dtype, 1);
    let s = c.get("draft_tokens").array()[0].ints().len() as i64;
    let draft_tokens = HostInts::shaped(&c.get("draft_tokens").flat_ints(), &[r, s], dtype, 1);
    let mut ids = HostInts::of(&c.get("input_ids_init").ints(), dtype, 1);
    let mut li = HostInts::new(&[cap], Int::I64, 1);
    let mut cu = HostInts::new(&[b + 1], dtype, 1);
    let mut ei = HostInts::new(&[cap], dtype, 1);
    let mut ep = HostInts::new(&[cap], dtype, 1);
    combine_sampled_and_draft_tokens(
        &CombineSampledAndDraftTokensArgs {
            num_reqs: Some(live.view()),
            num_draft_tokens: Some(drafts.view()),
            idx_mapping: Some(idx.view()),
            seq_lens: Some(seq.view()),
            prefill_len: Some(prefill.view()),
            last_sampled_tokens: Some(last.view()),
            draft_tokens: Some(draft_tokens.view()),
            ..CombineSampledAndDraftTokensArgs::new(qsl.view())
        },
        &mut CombineSampledAndDraftTokensOutputs {
            logits_indices: li.view_mut(),
            cu_num_logits: Some(cu.view_mut()),
            expanded_idx_mapping: Some(ei.view_mut()),
            expanded_local_pos: Some(ep.view_mut()),
            input_ids: Some(ids.view_mut()),
        },
    )
    .unwrap_or_else(|err| panic!("{what}: {err}"));
    let padded = |key: &str| {
        let mut v = e.get(key).ints();
        v.resize(cap as usize, 0);
        v
    };
    assert_eq!(li.values(), padded("logits_indices"), "{what}");
    assert_eq!(ei.values(), padded("expanded_idx_mapping"), "{what}");
    assert_eq!(ep.values(), padded("expanded_local_pos"), "{what}");
    let mut cu_want = e.get("cu_num_logits").ints();
    let total = *cu_want.last().unwrap();
    cu_want.resize(b as usize + 1, total);
    assert_eq!(cu.values(), cu_want, "{what}");
    assert_eq!(ids.values(), e.get("input_ids").ints(), "{what}");

    // The outputs keep the padding contract, every group's table and slots included.
    let mut args = StepBatchCheckArgs {
        num_reqs: Some(live.view()),
        seq_lens: Some(seq.view()),
        ..StepBatchCheckArgs::new(qsl.view())
    };
    for (g, table) in tables.iter().enumerate() {
        args.block_tables[g] = Some(table.view());
    }
    for (g, slots) in &slot_mappings {
        args.slot_mappings[*g] = Some(slots.view());
    }
    let report = step_batch_check_host(&args).unwrap_or_else(|err| panic!("{what}: {err}"));
    assert!(report.is_ok(), "{what}: {report:?}");
}

/// Every case of vLLM's MRV2 and v1 vectors, int64 and (where the values fit) int32.
#[test]
fn step_inputs_vectors() {
    let cases = support::load_cases("step_inputs");
    assert!(cases.len() >= 50);
    for c in &cases {
        vector_case(c, Int::I64);
        if !(c.has("mrv2_wraps") && c.get("mrv2_wraps").bool()) {
            vector_case(c, Int::I32);
        }
    }
}
