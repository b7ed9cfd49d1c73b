// SPDX-License-Identifier: Apache-2.0
//! A program that loads libcattn at run time only: every call through the loaded library's
//! `Api`, handles included. This test runs with and without the `link` feature; without it,
//! nothing links libcattn (scripts/test_rust.sh checks the binary's NEEDED entries), the
//! linked-library calls say why they cannot run, and the loader finds `libcattn.so.<major>`
//! through `LD_LIBRARY_PATH`.

use cattn::dynamic::Library;
use cattn::*;

#[test]
fn everything_runs_through_a_loaded_library() {
    if cfg!(feature = "link") {
        assert!(Api::linked().is_ok());
    } else {
        let e = Api::linked().unwrap_err();
        assert_eq!(e.status(), Status::NotSupported);
        assert!(e.message().contains("without the `link` feature"), "{e}");
        // The free functions call the linked library, so they fail the same way.
        let e = pcp_query_restore_idx(&[0i32, 4]).unwrap_err();
        assert_eq!(e.status(), Status::NotSupported);
        assert!(dynamic::loaded_library_path().is_none());
    }

    let lib = Library::open_default().expect("the loader finds libcattn.so.1 (LD_LIBRARY_PATH)");
    let api = lib.api();
    assert_eq!(api.version().unwrap(), HEADER_VERSION);
    if !cfg!(feature = "link") {
        assert!(dynamic::loaded_library_path().is_some());
    }

    // One-call helpers, as methods of the loaded library.
    let (qsl, seq) = ([0i64, 8, 9, 21, 33], [8i64, 20, 12, 40]);
    assert_eq!(api.pcp_query_restore_idx(&qsl).unwrap().len(), 32);
    assert_eq!(
        api.dcp_local_seq_lens_all_ranks(&seq, 2, 4).unwrap()[1],
        [12, 8]
    );
    assert_eq!(
        api.causal_conv1d_metadata(&qsl, 8).unwrap().nums,
        [1, 1, 2, 2]
    );
    assert_eq!(api.query_lens(&qsl).unwrap(), [8, 1, 12, 12]);
    // The step inputs of 1.2.
    let inputs = api
        .prepare_pos_seq_lens_host(&[3i32, 1, 4], &[2, 0, 9], &[5, 0, 7], Some(2))
        .unwrap();
    assert_eq!(inputs.positions, [7, 8, 9, 5]);
    let sched = [3i32, 1, 4];
    let sizes = api
        .step_inputs_size(&StepInputsSizeArgs {
            num_scheduled_tokens: Some(TensorRef::from_slice(&sched)),
            ..Default::default()
        })
        .unwrap();
    assert_eq!((sizes.num_tokens, sizes.num_logits), (8, 3));
    let params = SlotMappingParams {
        block_size: 4,
        kernel_block_size: 4,
        ..Default::default()
    };
    let table = [[1i32, 2, 3, 4], [5, 6, 7, 8], [10, 11, 12, 13]];
    assert_eq!(
        api.compute_slot_mappings_host(
            &params,
            &inputs.query_start_loc,
            Some(2),
            &inputs.positions,
            Some(&[2, 0, 9]),
            &table,
        )
        .unwrap(),
        [47, 48, 49, 9]
    );
    // The speculative-decoding calls of 1.2.
    let prepared = api
        .eagle_prepare_inputs_padded_host(&[2i64, 2, 5], &[3, 1, 2], &[0, 3, 4, 8])
        .unwrap();
    assert_eq!(prepared.token_indices_to_sample, [2, 3, 5]);
    let sampled = [[5i32, 7, -1], [-1, -1, -1]];
    let next = api
        .eagle_prepare_next_token_padded_host(50, &sampled, Some(&[false, true]), &[11, 12])
        .unwrap();
    assert_eq!(next.next_token_ids, [7, 12]);
    let e = api
        .compute_new_slot_mapping_host(4, 1, 16, &[0i64, 2], &[[3i64, 4]], &[0, 1], None)
        .unwrap_err();
    assert!(
        e.message()
            .starts_with("cattn::compute_new_slot_mapping_host: new_positions "),
        "{e}"
    );

    // A tensor call, and handles that borrow the library.
    let mut lens = [0i32; 4];
    api.get_dcp_local_seq_lens(
        &DcpLocalSeqLensArgs {
            seq_lens: TensorRef::from_slice(&[16i32, 10, 17, 33]),
            dcp_size: 2,
            dcp_rank: DcpRank::Rank(0),
            dcp_kv_cache_interleave_size: 4,
            stream: Stream::DEFAULT,
        },
        &mut TensorMut::from_slice(&mut lens),
    )
    .unwrap();
    assert_eq!(lens, [8, 6, 9, 17]);
    let ctx = api.context_create().unwrap();
    ctx.set_kv_cache_layout_override(Some(KvCacheLayout::Hnd))
        .unwrap();
    assert_eq!(
        api.get_kv_cache_layout(Some(&ctx), &KvCacheLayoutArgs::default())
            .unwrap(),
        KvCacheLayout::Hnd
    );
    let plan = api
        .step_plan_create(&StepPlanDesc {
            products: StepProducts::PCP_QUERY_RESTORE_IDX,
            max_num_reqs: 4,
            max_num_tokens: 64,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(plan.shape().restore_capacity, 64);
    // The local-attention size query and a capped plan, from the loaded table.
    let table: Vec<i64> = (0..36).collect();
    let md = CommonAttnMetadata {
        query_start_loc_cpu: Some(TensorRef::from_slice(&qsl)),
        seq_lens_cpu: Some(TensorRef::from_slice(&seq)),
        block_table_tensor: Some(TensorRef::new(&table, &[4, 9]).unwrap()),
        num_reqs: 4,
        num_actual_tokens: 33,
        ..Default::default()
    };
    let args = LocalAttentionArgs::new(&md, 8, 4);
    let size = api
        .make_local_attention_virtual_batches_size(&args)
        .unwrap();
    let local = api
        .make_local_attention_virtual_batches_with_args(
            &args.with_max_virtual_batches(size.virtual_batches),
        )
        .unwrap();
    assert_eq!(local.shape().unwrap(), size.shape());
    let e = api
        .make_local_attention_virtual_batches_size(
            &args.with_max_virtual_batches(size.virtual_batches - 1),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("args.max_virtual_batches"), "{e}");
    drop(local);
    // The library's messages come through the loaded table too, in Rust terms and as
    // written.
    let e = api.pcp_query_restore_idx(&[0i32, 3]).unwrap_err();
    assert!(
        e.message()
            .starts_with("cattn::pcp_query_restore_idx: cu_num_tokens "),
        "{e}"
    );
    assert!(
        e.c_message()
            .starts_with("cattn_get_pcp_query_restore_idx_size: cu_num_tokens "),
        "{e}"
    );
    // The select's sizes come from the loaded library's table.
    let rows = api.fused_pcp_qkv_select_size(8, 2, 0).unwrap();
    assert_eq!((rows.q, rows.kv_head, rows.kv_tail), (4, 4, 16));
    drop((ctx, plan));
}
