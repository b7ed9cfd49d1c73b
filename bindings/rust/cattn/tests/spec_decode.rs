// SPDX-License-Identifier: Apache-2.0
//! The speculative-decoding calls of 1.2 (eagle_step_update_slot_mapping_and_metadata,
//! eagle_prepare_inputs_padded, eagle_prepare_next_token_padded, compute_new_slot_mapping,
//! copy_and_expand_eagle_inputs, update_num_computed_tokens_for_batch_change): every case of
//! tests/vectors/spec_decode.json (vLLM's spec_decode/utils.py, run by
//! tests/gen/gen_spec_decode.py) through the host path in the case's dtypes, compact and
//! strided, each output buffer compared whole; the one-call helpers on the same cases;
//! refusals named in Rust terms (a NULL tensor, an overlap, values); the in-place view the
//! header allows; CUDA tensors without a GPU; a table that predates the calls. Then the step
//! plan's drafter products, which compute the same in a plan's launch: the desc's defaults,
//! the drafter capacity of the shape, refusals named in Rust terms, and runs on CUDA-labelled
//! fake addresses that reach the launch (skipped where a GPU is usable), in place included.
//!
//! The vectors' conventions (the generator's docstring): output buffers start as the case's
//! "<name>_init" and are compared whole with "expected", -7777 (support::POISON) marking an
//! entry the call does not write; flag outputs cannot hold -7777, so they start as 2 here and
//! an unwritten entry must still be 2. Where vLLM computes `block * block_size` in 32 bits
//! (cases flagged "int32_wrap") libcattn writes the exact 64-bit slot: the slots are compared
//! modulo 2^32 there and must differ from vLLM's, and exactly everywhere else.

mod support;

use std::ffi::c_void;
use std::ptr;

use cattn::*;
use support::json::Json;
use support::{expect_error, Flag, HostFlags, HostInts, Int, FLAGS, POISON};

/// What a flag output starts as: no flag the library writes (0 or 1).
const FLAG_FILL: i8 = 2;

/// The cases of one function of the file, `expected` of them.
fn cases(function: &str, expected: usize) -> Vec<Json> {
    let found: Vec<Json> = support::load_cases("spec_decode")
        .into_iter()
        .filter(|c| c.get("function").str() == function)
        .collect();
    assert_eq!(
        found.len(),
        expected,
        "{function}: cases in spec_decode.json"
    );
    found
}

#[test]
fn every_case_belongs_to_a_tested_function() {
    let tested = [
        ("eagle_step_update_slot_mapping_and_metadata", 24),
        ("eagle_prepare_inputs_padded", 22),
        ("eagle_prepare_next_token_padded", 24),
        ("compute_new_slot_mapping", 23),
        ("copy_and_expand_eagle_inputs", 27),
        ("update_num_computed_tokens_for_batch_change", 22),
    ];
    let all = support::load_cases("spec_decode");
    assert_eq!(all.len(), 142);
    for c in &all {
        let f = c.get("function").str();
        assert!(tested.iter().any(|&(t, _)| t == f), "untested function {f}");
    }
    assert_eq!(tested.iter().map(|&(_, n)| n).sum::<usize>(), all.len());
}

fn dtype(c: &Json, name: &str) -> Int {
    Int::named(c.get("dtypes").get(name).str())
}

/// Input `name` of the case in its dtype, every element `step` storage elements apart.
fn input(c: &Json, name: &str, step: i64) -> HostInts {
    HostInts::of(&c.get("inputs").get(name).ints(), dtype(c, name), step)
}

/// The 2-D input `name` (a list of rows) in its dtype.
fn rows(c: &Json, name: &str, step: i64) -> HostInts {
    let j = c.get("inputs").get(name);
    let cols = j.array().first().map_or(0, |r| r.array().len());
    let shape = [j.array().len() as i64, cols as i64];
    HostInts::shaped(&j.flat_ints(), &shape, dtype(c, name), step)
}

/// Output `name`, holding the case's `<name>_init` in its dtype.
fn output(c: &Json, name: &str, step: i64) -> HostInts {
    let init = c.get("inputs").get(&format!("{name}_init")).ints();
    HostInts::of(&init, dtype(c, name), step)
}

fn expected(c: &Json, name: &str) -> Vec<i64> {
    c.get("expected").get(name).ints()
}

fn scalar(c: &Json, name: &str) -> i64 {
    c.get("inputs").get(name).i64()
}

/// The flag dtype case `k` reads its masks in: every one of the three in turn.
fn flag_of(k: usize) -> Flag {
    FLAGS[k % FLAGS.len()]
}

/// The flag dtype case `k` writes its masks in: u8 or i8 (a bool output cannot be made).
fn flag_out_of(k: usize) -> Flag {
    [Flag::U8, Flag::I8][k % 2]
}

/// `v` as vLLM's int32 arithmetic leaves it.
fn wrap32(v: i64) -> i64 {
    v as i32 as i64
}

/// Slots against vLLM's: exact, or, in a case flagged "int32_wrap", equal modulo 2^32 and
/// different somewhere (libcattn's are exact where vLLM's wrapped).
#[track_caller]
fn expect_slots(c: &Json, what: &str, got: &[i64], want: &[i64]) {
    let wrapped: Vec<i64> = got.iter().map(|&v| wrap32(v)).collect();
    assert_eq!(wrapped, want, "{what}: slots modulo 2^32");
    if c.opt("int32_wrap").is_some_and(Json::bool) {
        assert_ne!(got, want, "{what}: exact 64-bit slots where vLLM wraps");
    } else {
        assert_eq!(got, want, "{what}: slots");
    }
}

/// The storage between a strided tensor's elements is never written.
#[track_caller]
fn expect_gaps_untouched(t: &HostInts, step: i64, what: &str) {
    let gaps = t
        .storage_values()
        .iter()
        .enumerate()
        .filter(|&(k, &v)| k as i64 % step != 0 && v != POISON)
        .count();
    assert_eq!(gaps, 0, "{what}: storage between the elements written");
}

/// `values` with `from` replaced by `to`.
fn replaced(values: &[i64], from: i64, to: i64) -> Vec<i64> {
    values
        .iter()
        .map(|&v| if v == from { to } else { v })
        .collect()
}

/// The rows of a 2-D input, cut to their first `cols` columns, as i64.
fn leading_columns(c: &Json, name: &str, cols: i64) -> Vec<Vec<i64>> {
    c.get("inputs")
        .get(name)
        .array()
        .iter()
        .map(|r| r.ints()[..cols as usize].to_vec())
        .collect()
}

fn bools(values: &[i64]) -> Vec<bool> {
    values.iter().map(|&v| v != 0).collect()
}

// ---------------------------------------------------------------------------------------------
// The vectors
// ---------------------------------------------------------------------------------------------

#[test]
fn eagle_step_update_slot_mapping_and_metadata_vectors() {
    for c in cases("eagle_step_update_slot_mapping_and_metadata", 24) {
        let name = c.get("name").str();
        let cols = scalar(&c, "n_blocks_per_req");
        let (block_size, max_model_len) = (scalar(&c, "block_size"), scalar(&c, "max_model_len"));
        let input_batch_size = scalar(&c, "input_batch_size");
        for step in [1, 2] {
            let what = format!("{name} step {step}");
            let positions = input(&c, "positions", step);
            let table = rows(&c, "block_table", step);
            let mut seq_lens = input(&c, "seq_lens", step);
            let mut clamped = output(&c, "out_clamped_positions", step);
            let mut slots = output(&c, "out_slot_mapping", step);
            eagle_step_update_slot_mapping_and_metadata(
                &EagleStepUpdateSlotMappingAndMetadataArgs {
                    block_size,
                    max_model_len,
                    input_batch_size: Some(input_batch_size),
                    positions: positions.view(),
                    // The first n_blocks_per_req columns of a wider table: a strided view.
                    block_table: table.view_cols(cols),
                    stream: Stream::DEFAULT,
                },
                &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
                    seq_lens: seq_lens.view_mut(),
                    clamped_positions: clamped.view_mut(),
                    slot_mapping: slots.view_mut(),
                },
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(
                clamped.values(),
                expected(&c, "out_clamped_positions"),
                "{what}"
            );
            assert_eq!(seq_lens.values(), expected(&c, "seq_lens"), "{what}");
            expect_slots(
                &c,
                &what,
                &slots.values(),
                &expected(&c, "out_slot_mapping"),
            );
            for t in [&seq_lens, &clamped, &slots] {
                expect_gaps_untouched(t, step, &what);
            }
        }

        // The one-call helper, int64 throughout: as many slots as the padded batch.
        let b = c.get("inputs").get("positions").array().len();
        let s = eagle_step_update_slot_mapping_and_metadata_host(
            block_size,
            max_model_len,
            Some(input_batch_size),
            &c.get("inputs").get("positions").ints(),
            &leading_columns(&c, "block_table", cols),
            &c.get("inputs").get("seq_lens").ints(),
        )
        .unwrap_or_else(|e| panic!("{name} helper: {e}"));
        assert_eq!(
            s.clamped_positions,
            expected(&c, "out_clamped_positions")[..b],
            "{name} helper"
        );
        assert_eq!(s.seq_lens, expected(&c, "seq_lens"), "{name} helper");
        let want = expected(&c, "out_slot_mapping");
        expect_slots(
            &c,
            &format!("{name} helper"),
            &s.slot_mapping,
            &want[..input_batch_size as usize],
        );
    }
}

