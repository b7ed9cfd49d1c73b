// SPDX-License-Identifier: Apache-2.0
//! Batch splitting and reordering through the safe API: every upstream-oracle vector of
//! split_decodes_and_prefills, split_decodes_prefills_and_extends, split_prefill_chunks and
//! reorder_batch_to_split_decodes_and_prefills, and the failures vLLM raises as errors.

mod support;

use cattn::*;
use support::load_cases;

fn wraps(name: &str) -> bool {
    name.starts_with("int32_")
}

#[test]
fn split_decodes_and_prefills_vectors() {
    let mut n = 0;
    for c in load_cases("split_decodes_and_prefills") {
        let name = c.get("name").str();
        let qsl = c.get("query_start_loc").ints();
        let qsl32: Vec<i32> = qsl.iter().map(|&v| v as i32).collect();
        let flags: Option<Vec<u8>> = (!c.get("is_prefilling").is_null()).then(|| {
            c.get("is_prefilling")
                .ints()
                .iter()
                .map(|&v| v as u8)
                .collect()
        });
        let q = if c.get("dtype").str() == "int64" || !wraps(name) {
            TensorRef::from_slice(&qsl)
        } else {
            TensorRef::from_slice(&qsl32)
        };
        let b = SplitBatch {
            query_start_loc_cpu: q,
            num_reqs: c.get("num_reqs").i64(),
            num_actual_tokens: c.get("num_actual_tokens").i64(),
            max_query_len: c.get("max_query_len").i64(),
        };
        let opts = SplitOptions {
            decode_threshold: c.get("decode_threshold").i64(),
            require_uniform: c.get("require_uniform").i64() != 0,
            treat_short_extends_as_decodes: c.get("treat_short_extends_as_decodes").i64() != 0,
            is_prefilling: flags.as_deref().map(TensorRef::from_slice),
        };
        let got = split_decodes_and_prefills(&b, &opts);
        if c.has("error") {
            let e = got.expect_err(name);
            assert_eq!(e.status(), Status::InvalidArgument, "{name}");
        } else {
            let s = got.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                vec![
                    s.num_decodes,
                    s.num_prefills,
                    s.num_decode_tokens,
                    s.num_prefill_tokens
                ],
                c.get("result").ints(),
                "{name}"
            );
        }
        n += 1;
    }
    assert!(n >= 100);
}

#[test]
fn split_decodes_prefills_and_extends_vectors() {
    let mut n = 0;
    for c in load_cases("split_decodes_prefills_and_extends") {
        let name = c.get("name").str();
        let qsl = c.get("query_start_loc").ints();
        let qsl32: Vec<i32> = qsl.iter().map(|&v| v as i32).collect();
        let ub: Option<Vec<i64>> =
            (!c.get("upper_bound").is_null()).then(|| c.get("upper_bound").ints());
        let b = SplitBatch {
            query_start_loc_cpu: if c.get("dtype").str() == "int32" {
                TensorRef::from_slice(&qsl32)
            } else {
                TensorRef::from_slice(&qsl)
            },
            num_reqs: c.get("num_reqs").i64(),
            num_actual_tokens: c.get("num_actual_tokens").i64(),
            max_query_len: c.get("max_query_len").i64(),
        };
        let ub_t = ub.as_deref().map(TensorRef::from_slice);
        let got =
            split_decodes_prefills_and_extends(&b, ub_t.as_ref(), c.get("decode_threshold").i64());
        if c.has("error") {
            assert_eq!(
                got.expect_err(name).status(),
                Status::InvalidArgument,
                "{name}"
            );
        } else {
            let s = got.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                vec![
                    s.num_decodes,
                    s.num_extends,
                    s.num_prefills,
                    s.num_decode_tokens,
                    s.num_extend_tokens,
                    s.num_prefill_tokens
                ],
                c.get("result").ints(),
                "{name}"
            );
        }
        n += 1;
    }
    assert!(n >= 80);
}

#[test]
fn split_prefill_chunks_vectors() {
    for c in load_cases("split_prefill_chunks") {
        let name = c.get("name").str();
        let got = split_prefill_chunks(
            &c.get("seq_lens").ints(),
            c.get("workspace_size").i64(),
            c.get("request_offset").i64(),
        );
        if c.has("error") {
            assert_eq!(
                got.expect_err(name).status(),
                Status::InvalidArgument,
                "{name}"
            );
            continue;
        }
        let want: Vec<(i64, i64)> = c
            .get("chunks")
            .array()
            .iter()
            .map(|r| (r.array()[0].i64(), r.array()[1].i64()))
            .collect();
        assert_eq!(got.unwrap(), want, "{name}");
    }
}

#[test]
fn reorder_vectors() {
    for c in load_cases("reorder_batch_to_split_decodes_and_prefills") {
        let name = c.get("name").str();
        let plan = reorder_batch_to_split_decodes_and_prefills(
            &c.get("num_scheduled_tokens").ints(),
            &c.get("num_computed_tokens").ints(),
            &c.get("num_prompt_tokens").ints(),
            c.get("decode_threshold").i64(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(plan.changed, c.get("changed").i64() != 0, "{name}");
        assert_eq!(plan.index_map, c.get("index_map").ints(), "{name}");
        let swaps: Vec<(i64, i64)> = c
            .get("swaps")
            .array()
            .iter()
            .map(|r| (r.array()[0].i64(), r.array()[1].i64()))
            .collect();
        assert_eq!(plan.swaps, swaps, "{name}");
        assert_eq!(plan.counts.to_vec(), c.get("counts").ints(), "{name}");
    }
}

#[test]
fn one_call_helpers_and_errors() {
    let s = split_query_start_loc(&[0, 1, 2, 7, 12], 1).unwrap();
    assert_eq!(
        s,
        DecodePrefillSplit {
            num_decodes: 2,
            num_prefills: 2,
            num_decode_tokens: 2,
            num_prefill_tokens: 10
        }
    );
    let e = split_query_start_loc(&[0], 1);
    assert!(e.is_ok());
    let e = split_prefill_chunks(&[9], 8, 0).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .starts_with("cattn::split_prefill_chunks: seq_lens has a length"),
        "{}",
        e.message()
    );
    assert!(
        e.c_message()
            .starts_with("cattn_split_prefill_chunks: args->seq_lens_cpu "),
        "{}",
        e.c_message()
    );
    let e = reorder_batch_to_split_decodes_and_prefills(&[1, 2], &[1], &[1, 2], 1).unwrap_err();
    assert!(
        e.message().contains("num_computed_tokens"),
        "{}",
        e.message()
    );
}
