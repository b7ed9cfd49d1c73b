// SPDX-License-Identifier: Apache-2.0
//! The run-time loader: dlopen a libcattn, call through its table, refuse what is not one.

mod support;

use std::path::PathBuf;

use cattn::dynamic::{loaded_library_path, Library};
use cattn::*;
use support::{expect_error, load_cases, HostInts, Int};

/// A copy of the linked library under another file name, so that dlopen loads a second,
/// independent instance (its own table, its own thread-local error state).
struct Copy(PathBuf);

impl Copy {
    fn new(tag: &str) -> Copy {
        let src = loaded_library_path().expect("the linked libcattn is mapped");
        let dir = std::env::temp_dir().join(format!("cattn-dyn-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dst = dir.join("libcattn-copy.so");
        std::fs::copy(&src, &dst).unwrap();
        Copy(dst)
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

#[test]
fn opening_the_linked_library_gives_its_table() {
    let path = loaded_library_path().unwrap();
    let lib = Library::open(&path).unwrap();
    assert_eq!(lib.path(), path);
    // dlopen of an object already loaded returns it: the same table.
    assert!(lib.api().same_library(Api::linked().unwrap()));
    // The soname, found through the loader's search path (LD_LIBRARY_PATH in the tests).
    let by_name = Library::open_default().unwrap();
    assert_eq!(by_name.api().version().unwrap(), HEADER_VERSION);
}

#[test]
fn a_second_instance_runs_the_conformance_vectors() {
    let copy = Copy::new("vectors");
    let lib = Library::open(&copy.0).unwrap();
    let api = lib.api();
    assert!(!api.same_library(Api::linked().unwrap()));
    assert_eq!(api.version().unwrap(), HEADER_VERSION);
    assert_eq!(
        api.version_string().unwrap(),
        cattn::version_string().unwrap()
    );
    assert_eq!(
        api.cuda_device_count().unwrap(),
        cuda_device_count().unwrap()
    );

    for c in load_cases("get_pcp_query_restore_idx") {
        let cu = HostInts::of(&c.get("cu_num_tokens").ints(), Int::I32, 2);
        let want = c.get("restore_idx").ints();
        let size = api.get_pcp_query_restore_idx_size(&cu.view()).unwrap();
        let mut out = HostInts::new(&[size], Int::I64, 1);
        api.get_pcp_query_restore_idx(&cu.view(), &mut out.view_mut(), Stream::DEFAULT)
            .unwrap();
        assert_eq!(out.values(), want, "{}", c.get("name").str());
    }
    for c in load_cases("mamba_get_block_table_tensor") {
        let seq = c.get("seq_lens").ints();
        let cols = c.get("cols").i64();
        let table = HostInts::shaped(
            &c.get("block_table").flat_ints(),
            &[seq.len() as i64, cols],
            Int::I64,
            1,
        );
        let mode = [
            MambaCacheMode::None,
            MambaCacheMode::All,
            MambaCacheMode::Align,
        ][c.get("mode").i64() as usize];
        let out_cols = if mode == MambaCacheMode::Align {
            1 + c.get("num_speculative_blocks").i64()
        } else {
            cols
        };
        let seq_t = HostInts::of(&seq, Int::I64, 1);
        let mut out = HostInts::new(&[seq.len() as i64, out_cols], Int::I64, 1);
        let got = api.mamba_get_block_table_tensor(
            &MambaBlockTableArgs {
                block_table: table.view(),
                seq_lens: Some(seq_t.view()),
                block_size: c.get("block_size").i64(),
                num_speculative_blocks: c.get("num_speculative_blocks").i64(),
                mode,
                stream: Stream::DEFAULT,
            },
            &mut out.view_mut(),
        );
        if c.opt("error").is_some_and(|e| e.bool()) {
            // The message comes from the copy's own thread-local state.
            expect_error(got, Status::InvalidArgument, "past the end of a row");
        } else {
            got.unwrap();
            assert_eq!(out.values(), c.get("out").flat_ints());
        }
    }
}

#[test]
fn handles_of_a_loaded_library() {
    let copy = Copy::new("handles");
    let lib = Library::open(&copy.0).unwrap();
    let api = lib.api();
    for _ in 0..1000 {
        let ctx = api.context_create().unwrap();
        ctx.set_kv_cache_layout_override(Some(KvCacheLayout::Hnd))
            .unwrap();
        assert_eq!(
            api.get_kv_cache_layout(Some(&ctx), &KvCacheLayoutArgs::default())
                .unwrap(),
            KvCacheLayout::Hnd
        );
    }
    let ctx = api.context_create().unwrap();
    // The linked library refuses the copy's context.
    expect_error(
        get_kv_cache_layout(Some(&ctx), &KvCacheLayoutArgs::default()),
        Status::InvalidArgument,
        "another libcattn",
    );
    drop(ctx);
    let layers = [AttentionLayerDesc::default()];
    let p = api.get_per_layer_parameters(&layers).unwrap();
    let g = api.infer_global_hyperparameters(&p).unwrap();
    assert!(g.has_same_all_params);
    drop(lib);
    // Unloaded and loaded again.
    let again = Library::open(&copy.0).unwrap();
    assert!(again.api().is_valid_kv_cache_layout("NHD").unwrap());
}

/// The 1.1 entries (the step plan and the two device calls) through a loaded copy's table.
#[test]
fn the_step_plan_and_device_calls_of_a_loaded_library() {
    let copy = Copy::new("step");
    let lib = Library::open(&copy.0).unwrap();
    let api = lib.api();
    let desc = StepPlanDesc {
        products: StepProducts::ALL,
        max_num_reqs: 8,
        max_num_tokens: 100,
        max_num_blocks_per_req: 16,
        conv1d: StepConv1dParams { block_m: 8 },
        local_attention: StepLocalAttentionParams {
            attn_chunk_size: 32,
            block_size: 8,
        },
        mamba: StepMambaParams {
            block_size: 16,
            num_speculative_blocks: 1,
            mode: MambaCacheMode::Align,
        },
        ..Default::default()
    };
    let plan = api.step_plan_create(&desc).unwrap();
    assert!(plan.api().same_library(api));
    // The same shape as the linked library's plan.
    assert_eq!(plan.shape(), StepPlan::new(&desc).unwrap().shape());
    assert_eq!(
        plan.shape(),
        StepPlanShape {
            restore_capacity: 100,
            conv1d_capacity: 13 + 8,
            // min(2 * 8 + cdiv(100, 32), 100 + 8)
            local_capacity: 20,
            local_pages: 4,
            mamba_columns: 2,
            draft_token_capacity: 0,
        }
    );
    assert_eq!(plan.workspace_size(), 0);
    // Errors come from the copy's own thread-local state.
    expect_error(
        api.step_plan_create(&StepPlanDesc {
            max_num_tokens: -1,
            ..desc
        }),
        Status::InvalidArgument,
        "cattn::step_plan_create: desc.max_num_tokens",
    );
    let qsl = HostInts::of(&[0, 10, 16, 17], Int::I32, 1);
    let seq = HostInts::of(&[10, 6, 1], Int::I32, 1);
    let mut eq = HostInts::new(&[4], Int::I32, 1);
    let mut es = HostInts::new(&[3], Int::I32, 1);
    let extend_only = api
        .step_plan_create(&StepPlanDesc {
            products: StepProducts::EXTEND_QUERIES,
            ..desc
        })
        .unwrap();
    expect_error(
        extend_only.run(
            &StepBatch {
                query_start_loc: Some(qsl.view()),
                seq_lens: Some(seq.view()),
                ..Default::default()
            },
            &mut StepOutputs {
                extend_query_start_loc: Some(eq.view_mut()),
                extend_seq_lens: Some(es.view_mut()),
                ..Default::default()
            },
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::StepPlan::run: batch.query_start_loc is not device memory",
    );
    let mut nums = HostInts::new(&[3], Int::I32, 1);
    expect_error(
        api.compute_causal_conv1d_metadata_capturable(
            &qsl.view(),
            8,
            &mut CausalConv1dCapturableOutputs {
                nums: Some(nums.view_mut()),
                ..Default::default()
            },
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::compute_causal_conv1d_metadata_capturable: query_start_loc ",
    );
    let table = HostInts::shaped(&(0..12).collect::<Vec<_>>(), &[3, 4], Int::I32, 1);
    let mut qo = HostInts::new(&[9], Int::I32, 1);
    let mut so = HostInts::new(&[8], Int::I32, 1);
    expect_error(
        api.make_local_attention_virtual_batches_capturable(
            &LocalAttentionCapturableArgs {
                attn_chunk_size: 4,
                block_size: 2,
                query_start_loc: qsl.view(),
                seq_lens: seq.view(),
                block_table: table.view(),
                stream: Stream::DEFAULT,
            },
            &mut LocalAttentionCapturableOutputs {
                query_start_loc_out: qo.view_mut(),
                seq_lens_out: so.view_mut(),
                num_computed_tokens_out: None,
                block_table_out: None,
                counts: None,
            },
        ),
        Status::InvalidArgument,
        "cattn::make_local_attention_virtual_batches_capturable: args.query_start_loc ",
    );
    // Plans are dropped (destroyed in the copy) before the library is unloaded.
    drop((plan, extend_only));
    drop(lib);
}

#[test]
fn what_is_not_a_libcattn_is_refused() {
    let e = Library::open("/nonexistent/libcattn.so").unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(
        e.message()
            .contains("cannot load /nonexistent/libcattn.so:"),
        "{e}"
    );
    assert!(e.message().contains("No such file"), "{e}");
    let e = Library::open("libm.so.6").unwrap_err();
    assert!(e.message().contains("has no cattn_get_api"), "{e}");
    let e = Library::open("bad\0name").unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .starts_with("cattn::dynamic::Library::open: path contains a NUL byte (got"),
        "{e}"
    );
}