#[test]
fn eagle_prepare_inputs_padded_vectors() {
    for c in cases("eagle_prepare_inputs_padded", 22) {
        let name = c.get("name").str();
        let b = c.get("inputs").get("cu_num_draft_tokens").array().len();
        // vLLM's num_reqs is the batch: libcattn takes B from cu_num_draft_tokens.
        assert_eq!(scalar(&c, "num_reqs"), b as i64, "{name}");
        for step in [1, 2] {
            let what = format!("{name} step {step}");
            let cu = input(&c, "cu_num_draft_tokens", step);
            let valid = input(&c, "valid_sampled_tokens_count", step);
            let qsl = input(&c, "query_start_loc", step);
            let mut idx = output(&c, "token_indices_to_sample", step);
            let mut rejected = output(&c, "num_rejected_tokens", step);
            eagle_prepare_inputs_padded(
                &EaglePrepareInputsPaddedArgs {
                    cu_num_draft_tokens: cu.view(),
                    valid_sampled_tokens_count: valid.view(),
                    query_start_loc: qsl.view(),
                    stream: Stream::DEFAULT,
                },
                &mut EaglePrepareInputsPaddedOutputs {
                    token_indices_to_sample: idx.view_mut(),
                    num_rejected_tokens: rejected.view_mut(),
                },
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(
                idx.values(),
                expected(&c, "token_indices_to_sample"),
                "{what}"
            );
            assert_eq!(
                rejected.values(),
                expected(&c, "num_rejected_tokens"),
                "{what}"
            );
            expect_gaps_untouched(&idx, step, &what);
            expect_gaps_untouched(&rejected, step, &what);
        }

        let p = eagle_prepare_inputs_padded_host(
            &c.get("inputs").get("cu_num_draft_tokens").ints(),
            &c.get("inputs").get("valid_sampled_tokens_count").ints(),
            &c.get("inputs").get("query_start_loc").ints(),
        )
        .unwrap_or_else(|e| panic!("{name} helper: {e}"));
        assert_eq!(
            p.token_indices_to_sample,
            expected(&c, "token_indices_to_sample")[..b],
            "{name} helper"
        );
        assert_eq!(
            p.num_rejected_tokens,
            expected(&c, "num_rejected_tokens")[..b],
            "{name} helper"
        );
    }
}

#[test]
fn eagle_prepare_next_token_padded_vectors() {
    for (k, c) in cases("eagle_prepare_next_token_padded", 24)
        .iter()
        .enumerate()
    {
        let name = c.get("name").str();
        let b = c.get("inputs").get("sampled_token_ids").array().len();
        assert_eq!(scalar(c, "num_reqs"), b as i64, "{name}");
        let cols = scalar(c, "num_sampled_tokens_per_req");
        let vocab_size = scalar(c, "vocab_size");
        let mask = c.get("inputs").get("discard_request_mask").ints();
        for step in [1, 2] {
            let what = format!("{name} step {step}");
            let sampled = rows(c, "sampled_token_ids", step);
            // The rows are stride_sampled_token_ids apart; num_sampled_tokens_per_req are read.
            assert_eq!(
                scalar(c, "stride_sampled_token_ids"),
                sampled.view().shape()[1],
                "{name}"
            );
            let discard = HostFlags::of(&mask, flag_of(k + step as usize));
            let backup = input(c, "backup_next_token_ids", step);
            let mut next = output(c, "next_token_ids", step);
            let mut valid = output(c, "valid_sampled_tokens_count", step);
            eagle_prepare_next_token_padded(
                &EaglePrepareNextTokenPaddedArgs {
                    vocab_size,
                    sampled_token_ids: sampled.view_cols(cols),
                    discard_request_mask: Some(discard.view()),
                    backup_next_token_ids: backup.view(),
                    stream: Stream::DEFAULT,
                },
                &mut EaglePrepareNextTokenPaddedOutputs {
                    next_token_ids: next.view_mut(),
                    valid_sampled_tokens_count: valid.view_mut(),
                },
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(next.values(), expected(c, "next_token_ids"), "{what}");
            assert_eq!(
                valid.values(),
                expected(c, "valid_sampled_tokens_count"),
                "{what}"
            );
            expect_gaps_untouched(&next, step, &what);
            expect_gaps_untouched(&valid, step, &what);
        }

        let n = eagle_prepare_next_token_padded_host(
            vocab_size,
            &leading_columns(c, "sampled_token_ids", cols),
            Some(&bools(&mask)),
            &c.get("inputs").get("backup_next_token_ids").ints(),
        )
        .unwrap_or_else(|e| panic!("{name} helper: {e}"));
        assert_eq!(
            n.next_token_ids,
            expected(c, "next_token_ids")[..b],
            "{name} helper"
        );
        assert_eq!(
            n.valid_sampled_tokens_count,
            expected(c, "valid_sampled_tokens_count")[..b],
            "{name} helper"
        );
        // No mask is a mask of no discarded request.
        if mask.iter().all(|&m| m == 0) {
            let none = eagle_prepare_next_token_padded_host(
                vocab_size,
                &leading_columns(c, "sampled_token_ids", cols),
                None,
                &c.get("inputs").get("backup_next_token_ids").ints(),
            )
            .unwrap();
            assert_eq!(none, n, "{name} without a mask");
        }
    }
}

#[test]
fn compute_new_slot_mapping_vectors() {
    for (k, c) in cases("compute_new_slot_mapping", 23).iter().enumerate() {
        let name = c.get("name").str();
        let (block_size, num_new_tokens, max_model_len) = (
            scalar(c, "block_size"),
            scalar(c, "num_new_tokens"),
            scalar(c, "max_model_len"),
        );
        let mask = c.get("inputs").get("is_rejected_token_mask").ints();
        // Two spare entries past n: left as they are. (expected's req_indices is vLLM's
        // intermediate token -> request map, which libcattn does not return.)
        let mut want = expected(c, "new_slot_mapping");
        let n = want.len();
        want.extend([POISON, POISON]);
        for step in [1, 2] {
            let what = format!("{name} step {step}");
            let qsl = input(c, "query_start_loc", step);
            let table = rows(c, "block_table", step);
            let positions = input(c, "new_positions", step);
            let rejected = HostFlags::of(&mask, flag_of(k + step as usize));
            let mut slots = HostInts::new(&[n as i64 + 2], dtype(c, "new_slot_mapping"), step);
            compute_new_slot_mapping(
                &ComputeNewSlotMappingArgs {
                    block_size,
                    num_new_tokens,
                    max_model_len,
                    query_start_loc: qsl.view(),
                    block_table: table.view(),
                    new_positions: positions.view(),
                    is_rejected_token_mask: Some(rejected.view()),
                    stream: Stream::DEFAULT,
                },
                &mut slots.view_mut(),
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            expect_slots(c, &what, &slots.values(), &want);
            expect_gaps_untouched(&slots, step, &what);
        }

        let table = c.get("inputs").get("block_table");
        let cols = table.array().first().map_or(0, |r| r.array().len()) as i64;
        let got = compute_new_slot_mapping_host(
            block_size,
            num_new_tokens,
            max_model_len,
            &c.get("inputs").get("query_start_loc").ints(),
            &leading_columns(c, "block_table", cols),
            &c.get("inputs").get("new_positions").ints(),
            Some(&bools(&mask)),
        )
        .unwrap_or_else(|e| panic!("{name} helper: {e}"));
        expect_slots(c, &format!("{name} helper"), &got, &want[..n]);
    }
}

#[test]
fn copy_and_expand_eagle_inputs_vectors() {
    let mut truncated = 0;
    for (k, c) in cases("copy_and_expand_eagle_inputs", 27).iter().enumerate() {
        let name = c.get("name").str();
        let i = c.get("inputs");
        // vLLM's sizes are the tensors' own.
        let b = i.get("next_token_ids").array().len();
        assert_eq!(scalar(c, "batch_size"), b as i64, "{name}");
        assert_eq!(
            scalar(c, "total_input_tokens"),
            i.get("target_token_ids").array().len() as i64,
            "{name}"
        );
        truncated += usize::from(c.opt("truncated").is_some_and(Json::bool));
        let params = CopyAndExpandEagleParams {
            padding_token_id: scalar(c, "padding_token_id"),
            parallel_drafting_token_id: scalar(c, "parallel_drafting_token_id"),
            num_padding_slots_per_request: scalar(c, "num_padding_slots_per_request"),
            // vLLM's grid: num_blocks programs of BLOCK_SIZE_TOKENS tokens per request.
            max_tokens_per_request: Some(scalar(c, "num_blocks") * scalar(c, "BLOCK_SIZE_TOKENS")),
            shift_input_ids: scalar(c, "shift_input_ids") != 0,
        };
        let mask_len = scalar(c, "out_mask_len") as usize;
        let want_rejected = replaced(&expected(c, "out_is_rejected_token_mask"), POISON, 2);
        let want_masked = replaced(&expected(c, "out_is_masked_token_mask"), POISON, 2);
        for step in [1, 2] {
            let what = format!("{name} step {step}");
            let ids = input(c, "target_token_ids", step);
            let positions = input(c, "target_positions", step);
            let next = input(c, "next_token_ids", step);
            let qsl = input(c, "query_start_loc", step);
            let qel = input(c, "query_end_loc", step);
            let mut out_ids = output(c, "out_input_ids", step);
            let mut out_pos = output(c, "out_positions", step);
            let mut out_new = output(c, "out_new_token_indices", step);
            let mut out_hidden = output(c, "out_hidden_state_mapping", step);
            let flag = flag_out_of(k + step as usize);
            let mut rejected = HostFlags::filled(mask_len, FLAG_FILL, flag);
            let mut masked = HostFlags::filled(mask_len, FLAG_FILL, flag);
            copy_and_expand_eagle_inputs(
                &CopyAndExpandEagleInputsArgs {
                    params,
                    target_token_ids: ids.view(),
                    target_positions: positions.view(),
                    next_token_ids: next.view(),
                    query_start_loc: qsl.view(),
                    query_end_loc: qel.view(),
                    stream: Stream::DEFAULT,
                },
                &mut CopyAndExpandEagleInputsOutputs {
                    input_ids: out_ids.view_mut(),
                    positions: out_pos.view_mut(),
                    is_rejected_token_mask: Some(rejected.view_mut()),
                    is_masked_token_mask: Some(masked.view_mut()),
                    new_token_indices: Some(out_new.view_mut()),
                    hidden_state_mapping: Some(out_hidden.view_mut()),
                },
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(out_ids.values(), expected(c, "out_input_ids"), "{what}");
            assert_eq!(out_pos.values(), expected(c, "out_positions"), "{what}");
            assert_eq!(rejected.values(), want_rejected, "{what}: rejected mask");
            assert_eq!(masked.values(), want_masked, "{what}: masked mask");
            assert_eq!(
                out_new.values(),
                expected(c, "out_new_token_indices"),
                "{what}"
            );
            assert_eq!(
                out_hidden.values(),
                expected(c, "out_hidden_state_mapping"),
                "{what}"
            );
            for t in [&out_ids, &out_pos, &out_new, &out_hidden] {
                expect_gaps_untouched(t, step, &what);
            }
        }

        // The one-call helper sizes its outputs from the slices; what the call does not write
        // (past max_tokens_per_request) is 0 there.
        let d = copy_and_expand_eagle_inputs_host(
            &params,
            &i.get("target_token_ids").ints(),
            &i.get("target_positions").ints(),
            &i.get("next_token_ids").ints(),
            &i.get("query_start_loc").ints(),
            &i.get("query_end_loc").ints(),
        )
        .unwrap_or_else(|e| panic!("{name} helper: {e}"));
        let what = format!("{name} helper");
        let qsl_b = *i.get("query_start_loc").ints().last().unwrap() as usize;
        let p = params.num_padding_slots_per_request as usize;
        let n_out = qsl_b + b * (p - usize::from(params.shift_input_ids));
        let unwritten_as_0 =
            |name: &str, len: usize| replaced(&expected(c, name)[..len], POISON, 0);
        assert_eq!(
            d.input_ids,
            unwritten_as_0("out_input_ids", n_out),
            "{what}"
        );
        assert_eq!(
            d.positions,
            unwritten_as_0("out_positions", n_out),
            "{what}"
        );
        assert_eq!(
            d.is_rejected_token_mask,
            bools(&unwritten_as_0("out_is_rejected_token_mask", n_out)),
            "{what}"
        );
        assert_eq!(
            d.is_masked_token_mask,
            bools(&unwritten_as_0("out_is_masked_token_mask", n_out)),
            "{what}"
        );
        assert_eq!(
            d.new_token_indices,
            unwritten_as_0("out_new_token_indices", b * p),
            "{what}"
        );
        let hidden = if params.shift_input_ids { qsl_b } else { 0 };
        assert_eq!(
            d.hidden_state_mapping,
            unwritten_as_0("out_hidden_state_mapping", hidden),
            "{what}"
        );
    }
    assert_eq!(truncated, 2, "cases flagged truncated");
}

#[test]
fn update_num_computed_tokens_for_batch_change_vectors() {
    for c in cases("update_num_computed_tokens_for_batch_change", 22) {
        let name = c.get("name").str();
        for step in [1, 2] {
            let what = format!("{name} step {step}");
            let prev = input(&c, "prev_positions", step);
            let valid = input(&c, "valid_sampled_token_count", step);
            let drafts = input(&c, "prev_num_draft_tokens", step);
            let cpu = input(&c, "cpu_num_computed_tokens", step);
            let mut nct = input(&c, "num_computed_tokens", step);
            let mut accepted = input(&c, "num_accepted_tokens", step);
            update_num_computed_tokens_for_batch_change(
                &UpdateNumComputedTokensForBatchChangeArgs {
                    prev_positions: prev.view(),
                    valid_sampled_token_count: valid.view(),
                    prev_num_draft_tokens: drafts.view(),
                    cpu_num_computed_tokens: cpu.view(),
                    stream: Stream::DEFAULT,
                },
                &mut UpdateNumComputedTokensForBatchChangeOutputs {
                    num_computed_tokens: nct.view_mut(),
                    num_accepted_tokens: accepted.view_mut(),
                },
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(nct.values(), expected(&c, "num_computed_tokens"), "{what}");
            assert_eq!(
                accepted.values(),
                expected(&c, "num_accepted_tokens"),
                "{what}"
            );
            expect_gaps_untouched(&nct, step, &what);
            expect_gaps_untouched(&accepted, step, &what);
        }

        let i = c.get("inputs");
        let counts = update_num_computed_tokens_for_batch_change_host(
            &i.get("num_computed_tokens").ints(),
            &i.get("num_accepted_tokens").ints(),
            &i.get("prev_positions").ints(),
            &i.get("valid_sampled_token_count").ints(),
            &i.get("prev_num_draft_tokens").ints(),
            &i.get("cpu_num_computed_tokens").ints(),
        )
        .unwrap_or_else(|e| panic!("{name} helper: {e}"));
        assert_eq!(
            counts.num_computed_tokens,
            expected(&c, "num_computed_tokens"),
            "{name} helper"
        );
        assert_eq!(
            counts.num_accepted_tokens,
            expected(&c, "num_accepted_tokens"),
            "{name} helper"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The header's defaults, the in-place view, int32 helpers
// ---------------------------------------------------------------------------------------------

#[test]
fn defaults_are_the_headers() {
    let init = sys::CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
    let p = CopyAndExpandEagleParams::default();
    assert_eq!(p.padding_token_id, init.padding_token_id);
    assert_eq!(
        p.parallel_drafting_token_id,
        init.parallel_drafting_token_id
    );
    assert_eq!(p.num_padding_slots_per_request, 1);
    assert_eq!(p.max_tokens_per_request, None);
    assert!(!p.shift_input_ids);
    // input_batch_size None is the header's 0, B.
    let s = eagle_step_update_slot_mapping_and_metadata_host(
        4,
        64,
        None,
        &[0i32, 1],
        &[[3], [4]],
        &[1, 2],
    )
    .unwrap();
    assert_eq!(s.slot_mapping, [13, 18]);
    assert_eq!(
        sys::CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT.input_batch_size,
        0
    );
}

/// `out.clamped_positions` may be `args.positions`' very view (the header's one exemption):
/// views of host slices cannot alias, but two raw views of one buffer with one layout can.
#[test]
fn eagle_step_positions_in_place() {
    let mut positions = [5i64, 15, 2];
    let table = [7i32, 8, 1, 2, 5, 6];
    let mut seq = [6i32, 16, 3];
    let mut slots = [0i64; 3];
    let p = positions.as_mut_ptr().cast::<c_void>();
    // SAFETY: both views cover `positions`, alive and otherwise unused through the call; the
    // library reads each row's position before it writes the row's clamped one.
    let (input, output) = unsafe {
        (
            TensorRef::from_raw_parts(p, Device::Cpu, DataType::I64, &[3], None, 0),
            TensorMut::from_raw_parts(p, Device::Cpu, DataType::I64, &[3], None, 0),
        )
    };
    eagle_step_update_slot_mapping_and_metadata(
        &EagleStepUpdateSlotMappingAndMetadataArgs {
            block_size: 4,
            max_model_len: 16,
            input_batch_size: None,
            positions: input,
            block_table: TensorRef::new(&table, &[3, 2]).unwrap(),
            stream: Stream::DEFAULT,
        },
        &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
            seq_lens: TensorMut::from_slice(&mut seq),
            clamped_positions: output,
            slot_mapping: TensorMut::from_slice(&mut slots),
        },
    )
    .unwrap();
    // Row 0: p 6, block min(1, 1) -> 8; row 1 past the model; row 2: p 3, block 0 -> 5.
    assert_eq!(positions, [6, 0, 3]);
    assert_eq!(slots, [8 * 4 + 2, -1, 5 * 4 + 3]);
    assert_eq!(seq, [7, 1, 4]);
}

#[test]
fn int32_helpers_keep_their_dtype() {
    let p: EaglePreparedInputs<i32> =
        eagle_prepare_inputs_padded_host(&[2i32, 2, 5], &[3, 1, 2], &[0, 3, 4, 8]).unwrap();
    assert_eq!(p.token_indices_to_sample, [2, 3, 5]);
    let c: BatchChangeCounts<i32> = update_num_computed_tokens_for_batch_change_host(
        &[100i32, 200],
        &[1, 1],
        &[1, 0],
        &[2, 3],
        &[0, 1],
        &[7, 8],
    )
    .unwrap();
    // Row 0 was previous row 1 (valid 3, with drafts); row 1 was row 0, without drafts.
    assert_eq!(c.num_computed_tokens, [203, 8]);
    assert_eq!(c.num_accepted_tokens, [3, 1]);
}

// ---------------------------------------------------------------------------------------------
// Refusals, named in Rust terms
// ---------------------------------------------------------------------------------------------

/// A host view of `shape` int64 elements at NULL: a required tensor without memory.
fn null_data(shape: &[i64]) -> TensorRef<'static> {
    // SAFETY: the library refuses NULL data of a non-empty tensor before reading it.
    unsafe { TensorRef::from_raw_parts(ptr::null(), Device::Cpu, DataType::I64, shape, None, 0) }
}

fn untouched(values: &[i64]) -> bool {
    values.iter().all(|&v| v == POISON)
}

/// A required tensor without memory (NULL data) is refused, named in Rust terms, by every call;
/// nothing is written.
#[test]
fn a_tensor_without_memory_is_refused_by_name() {
    let mut a = [POISON; 4];
    let mut b = [POISON; 4];
    let mut c = [POISON; 4];
    let e = expect_error(
        eagle_step_update_slot_mapping_and_metadata(
            &EagleStepUpdateSlotMappingAndMetadataArgs {
                block_size: 4,
                max_model_len: 16,
                input_batch_size: None,
                positions: null_data(&[2]),
                block_table: TensorRef::new(&[1i64, 2], &[2, 1]).unwrap(),
                stream: Stream::DEFAULT,
            },
            &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
                seq_lens: TensorMut::from_slice(&mut a[..2]),
                clamped_positions: TensorMut::from_slice(&mut b),
                slot_mapping: TensorMut::from_slice(&mut c),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_step_update_slot_mapping_and_metadata: args.positions has NULL data",
    );
    assert!(
        e.c_message().starts_with(
            "cattn_eagle_step_update_slot_mapping_and_metadata: args->positions has NULL data"
        ),
        "{e:?}"
    );
    assert!(untouched(&a) && untouched(&b) && untouched(&c));

    let (cu, valid) = ([1i64, 2], [1i64, 1]);
    expect_error(
        eagle_prepare_inputs_padded(
            &EaglePrepareInputsPaddedArgs {
                cu_num_draft_tokens: TensorRef::from_slice(&cu),
                valid_sampled_tokens_count: TensorRef::from_slice(&valid),
                query_start_loc: null_data(&[3]),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareInputsPaddedOutputs {
                token_indices_to_sample: TensorMut::from_slice(&mut a),
                num_rejected_tokens: TensorMut::from_slice(&mut b),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_prepare_inputs_padded: args.query_start_loc has NULL data",
    );
    assert!(untouched(&a) && untouched(&b));

    let sampled = [1i64, 2, 3, 4];
    expect_error(
        eagle_prepare_next_token_padded(
            &EaglePrepareNextTokenPaddedArgs {
                vocab_size: 10,
                sampled_token_ids: TensorRef::new(&sampled, &[2, 2]).unwrap(),
                discard_request_mask: None,
                backup_next_token_ids: null_data(&[2]),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareNextTokenPaddedOutputs {
                next_token_ids: TensorMut::from_slice(&mut a),
                valid_sampled_tokens_count: TensorMut::from_slice(&mut b),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_prepare_next_token_padded: args.backup_next_token_ids has NULL data",
    );
    assert!(untouched(&a) && untouched(&b));

    let (qsl, table) = ([0i64, 1], [3i64, 4]);
    expect_error(
        compute_new_slot_mapping(
            &ComputeNewSlotMappingArgs {
                block_size: 4,
                num_new_tokens: 1,
                max_model_len: 16,
                query_start_loc: TensorRef::from_slice(&qsl),
                block_table: TensorRef::new(&table, &[1, 2]).unwrap(),
                new_positions: null_data(&[2]),
                is_rejected_token_mask: None,
                stream: Stream::DEFAULT,
            },
            &mut TensorMut::from_slice(&mut a),
        ),
        Status::InvalidArgument,
        "cattn::compute_new_slot_mapping: args.new_positions has NULL data",
    );
    assert!(untouched(&a));

    let (ids, next, qsl, qel) = ([1i64, 2], [9i64], [0i64, 2], [1i64]);
    expect_error(
        copy_and_expand_eagle_inputs(
            &CopyAndExpandEagleInputsArgs {
                params: CopyAndExpandEagleParams::default(),
                target_token_ids: TensorRef::from_slice(&ids),
                target_positions: null_data(&[2]),
                next_token_ids: TensorRef::from_slice(&next),
                query_start_loc: TensorRef::from_slice(&qsl),
                query_end_loc: TensorRef::from_slice(&qel),
                stream: Stream::DEFAULT,
            },
            &mut CopyAndExpandEagleInputsOutputs {
                input_ids: TensorMut::from_slice(&mut a),
                positions: TensorMut::from_slice(&mut b),
                is_rejected_token_mask: None,
                is_masked_token_mask: None,
                new_token_indices: None,
                hidden_state_mapping: None,
            },
        ),
        Status::InvalidArgument,
        "cattn::copy_and_expand_eagle_inputs: args.target_positions has NULL data",
    );
    assert!(untouched(&a) && untouched(&b));

    let (prev, counts) = ([0i64, -1], [1i64, 1]);
    expect_error(
        update_num_computed_tokens_for_batch_change(
            &UpdateNumComputedTokensForBatchChangeArgs {
                prev_positions: TensorRef::from_slice(&prev),
                valid_sampled_token_count: TensorRef::from_slice(&counts),
                prev_num_draft_tokens: TensorRef::from_slice(&counts),
                cpu_num_computed_tokens: null_data(&[2]),
                stream: Stream::DEFAULT,
            },
            &mut UpdateNumComputedTokensForBatchChangeOutputs {
                num_computed_tokens: TensorMut::from_slice(&mut a),
                num_accepted_tokens: TensorMut::from_slice(&mut b[..2]),
            },
        ),
        Status::InvalidArgument,
        "cattn::update_num_computed_tokens_for_batch_change: args.cpu_num_computed_tokens has \
         NULL data",
    );
    assert!(untouched(&a) && untouched(&b));
}

/// A NULL required tensor cannot be expressed through the safe API (its fields are not
/// `Option`s): through the raw table, every call refuses one, naming the C field (the crate's
/// names.rs maps each of those paths to its Rust field; its unit tests check the mapping).
#[test]
fn a_null_required_tensor_is_refused_through_the_raw_table() {
    let api = Api::linked().unwrap();
    // SAFETY: the linked library's table is valid and static.
    let table = unsafe { &*api.as_raw() };
    let two = [1i64, 2];
    let mut out = [POISON; 4];
    let mut out2 = [POISON; 4];
    let t2 = TensorRef::from_slice(&two);
    let col = TensorRef::new(&two, &[2, 1]).unwrap();
    let mut o = TensorMut::from_slice(&mut out);
    let mut o2 = TensorMut::from_slice(&mut out2);
    let refused = |status: sys::cattn_status_t, c_message: &str| {
        assert_eq!(status, sys::CATTN_INVALID_ARGUMENT, "{c_message}");
        let m = api.last_error_message();
        assert!(m.starts_with(c_message), "{m:?} is not {c_message:?}");
    };

    let f = table.eagle_step_update_slot_mapping_and_metadata.unwrap();
    let args = sys::cattn_eagle_step_update_slot_mapping_and_metadata_args_t {
        block_size: 4,
        max_model_len: 16,
        positions: t2.as_raw(),
        block_table: col.as_raw(),
        seq_lens: ptr::null_mut(),
        out_clamped_positions: o.as_raw(),
        out_slot_mapping: o2.as_raw(),
        ..sys::CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT
    };
    // SAFETY: every pointer is NULL or a live view.
    refused(
        unsafe { f(&args) },
        "cattn_eagle_step_update_slot_mapping_and_metadata: args->seq_lens is NULL",
    );

    let f = table.eagle_prepare_inputs_padded.unwrap();
    let args = sys::cattn_eagle_prepare_inputs_padded_args_t {
        cu_num_draft_tokens: t2.as_raw(),
        valid_sampled_tokens_count: ptr::null(),
        query_start_loc: t2.as_raw(),
        token_indices_to_sample: o.as_raw(),
        num_rejected_tokens: o2.as_raw(),
        ..sys::CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT
    };
    // SAFETY: as above.
    refused(
        unsafe { f(&args) },
        "cattn_eagle_prepare_inputs_padded: args->valid_sampled_tokens_count is NULL",
    );

    let f = table.eagle_prepare_next_token_padded.unwrap();
    let args = sys::cattn_eagle_prepare_next_token_padded_args_t {
        vocab_size: 10,
        sampled_token_ids: col.as_raw(),
        backup_next_token_ids: t2.as_raw(),
        next_token_ids: ptr::null_mut(),
        valid_sampled_tokens_count: o2.as_raw(),
        ..sys::CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT
    };
    // SAFETY: as above.
    refused(
        unsafe { f(&args) },
        "cattn_eagle_prepare_next_token_padded: args->next_token_ids is NULL",
    );

    let f = table.compute_new_slot_mapping.unwrap();
    let args = sys::cattn_compute_new_slot_mapping_args_t {
        block_size: 4,
        num_new_tokens: 0,
        max_model_len: 16,
        query_start_loc: t2.as_raw(),
        block_table: ptr::null(),
        new_positions: t2.as_raw(),
        new_slot_mapping: o.as_raw(),
        ..sys::CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT
    };
    // SAFETY: as above.
    refused(
        unsafe { f(&args) },
        "cattn_compute_new_slot_mapping: args->block_table is NULL",
    );

    let f = table.copy_and_expand_eagle_inputs.unwrap();
    let args = sys::cattn_copy_and_expand_eagle_inputs_args_t {
        target_token_ids: t2.as_raw(),
        target_positions: t2.as_raw(),
        next_token_ids: t2.as_raw(),
        query_start_loc: t2.as_raw(),
        query_end_loc: ptr::null(),
        out_input_ids: o.as_raw(),
        out_positions: o2.as_raw(),
        ..sys::CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT
    };
    // SAFETY: as above.
    refused(
        unsafe { f(&args) },
        "cattn_copy_and_expand_eagle_inputs: args->query_end_loc is NULL",
    );

    let f = table.update_num_computed_tokens_for_batch_change.unwrap();
    let args = sys::cattn_update_num_computed_tokens_for_batch_change_args_t {
        num_computed_tokens: o.as_raw(),
        num_accepted_tokens: o2.as_raw(),
        prev_positions: t2.as_raw(),
        valid_sampled_token_count: t2.as_raw(),
        prev_num_draft_tokens: ptr::null(),
        cpu_num_computed_tokens: t2.as_raw(),
        ..sys::CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT
    };
    // SAFETY: as above.
    refused(
        unsafe { f(&args) },
        "cattn_update_num_computed_tokens_for_batch_change: args->prev_num_draft_tokens is NULL",
    );
    drop((o, o2));
    assert!(untouched(&out) && untouched(&out2));
}

/// Two views of one host buffer, made unsafely: the library refuses the overlap before it
/// writes anything.
struct Shared(Vec<i64>);

impl Shared {
    fn new(len: usize) -> Shared {
        Shared(vec![POISON; len])
    }

    /// A view of `len` elements from element `at`.
    fn input(&mut self, at: usize, len: usize) -> TensorRef<'static> {
        let p = self.0[at..at + len].as_mut_ptr().cast::<c_void>();
        // SAFETY: the buffer outlives the call it is passed to (each test keeps it alive), and
        // the library refuses the overlapping views before it reads or writes them.
        unsafe { TensorRef::from_raw_parts(p, Device::Cpu, DataType::I64, &[len as i64], None, 0) }
    }

    fn output(&mut self, at: usize, len: usize) -> TensorMut<'static> {
        let p = self.0[at..at + len].as_mut_ptr().cast::<c_void>();
        // SAFETY: as input().
        unsafe { TensorMut::from_raw_parts(p, Device::Cpu, DataType::I64, &[len as i64], None, 0) }
    }
}

/// An output that shares memory with an input or another output is refused, named in Rust
/// terms, by every call; nothing is written.
#[test]
fn overlapping_outputs_are_refused_by_name() {
    let mut m = Shared::new(16);
    let table = [1i64, 2];
    let e = expect_error(
        eagle_step_update_slot_mapping_and_metadata(
            &EagleStepUpdateSlotMappingAndMetadataArgs {
                block_size: 4,
                max_model_len: 16,
                input_batch_size: None,
                positions: m.input(0, 2),
                block_table: TensorRef::new(&table, &[2, 1]).unwrap(),
                stream: Stream::DEFAULT,
            },
            &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
                seq_lens: m.output(4, 2),
                clamped_positions: m.output(8, 2),
                // Shares element 1 with positions.
                slot_mapping: m.output(1, 2),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_step_update_slot_mapping_and_metadata: out.slot_mapping overlaps an input",
    );
    assert!(
        e.c_message()
            .contains("args->out_slot_mapping overlaps an input"),
        "{e:?}"
    );
    // The in-place exemption is the very view only: a shifted one is refused.
    expect_error(
        eagle_step_update_slot_mapping_and_metadata(
            &EagleStepUpdateSlotMappingAndMetadataArgs {
                block_size: 4,
                max_model_len: 16,
                input_batch_size: None,
                positions: m.input(0, 2),
                block_table: TensorRef::new(&table, &[2, 1]).unwrap(),
                stream: Stream::DEFAULT,
            },
            &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
                seq_lens: m.output(4, 2),
                clamped_positions: m.output(1, 2),
                slot_mapping: m.output(8, 2),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_step_update_slot_mapping_and_metadata: out.clamped_positions overlaps an \
         input",
    );

    expect_error(
        eagle_prepare_inputs_padded(
            &EaglePrepareInputsPaddedArgs {
                cu_num_draft_tokens: m.input(0, 2),
                valid_sampled_tokens_count: m.input(2, 2),
                query_start_loc: m.input(4, 3),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareInputsPaddedOutputs {
                token_indices_to_sample: m.output(8, 2),
                // Two outputs on one range.
                num_rejected_tokens: m.output(9, 2),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_prepare_inputs_padded: out.num_rejected_tokens overlaps another output",
    );

    let sampled = [1i64, 2, 3, 4];
    expect_error(
        eagle_prepare_next_token_padded(
            &EaglePrepareNextTokenPaddedArgs {
                vocab_size: 10,
                sampled_token_ids: TensorRef::new(&sampled, &[2, 2]).unwrap(),
                discard_request_mask: None,
                backup_next_token_ids: m.input(0, 2),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareNextTokenPaddedOutputs {
                next_token_ids: m.output(1, 2),
                valid_sampled_tokens_count: m.output(8, 2),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_prepare_next_token_padded: out.next_token_ids overlaps an input",
    );

    let (qsl, table2) = ([0i64, 1], [3i64, 4]);
    expect_error(
        compute_new_slot_mapping(
            &ComputeNewSlotMappingArgs {
                block_size: 4,
                num_new_tokens: 1,
                max_model_len: 16,
                query_start_loc: TensorRef::from_slice(&qsl),
                block_table: TensorRef::new(&table2, &[1, 2]).unwrap(),
                new_positions: m.input(0, 2),
                is_rejected_token_mask: None,
                stream: Stream::DEFAULT,
            },
            &mut m.output(1, 2),
        ),
        Status::InvalidArgument,
        "cattn::compute_new_slot_mapping: new_slot_mapping overlaps an input",
    );

    let (next, qsl, qel) = ([9i64], [0i64, 2], [1i64]);
    expect_error(
        copy_and_expand_eagle_inputs(
            &CopyAndExpandEagleInputsArgs {
                params: CopyAndExpandEagleParams::default(),
                target_token_ids: m.input(0, 2),
                target_positions: m.input(2, 2),
                next_token_ids: TensorRef::from_slice(&next),
                query_start_loc: TensorRef::from_slice(&qsl),
                query_end_loc: TensorRef::from_slice(&qel),
                stream: Stream::DEFAULT,
            },
            &mut CopyAndExpandEagleInputsOutputs {
                input_ids: m.output(4, 3),
                positions: m.output(8, 3),
                is_rejected_token_mask: None,
                is_masked_token_mask: None,
                new_token_indices: Some(m.output(3, 1)),
                hidden_state_mapping: None,
            },
        ),
        Status::InvalidArgument,
        "cattn::copy_and_expand_eagle_inputs: out.new_token_indices overlaps an input",
    );

    let counts = [1i64, 1];
    expect_error(
        update_num_computed_tokens_for_batch_change(
            &UpdateNumComputedTokensForBatchChangeArgs {
                prev_positions: m.input(0, 2),
                valid_sampled_token_count: TensorRef::from_slice(&counts),
                prev_num_draft_tokens: TensorRef::from_slice(&counts),
                cpu_num_computed_tokens: m.input(2, 2),
                stream: Stream::DEFAULT,
            },
            &mut UpdateNumComputedTokensForBatchChangeOutputs {
                num_computed_tokens: m.output(3, 2),
                num_accepted_tokens: m.output(8, 2),
            },
        ),
        Status::InvalidArgument,
        "cattn::update_num_computed_tokens_for_batch_change: out.num_computed_tokens overlaps \
         an input",
    );
    assert!(untouched(&m.0), "{:?}", m.0);
}

/// Values and sizes the calls refuse, named as the Rust caller wrote them: fields of the
/// tensor forms, parameters of the helpers.
#[test]
fn values_are_refused_by_name() {
    // input_batch_size below the batch.
    expect_error(
        eagle_step_update_slot_mapping_and_metadata_host(
            4,
            64,
            Some(1),
            &[0i64, 1],
            &[[3], [4]],
            &[1, 2],
        ),
        Status::InvalidArgument,
        "cattn::eagle_step_update_slot_mapping_and_metadata_host: input_batch_size is below the \
         batch",
    );
    expect_error(
        eagle_step_update_slot_mapping_and_metadata_host(0, 64, None, &[0i64], &[[3]], &[1]),
        Status::InvalidArgument,
        "cattn::eagle_step_update_slot_mapping_and_metadata_host: block_size ",
    );
    expect_error(
        eagle_step_update_slot_mapping_and_metadata_host(4, 64, None, &[0i64], &[[3], [4]], &[1]),
        Status::InvalidArgument,
        "cattn::eagle_step_update_slot_mapping_and_metadata_host: block_table ",
    );
    // A ragged table, refused by the helper itself.
    expect_error(
        eagle_step_update_slot_mapping_and_metadata_host(
            4,
            64,
            None,
            &[0i64, 1],
            &[vec![3, 4], vec![5]],
            &[1, 2],
        ),
        Status::InvalidArgument,
        "cattn::eagle_step_update_slot_mapping_and_metadata_host: block_table[1] is not as long",
    );
    // P out of range, in the tensor form and the helper.
    let params = CopyAndExpandEagleParams {
        num_padding_slots_per_request: 0,
        ..Default::default()
    };
    expect_error(
        copy_and_expand_eagle_inputs_host(&params, &[1i64, 2], &[0, 1], &[9], &[0, 2], &[1]),
        Status::InvalidArgument,
        "cattn::copy_and_expand_eagle_inputs_host: params.num_padding_slots_per_request is out \
         of range",
    );
    let (ids, pos, next, qsl, qel) = ([1i64, 2], [0i64, 1], [9i64], [0i64, 2], [1i64]);
    let (mut a, mut b) = ([POISON; 4], [POISON; 4]);
    let mut args = CopyAndExpandEagleInputsArgs {
        params: CopyAndExpandEagleParams {
            max_tokens_per_request: Some(-1),
            ..Default::default()
        },
        target_token_ids: TensorRef::from_slice(&ids),
        target_positions: TensorRef::from_slice(&pos),
        next_token_ids: TensorRef::from_slice(&next),
        query_start_loc: TensorRef::from_slice(&qsl),
        query_end_loc: TensorRef::from_slice(&qel),
        stream: Stream::DEFAULT,
    };
    let outputs = |a: &mut [i64; 4], b: &mut [i64; 4]| -> Result<()> {
        copy_and_expand_eagle_inputs(
            &args,
            &mut CopyAndExpandEagleInputsOutputs {
                input_ids: TensorMut::from_slice(&mut a[..]),
                positions: TensorMut::from_slice(&mut b[..]),
                is_rejected_token_mask: None,
                is_masked_token_mask: None,
                new_token_indices: None,
                hidden_state_mapping: None,
            },
        )
    };
    expect_error(
        outputs(&mut a, &mut b),
        Status::InvalidArgument,
        "cattn::copy_and_expand_eagle_inputs: args.params.max_tokens_per_request ",
    );
    assert!(untouched(&a) && untouched(&b));
    // query_end_loc outside its request (host).
    args = CopyAndExpandEagleInputsArgs {
        params: CopyAndExpandEagleParams::default(),
        query_end_loc: TensorRef::from_slice(&[2i64]),
        ..args
    };
    let outputs = |a: &mut [i64; 4], b: &mut [i64; 4]| -> Result<()> {
        copy_and_expand_eagle_inputs(
            &args,
            &mut CopyAndExpandEagleInputsOutputs {
                input_ids: TensorMut::from_slice(&mut a[..]),
                positions: TensorMut::from_slice(&mut b[..]),
                is_rejected_token_mask: None,
                is_masked_token_mask: None,
                new_token_indices: None,
                hidden_state_mapping: None,
            },
        )
    };
    expect_error(
        outputs(&mut a, &mut b),
        Status::InvalidArgument,
        "cattn::copy_and_expand_eagle_inputs: args.query_end_loc",
    );
    assert!(untouched(&a) && untouched(&b));

    // n other than the tokens' count (host): 2 tokens + 1 new, 2 positions.
    let table = [[3i64, 4]];
    expect_error(
        compute_new_slot_mapping_host(4, 1, 16, &[0i64, 2], &table, &[0, 1], None),
        Status::InvalidArgument,
        "cattn::compute_new_slot_mapping_host: new_positions",
    );
    // A mask of the wrong length.
    expect_error(
        compute_new_slot_mapping_host(4, 1, 16, &[0i64, 2], &table, &[0, 1, 2], Some(&[false])),
        Status::InvalidArgument,
        "cattn::compute_new_slot_mapping_host: is_rejected_token_mask",
    );
    // A flag tensor of another width than one byte.
    let (sampled, backup, wide) = ([1i64, 2], [0i64], [0i32]);
    let (mut next, mut valid) = ([POISON; 1], [POISON; 1]);
    expect_error(
        eagle_prepare_next_token_padded(
            &EaglePrepareNextTokenPaddedArgs {
                vocab_size: 10,
                sampled_token_ids: TensorRef::new(&sampled, &[1, 2]).unwrap(),
                discard_request_mask: Some(TensorRef::from_slice(&wide)),
                backup_next_token_ids: TensorRef::from_slice(&backup),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareNextTokenPaddedOutputs {
                next_token_ids: TensorMut::from_slice(&mut next),
                valid_sampled_tokens_count: TensorMut::from_slice(&mut valid),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_prepare_next_token_padded: args.discard_request_mask has an unsupported \
         dtype",
    );
    assert!(untouched(&next) && untouched(&valid));
    // A previous row past the previous batch (host).
    expect_error(
        update_num_computed_tokens_for_batch_change_host(
            &[5i64, 6],
            &[1],
            &[2],
            &[1, 1],
            &[1, 1],
            &[0],
        ),
        Status::InvalidArgument,
        "cattn::update_num_computed_tokens_for_batch_change_host: prev_positions",
    );
    // A result that does not fit an int32 output.
    let (cu, valid, qsl) = ([0i64], [1i64], [0i64, 1 << 40]);
    let (mut idx, mut rejected) = ([0i32], [0i32]);
    expect_error(
        eagle_prepare_inputs_padded(
            &EaglePrepareInputsPaddedArgs {
                cu_num_draft_tokens: TensorRef::from_slice(&cu),
                valid_sampled_tokens_count: TensorRef::from_slice(&valid),
                query_start_loc: TensorRef::from_slice(&qsl),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareInputsPaddedOutputs {
                token_indices_to_sample: TensorMut::from_slice(&mut idx),
                num_rejected_tokens: TensorMut::from_slice(&mut rejected),
            },
        ),
        Status::InvalidArgument,
        "cattn::eagle_prepare_inputs_padded: out.token_indices_to_sample",
    );
    assert_eq!((idx, rejected), ([0], [0]));
}

// ---------------------------------------------------------------------------------------------
// CUDA tensors without a GPU, and a table from before 1.2's speculative decoding
// ---------------------------------------------------------------------------------------------

#[track_caller]
fn expect_no_gpu(result: Result<()>, function: &str) {
    let e = result.unwrap_err();
    assert_eq!(e.status(), Status::NotSupported, "{e}");
    assert!(e.message().starts_with(&format!("{function}: ")), "{e}");
}

#[test]
fn cuda_tensors_without_a_gpu() {
    if cuda_device_count().unwrap() != 0 {
        return; // the fake addresses would reach a kernel
    }
    expect_no_gpu(
        eagle_step_update_slot_mapping_and_metadata(
            &EagleStepUpdateSlotMappingAndMetadataArgs {
                block_size: 4,
                max_model_len: 16,
                input_batch_size: None,
                positions: support::fake_cuda_in(DataType::I64, 0, &[2]),
                block_table: support::fake_cuda_in(DataType::I64, 1, &[2, 3]),
                stream: Stream::DEFAULT,
            },
            &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
                seq_lens: support::fake_cuda_out(DataType::I64, 2, &[2]),
                clamped_positions: support::fake_cuda_out(DataType::I64, 3, &[2]),
                slot_mapping: support::fake_cuda_out(DataType::I64, 4, &[2]),
            },
        ),
        "cattn_eagle_step_update_slot_mapping_and_metadata",
    );
    expect_no_gpu(
        eagle_prepare_inputs_padded(
            &EaglePrepareInputsPaddedArgs {
                cu_num_draft_tokens: support::fake_cuda_in(DataType::I64, 0, &[2]),
                valid_sampled_tokens_count: support::fake_cuda_in(DataType::I64, 1, &[2]),
                query_start_loc: support::fake_cuda_in(DataType::I64, 2, &[3]),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareInputsPaddedOutputs {
                token_indices_to_sample: support::fake_cuda_out(DataType::I64, 3, &[2]),
                num_rejected_tokens: support::fake_cuda_out(DataType::I64, 4, &[2]),
            },
        ),
        "cattn_eagle_prepare_inputs_padded",
    );
    expect_no_gpu(
        eagle_prepare_next_token_padded(
            &EaglePrepareNextTokenPaddedArgs {
                vocab_size: 10,
                sampled_token_ids: support::fake_cuda_in(DataType::I64, 0, &[2, 3]),
                discard_request_mask: None,
                backup_next_token_ids: support::fake_cuda_in(DataType::I64, 1, &[2]),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareNextTokenPaddedOutputs {
                next_token_ids: support::fake_cuda_out(DataType::I64, 2, &[2]),
                valid_sampled_tokens_count: support::fake_cuda_out(DataType::I64, 3, &[2]),
            },
        ),
        "cattn_eagle_prepare_next_token_padded",
    );
    expect_no_gpu(
        compute_new_slot_mapping(
            &ComputeNewSlotMappingArgs {
                block_size: 4,
                num_new_tokens: 1,
                max_model_len: 16,
                query_start_loc: support::fake_cuda_in(DataType::I64, 0, &[3]),
                block_table: support::fake_cuda_in(DataType::I64, 1, &[2, 3]),
                new_positions: support::fake_cuda_in(DataType::I64, 2, &[5]),
                is_rejected_token_mask: None,
                stream: Stream::DEFAULT,
            },
            &mut support::fake_cuda_out(DataType::I64, 3, &[5]),
        ),
        "cattn_compute_new_slot_mapping",
    );
    expect_no_gpu(
        copy_and_expand_eagle_inputs(
            &CopyAndExpandEagleInputsArgs {
                params: CopyAndExpandEagleParams::default(),
                target_token_ids: support::fake_cuda_in(DataType::I64, 0, &[4]),
                target_positions: support::fake_cuda_in(DataType::I64, 1, &[4]),
                next_token_ids: support::fake_cuda_in(DataType::I64, 2, &[2]),
                query_start_loc: support::fake_cuda_in(DataType::I64, 3, &[3]),
                query_end_loc: support::fake_cuda_in(DataType::I64, 4, &[2]),
                stream: Stream::DEFAULT,
            },
            &mut CopyAndExpandEagleInputsOutputs {
                input_ids: support::fake_cuda_out(DataType::I64, 5, &[6]),
                positions: support::fake_cuda_out(DataType::I64, 6, &[6]),
                is_rejected_token_mask: None,
                is_masked_token_mask: None,
                new_token_indices: None,
                hidden_state_mapping: None,
            },
        ),
        "cattn_copy_and_expand_eagle_inputs",
    );
    expect_no_gpu(
        update_num_computed_tokens_for_batch_change(
            &UpdateNumComputedTokensForBatchChangeArgs {
                prev_positions: support::fake_cuda_in(DataType::I64, 0, &[2]),
                valid_sampled_token_count: support::fake_cuda_in(DataType::I64, 1, &[2]),
                prev_num_draft_tokens: support::fake_cuda_in(DataType::I64, 2, &[2]),
                cpu_num_computed_tokens: support::fake_cuda_in(DataType::I64, 3, &[2]),
                stream: Stream::DEFAULT,
            },
            &mut UpdateNumComputedTokensForBatchChangeOutputs {
                num_computed_tokens: support::fake_cuda_out(DataType::I64, 4, &[2]),
                num_accepted_tokens: support::fake_cuda_out(DataType::I64, 5, &[2]),
            },
        ),
        "cattn_update_num_computed_tokens_for_batch_change",
    );
}

/// A 1.2 table from before the speculative-decoding entries: those calls fail cleanly.
#[test]
fn a_table_that_predates_the_calls() {
    let real = Api::linked().unwrap();
    // SAFETY: the linked table is valid.
    let mut table: sys::cattn_api_t = unsafe { *real.as_raw() };
    table.struct_size = std::mem::offset_of!(
        sys::cattn_api_t,
        eagle_step_update_slot_mapping_and_metadata
    );
    // SAFETY: a prefix of a valid table; the wrapper must not read past struct_size.
    let api = unsafe { Api::from_raw(&table) }.unwrap();
    let e = api
        .eagle_prepare_inputs_padded_host(&[1i64], &[1], &[0, 2])
        .unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(
        e.message()
            .contains("predates its `eagle_prepare_inputs_padded` entry"),
        "{e}"
    );
    // The entries before them still work.
    assert_eq!(
        api.query_lens(&[0i64, 2, 5]).unwrap(),
        [2, 3],
        "a 1.1 entry of the same table"
    );
}

// --- The step plan's drafter products (1.2) ------------------------------------------------------

/// The drafter chain, `DRAFT_NEXT_TOKEN` to `DRAFT_SLOT_MAPPING`.
fn draft_chain() -> StepProducts {
    StepProducts::DRAFT_NEXT_TOKEN
        | StepProducts::DRAFT_PREPARE_INPUTS
        | StepProducts::DRAFT_EXPAND
        | StepProducts::DRAFT_SLOT_MAPPING
}

/// A drafter plan's desc: 48 requests, 512 target tokens, 8 table columns, P = 3 with the
/// shift (the C tests' plan).
fn draft_desc(products: StepProducts) -> StepPlanDesc {
    StepPlanDesc {
        products,
        max_num_reqs: 48,
        max_num_tokens: 512,
        max_num_blocks_per_req: 8,
        draft: StepDraftParams {
            vocab_size: 1000,
            num_padding_slots_per_request: 3,
            padding_token_id: 7,
            parallel_drafting_token_id: 9,
            block_size: 16,
            max_model_len: 4096,
            shift_input_ids: true,
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn step_plan_draft_defaults_are_the_headers() {
    let raw = StepPlanDesc::default().to_raw().unwrap().draft;
    let init = sys::CATTN_STEP_PLAN_DESC_INIT.draft;
    let fields = |p: sys::cattn_step_draft_params_t| {
        (
            (
                p.vocab_size,
                p.num_padding_slots_per_request,
                p.padding_token_id,
            ),
            (p.parallel_drafting_token_id, p.max_tokens_per_request),
            (
                p.block_size,
                p.max_model_len,
                p.shift_input_ids,
                p.reserved0,
            ),
        )
    };
    assert_eq!(fields(raw), fields(init));
    assert_eq!(raw.num_padding_slots_per_request, 1);
    // Every field is passed through as given.
    let d = draft_desc(draft_chain());
    let raw = StepPlanDesc {
        draft: StepDraftParams {
            max_tokens_per_request: 40,
            ..d.draft
        },
        ..d
    }
    .to_raw()
    .unwrap();
    assert_eq!(raw.products, draft_chain().bits());
    assert_eq!(fields(raw.draft), ((1000, 3, 7), (9, 40), (16, 4096, 1, 0)));
}

#[test]
fn step_plan_draft_shape_has_the_drafter_capacity() {
    // max_num_tokens + max_num_reqs * (P - shift), for EXPAND with or without the chain's end.
    for products in [
        draft_chain(),
        StepProducts::DRAFT_NEXT_TOKEN
            | StepProducts::DRAFT_PREPARE_INPUTS
            | StepProducts::DRAFT_EXPAND,
    ] {
        for p in [1i64, 3, 8, 65536] {
            for shift in [false, true] {
                let mut desc = draft_desc(products);
                desc.draft.num_padding_slots_per_request = p;
                desc.draft.shift_input_ids = shift;
                let plan = StepPlan::new(&desc).unwrap();
                let want = 512 + 48 * (p - i64::from(shift));
                assert_eq!(plan.shape().draft_token_capacity, want, "{desc:?}");
                assert_eq!(plan.workspace_size(), 0);
            }
        }
    }
    // The products that expand nothing have no drafter capacity.
    for products in [
        StepProducts::DRAFT_NEXT_TOKEN,
        StepProducts::DRAFT_NEXT_TOKEN | StepProducts::DRAFT_PREPARE_INPUTS,
        StepProducts::DRAFT_STEP,
        StepProducts::BATCH_CHANGE,
    ] {
        let plan = step_plan_create(&draft_desc(products)).unwrap();
        assert_eq!(plan.shape().draft_token_capacity, 0, "{products:?}");
    }
}

#[test]
fn step_plan_draft_desc_refused_by_name() {
    type Edit = fn(&mut StepPlanDesc);
    let cases: &[(Edit, &str)] = &[
        (
            |d| d.products |= StepProducts::INPUTS,
            "desc.products selects step-input and drafter products together",
        ),
        (
            |d| d.products = StepProducts::DRAFT_STEP | StepProducts::DRAFT_NEXT_TOKEN,
            "desc.products selects CATTN_STEP_DRAFT_STEP with other products",
        ),
        (
            |d| d.products = StepProducts::BATCH_CHANGE | StepProducts::EXTEND_QUERIES,
            "desc.products selects CATTN_STEP_BATCH_CHANGE with other products",
        ),
        (
            |d| d.products = StepProducts::DRAFT_PREPARE_INPUTS,
            "desc.products selects CATTN_STEP_DRAFT_PREPARE_INPUTS without \
             CATTN_STEP_DRAFT_NEXT_TOKEN",
        ),
        (
            |d| d.products = StepProducts::from_bits_retain(1 << 19),
            "desc.products is not a set of products",
        ),
        (
            |d| d.draft.vocab_size = 0,
            "desc.draft.vocab_size is out of range (got 0, expected >= 1)",
        ),
        (
            |d| d.draft.num_padding_slots_per_request = 0,
            "desc.draft.num_padding_slots_per_request is out of range (got 0",
        ),
        (
            |d| d.draft.num_padding_slots_per_request = 65537,
            "desc.draft.num_padding_slots_per_request is out of range (got 65537",
        ),
        (
            |d| d.draft.max_tokens_per_request = -1,
            "desc.draft.max_tokens_per_request",
        ),
        (|d| d.draft.block_size = 0, "desc.draft.block_size"),
        (|d| d.draft.max_model_len = 0, "desc.draft.max_model_len"),
        (
            |d| {
                d.products = StepProducts::BATCH_CHANGE;
                d.max_num_reqs = 8193;
            },
            "desc.max_num_reqs is too large for CATTN_STEP_BATCH_CHANGE",
        ),
    ];
    for &(edit, needle) in cases {
        let mut desc = draft_desc(draft_chain());
        edit(&mut desc);
        let e = expect_error(StepPlan::new(&desc), Status::InvalidArgument, needle);
        assert!(
            e.message().starts_with("cattn::StepPlan::new: desc."),
            "{needle}: {e}"
        );
        assert!(
            e.c_message().starts_with("cattn_step_plan_create: desc->"),
            "{e}"
        );
    }
    // Under the C name as well.
    let mut desc = draft_desc(StepProducts::DRAFT_STEP);
    desc.draft.max_model_len = -2;
    expect_error(
        step_plan_create(&desc),
        Status::InvalidArgument,
        "cattn::step_plan_create: desc.draft.max_model_len is out of range (got -2",
    );
    // A parameter of a product not selected is not read.
    let mut desc = draft_desc(StepProducts::DRAFT_NEXT_TOKEN);
    desc.draft.block_size = 0;
    desc.draft.num_padding_slots_per_request = 0;
    StepPlan::new(&desc).unwrap();
}

/// The chain's batch and outputs on fake device memory, every optional one given: B = 40 of 48
/// requests (the C tests' run).
fn draft_chain_run(cap: i64) -> (StepBatch<'static>, StepOutputs<'static>) {
    use support::{fake_cuda_in as d_in, fake_cuda_out as d_out};
    const B: i64 = 40;
    let batch = StepBatch {
        query_start_loc: Some(d_in(DataType::I32, 0, &[B + 1])),
        block_table: Some(d_in(DataType::I32, 1, &[B, 8])),
        sampled_token_ids: Some(d_in(DataType::I32, 2, &[B, 4])),
        discard_request_mask: Some(d_in(DataType::BOOL, 3, &[B])),
        backup_next_token_ids: Some(d_in(DataType::I32, 4, &[B])),
        cu_num_draft_tokens: Some(d_in(DataType::I32, 5, &[B])),
        target_token_ids: Some(d_in(DataType::I32, 6, &[500])),
        target_positions: Some(d_in(DataType::I64, 7, &[500])),
        ..Default::default()
    };
    let outputs = StepOutputs {
        next_token_ids: Some(d_out(DataType::I32, 10, &[B])),
        valid_sampled_tokens_count: Some(d_out(DataType::I32, 11, &[48])),
        token_indices_to_sample: Some(d_out(DataType::I32, 12, &[B])),
        num_rejected_tokens: Some(d_out(DataType::I32, 13, &[B])),
        draft_input_ids: Some(d_out(DataType::I32, 14, &[cap])),
        draft_positions: Some(d_out(DataType::I64, 15, &[cap])),
        is_rejected_token_mask: Some(d_out(DataType::U8, 16, &[cap])),
        is_masked_token_mask: Some(d_out(DataType::I8, 17, &[cap])),
        new_token_indices: Some(d_out(DataType::I32, 18, &[48 * 3])),
        hidden_state_mapping: Some(d_out(DataType::I32, 19, &[512])),
        draft_slot_mapping: Some(d_out(DataType::I64, 20, &[cap])),
        counts: Some(d_out(DataType::I64, 21, &[STEP_NUM_COUNTS as i64])),
        ..Default::default()
    };
    (batch, outputs)
}

#[test]
fn step_plan_draft_runs_refused_by_name() {
    // Every failure here is found before any device work: safe on any machine.
    let plan = StepPlan::new(&draft_desc(draft_chain())).unwrap();
    let cap = plan.shape().draft_token_capacity;
    let run = |edit: &dyn Fn(&mut StepBatch<'static>, &mut StepOutputs<'static>)| {
        let (mut batch, mut out) = draft_chain_run(cap);
        edit(&mut batch, &mut out);
        plan.run(&batch, &mut out, Stream::DEFAULT)
    };
    expect_error(
        run(&|b, _| b.sampled_token_ids = None),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.sampled_token_ids is NULL",
    );
    expect_error(
        run(&|b, _| b.cu_num_draft_tokens = None),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.cu_num_draft_tokens is NULL",
    );
    expect_error(
        run(&|b, _| b.target_token_ids = Some(support::fake_cuda_in(DataType::I32, 30, &[600]))),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.target_token_ids exceeds the plan's capacity",
    );
    expect_error(
        run(&|_, o| o.next_token_ids = None),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.next_token_ids is NULL",
    );
    expect_error(
        run(&|_, o| o.draft_slot_mapping = Some(support::fake_cuda_out(DataType::I32, 30, &[cap]))),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.draft_slot_mapping has the wrong dtype",
    );
    expect_error(
        run(&|_, o| o.draft_input_ids = Some(support::fake_cuda_out(DataType::I32, 30, &[600]))),
        Status::InsufficientSize,
        "cattn::StepPlan::run: outputs.draft_input_ids",
    );
    expect_error(
        run(&|_, o| o.draft_seq_lens = Some(support::fake_cuda_out(DataType::I32, 30, &[40]))),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.draft_seq_lens is set for a product the plan does not \
         compute",
    );
    // An output over an input that is not its very view.
    expect_error(
        run(&|_, o| o.next_token_ids = Some(support::fake_cuda_out(DataType::I32, 4, &[40]))),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.next_token_ids",
    );
    // Without the shift there is no hidden-state mapping.
    let no_shift = StepPlan::new(&StepPlanDesc {
        draft: StepDraftParams {
            shift_input_ids: false,
            ..draft_desc(draft_chain()).draft
        },
        ..draft_desc(draft_chain())
    })
    .unwrap();
    let (batch, mut out) = draft_chain_run(no_shift.shape().draft_token_capacity);
    expect_error(
        no_shift.run(&batch, &mut out, Stream::DEFAULT),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.hidden_state_mapping is set but desc->draft.shift_input_ids \
         is 0",
    );

    // DRAFT_STEP writes no counts; an output over part of its input is an overlap.
    let step = StepPlan::new(&draft_desc(StepProducts::DRAFT_STEP)).unwrap();
    let (batch, mut out) = draft_step_run(false);
    out.counts = Some(support::fake_cuda_out(
        DataType::I64,
        30,
        &[STEP_NUM_COUNTS as i64],
    ));
    expect_error(
        step.run(&batch, &mut out, Stream::DEFAULT),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.counts is set for a plan that writes no counts",
    );
    let (batch, mut out) = draft_step_run(false);
    // seq_lens' memory as int64: not its very view.
    out.draft_seq_lens = Some(support::fake_cuda_out(DataType::I64, 2, &[32]));
    expect_error(
        step.run(&batch, &mut out, Stream::DEFAULT),
        Status::InvalidArgument,
        "cattn::StepPlan::run: outputs.draft_seq_lens overlaps",
    );

    // BATCH_CHANGE names its batch fields.
    let change = StepPlan::new(&draft_desc(StepProducts::BATCH_CHANGE)).unwrap();
    let (mut batch, mut out) = batch_change_run(false);
    batch.prev_positions = None;
    expect_error(
        change.run(&batch, &mut out, Stream::DEFAULT),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.prev_positions is NULL",
    );
    let (mut batch, mut out) = batch_change_run(false);
    batch.num_computed_tokens = Some(support::fake_cuda_in(DataType::I32, 30, &[10]));
    expect_error(
        change.run(&batch, &mut out, Stream::DEFAULT),
        Status::InsufficientSize,
        "cattn::StepPlan::run: batch.num_computed_tokens has fewer rows than the batch",
    );
}

/// `DRAFT_STEP` over B = 32 rows, its outputs apart from its inputs or (`in_place`) the very
/// views of positions and seq_lens.
fn draft_step_run(in_place: bool) -> (StepBatch<'static>, StepOutputs<'static>) {
    use support::{fake_cuda_in as d_in, fake_cuda_out as d_out};
    let (pos, seq) = if in_place { (0, 2) } else { (10, 11) };
    (
        StepBatch {
            positions: Some(d_in(DataType::I64, 0, &[32])),
            block_table: Some(d_in(DataType::I32, 1, &[32, 8])),
            seq_lens: Some(d_in(DataType::I32, 2, &[32])),
            ..Default::default()
        },
        StepOutputs {
            draft_positions: Some(d_out(DataType::I64, pos, &[32])),
            draft_seq_lens: Some(d_out(DataType::I32, seq, &[32])),
            draft_slot_mapping: Some(d_out(DataType::I64, 12, &[48])),
            ..Default::default()
        },
    )
}

/// `BATCH_CHANGE` of n = 24 rows of M = 64 counts, 30 previous rows, its outputs apart or
/// (`in_place`) the very views of num_computed_tokens and num_accepted_tokens.
fn batch_change_run(in_place: bool) -> (StepBatch<'static>, StepOutputs<'static>) {
    use support::{fake_cuda_in as d_in, fake_cuda_out as d_out};
    let (nct, acc) = if in_place { (1, 2) } else { (10, 11) };
    (
        StepBatch {
            prev_positions: Some(d_in(DataType::I64, 0, &[24])),
            num_computed_tokens: Some(d_in(DataType::I32, 1, &[64])),
            num_accepted_tokens: Some(d_in(DataType::I32, 2, &[24])),
            valid_sampled_token_count: Some(d_in(DataType::I32, 3, &[30])),
            prev_num_draft_tokens: Some(d_in(DataType::I32, 4, &[30])),
            cpu_num_computed_tokens: Some(d_in(DataType::I32, 5, &[24])),
            ..Default::default()
        },
        StepOutputs {
            carried_num_computed_tokens: Some(d_out(
                DataType::I32,
                nct,
                &[if in_place { 64 } else { 24 }],
            )),
            carried_num_accepted_tokens: Some(d_out(DataType::I32, acc, &[24])),
            ..Default::default()
        },
    )
}

/// A run that passed every check, refused at the launch: a CPU-only build, or no usable device.
fn expect_checks_pass(result: Result<()>) {
    let e = result.unwrap_err();
    assert_eq!(e.status(), Status::NotSupported, "{e}");
    assert!(e.message().starts_with("cattn_step_plan_run: "), "{e}");
    assert!(
        e.message().contains("CPU-only") || e.message().contains("no usable CUDA device"),
        "{e}"
    );
}

#[test]
fn step_plan_draft_with_cuda_tensors_without_a_gpu() {
    if cuda_device_count().unwrap() != 0 {
        return; // the fake addresses would reach a kernel
    }
    // The chain, every optional tensor given, then none of them.
    let plan = StepPlan::new(&draft_desc(draft_chain())).unwrap();
    let (mut batch, mut out) = draft_chain_run(plan.shape().draft_token_capacity);
    expect_checks_pass(plan.run(&batch, &mut out, Stream::DEFAULT));
    batch.discard_request_mask = None;
    out.valid_sampled_tokens_count = None;
    out.num_rejected_tokens = None;
    out.is_rejected_token_mask = None;
    out.is_masked_token_mask = None;
    out.new_token_indices = None;
    out.hidden_state_mapping = None;
    out.counts = None;
    expect_checks_pass(plan.run(&batch, &mut out, Stream::DEFAULT));
    // The drafting step and the batch change, apart and in place (the very views).
    let step = StepPlan::new(&draft_desc(StepProducts::DRAFT_STEP)).unwrap();
    let change = StepPlan::new(&draft_desc(StepProducts::BATCH_CHANGE)).unwrap();
    for in_place in [false, true] {
        let (batch, mut out) = draft_step_run(in_place);
        expect_checks_pass(step.run(&batch, &mut out, Stream::DEFAULT));
        let (batch, mut out) = batch_change_run(in_place);
        expect_checks_pass(change.run(&batch, &mut out, Stream::DEFAULT));
    }
}
