// SPDX-License-Identifier: Apache-2.0
//! Creating and dropping handles of the real library in a loop does not grow the process: a
//! Drop that forgot its destroy call would leak every context and plan (local-attention and
//! step plans). Alone in its test binary so that no other test's allocations blur the
//! measurement.

use cattn::*;

/// Resident set size in bytes, from /proc/self/statm.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn create_and_drop_in_a_loop() {
    let (q, s) = ([0i32, 4, 14, 19], [6i32, 17, 9]);
    let table: Vec<i64> = (0..27).collect();
    let md = CommonAttnMetadata {
        query_start_loc_cpu: Some(TensorRef::from_slice(&q)),
        seq_lens_cpu: Some(TensorRef::from_slice(&s)),
        block_table_tensor: Some(TensorRef::new(&table, &[3, 9]).unwrap()),
        num_reqs: 3,
        num_actual_tokens: 19,
        ..Default::default()
    };
    let desc = StepPlanDesc {
        products: StepProducts::ALL,
        max_num_reqs: 8,
        max_num_tokens: 256,
        max_num_blocks_per_req: 16,
        local_attention: StepLocalAttentionParams {
            attn_chunk_size: 16,
            block_size: 4,
        },
        ..Default::default()
    };
    let round = |n: usize| {
        for _ in 0..n {
            let ctx = Context::new().unwrap();
            ctx.set_kv_cache_layout_override(Some(KvCacheLayout::Hnd))
                .unwrap();
            let plan = LocalAttentionPlan::new(&md, 4, 2).unwrap();
            assert_eq!(plan.shape().unwrap().virtual_batches, 8);
            let step = StepPlan::new(&desc).unwrap();
            assert_eq!(step.shape().restore_capacity, 256);
        }
    };
    // Warm up the allocator, then measure a much longer run.
    round(20_000);
    let before = rss();
    round(200_000);
    let grown = rss().saturating_sub(before);
    // 200k leaked contexts alone would be over 6 MiB (plans far more: a step plan is about
    // 2 KiB).
    assert!(grown < 1 << 20, "RSS grew by {grown} bytes");
}
