// SPDX-License-Identifier: Apache-2.0
//! Errors: status codes and messages for bad input to every utility, the checks the safe layer
//! makes itself, and that each error carries its own thread's message.

mod support;

use cattn::*;
use support::{expect_error, HostInts, Int, POISON};

fn untouched(t: &HostInts) -> bool {
    t.storage_values().iter().all(|&v| v == POISON)
}

#[test]
fn status_codes_mirror_the_library() {
    let api = Api::linked().unwrap();
    assert_eq!(Status::from_code(0), None);
    for code in 1..=9 {
        let status = Status::from_code(code).unwrap();
        assert_eq!(status.code(), code);
        assert_eq!(
            status.name(),
            api.status_string(code).unwrap(),
            "code {code}"
        );
    }
    // CATTN_STATUS_COUNT_ (9) and anything past it are unknown.
    assert_eq!(Status::from_code(9), Some(Status::Unknown(9)));
    assert_eq!(Status::from_code(42).unwrap().code(), 42);
    assert_eq!(api.status_string(42).unwrap(), "CATTN_UNKNOWN_STATUS");
    assert_eq!(Status::Unknown(42).to_string(), "CATTN_UNKNOWN_STATUS(42)");
    assert_eq!(
        Status::from_code(sys::CATTN_NCCL_ERROR as i32),
        Some(Status::NcclError)
    );
    let err = Error::new(Status::InsufficientSize, "f: x is too small");
    assert_eq!(
        err.to_string(),
        "CATTN_INSUFFICIENT_SIZE: f: x is too small"
    );
    assert_eq!(err.code(), 4);
}

#[test]
fn tensor_views_are_checked_against_their_slices() {
    let data = [0i32; 6];
    let mut out = [0i64; 6];
    let e = TensorRef::new(&data, &[2, 4]).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert_eq!(
        e.message(),
        "cattn::TensorRef::new: shape does not cover the slice (got [2, 4], 8 elements, \
         expected 6 elements, the slice's length)"
    );
    // Every refusal names the constructor and the argument, in the library's form.
    let in_form = |e: Error, function: &str, needle: &str| {
        assert_eq!(e.status(), Status::InvalidArgument);
        let m = e.message();
        assert!(m.starts_with(&format!("cattn::{function}: ")), "{m}");
        assert!(
            m.contains(needle) && m.contains("(got ") && m.contains(", expected "),
            "{m}"
        );
    };
    in_form(
        TensorRef::new(&data, &[2, -3]).unwrap_err(),
        "TensorRef::new",
        "shape has a negative size (got [2, -3], size -3",
    );
    in_form(
        TensorRef::new(&data, &[i64::MAX, 2]).unwrap_err(),
        "TensorRef::new",
        "shape overflows i64",
    );
    assert!(TensorRef::new(&data, &[6, 1, 1]).is_ok());
    // Strided: the last element reached must be inside the slice.
    assert!(TensorRef::strided(&data, &[2, 3], &[3, 1]).is_ok());
    in_form(
        TensorRef::strided(&data, &[2, 3], &[4, 1]).unwrap_err(),
        "TensorRef::strided",
        "strides reach past the slice (got [4, 1] for shape [2, 3], reaching element 6, \
         expected elements below 6",
    );
    in_form(
        TensorRef::strided(&data, &[2, 3], &[3]).unwrap_err(),
        "TensorRef::strided",
        "strides has the wrong length (got 1, expected 2",
    );
    in_form(
        TensorRef::strided(&data, &[2, 3], &[-3, 1]).unwrap_err(),
        "TensorRef::strided",
        "strides has a negative stride",
    );
    in_form(
        TensorRef::strided(&data, &[2, 3], &[i64::MAX, 1]).unwrap_err(),
        "TensorRef::strided",
        "strides overflow i64",
    );
    // Zero sizes reach nothing, whatever the strides.
    assert!(TensorRef::strided(&data[..0], &[0, 3], &[100, 1]).is_ok());
    in_form(
        TensorMut::new(&mut out, &[7]).unwrap_err(),
        "TensorMut::new",
        "shape does not cover the slice",
    );
    assert!(TensorMut::strided(&mut out, &[3], &[2]).is_ok());
    assert!(TensorMut::strided(&mut out, &[4], &[2]).is_err());
    let t = TensorRef::strided(&data, &[3], &[2]).unwrap();
    assert_eq!(
        (t.shape(), t.strides(), t.dtype(), t.device()),
        (&[3i64][..], Some(&[2i64][..]), DataType::I32, Device::Cpu)
    );
    // A clone is an independent description of the same data.
    let c = t.clone();
    drop(t);
    assert_eq!(c.shape(), &[3]);
}

#[test]
fn kv_cache_layout_errors() {
    let mut args = KvCacheLayoutArgs {
        user_setting: UserSetting::Value("nhd"),
        ..Default::default()
    };
    let e = expect_error(
        get_kv_cache_layout(None, &args),
        Status::InvalidArgument,
        "cattn_get_kv_cache_layout: args->env_value is not a valid KV-cache layout",
    );
    assert!(e.message().contains("(got \"nhd\""), "{e}");
    args.user_setting = UserSetting::Value("NHD\0");
    expect_error(
        get_kv_cache_layout(None, &args),
        Status::InvalidArgument,
        "cattn::get_kv_cache_layout: args.user_setting contains a NUL byte (got \"NHD\\0\"",
    );
    assert!(!is_valid_kv_cache_layout("NHD\0").unwrap());
    // A layout outside the backend's set.
    let args = KvCacheLayoutArgs {
        supported: SupportedLayouts::of(&[KvCacheLayout::Hnd]),
        ..Default::default()
    };
    expect_error(
        get_kv_cache_layout(None, &args),
        Status::NotSupported,
        // No argument leads this message, so it keeps the library's wording.
        "cattn_get_kv_cache_layout: the resolved layout is not supported",
    );
    let args = KvCacheLayoutArgs {
        supported: SupportedLayouts::of(&[KvCacheLayout::Hnd, KvCacheLayout::Nhd]),
        ..Default::default()
    };
    assert_eq!(
        get_kv_cache_layout(None, &args).unwrap(),
        KvCacheLayout::Nhd
    );
    let api = Api::linked().unwrap();
    assert_eq!(api.kv_cache_layout_name(2).unwrap().as_deref(), Some("HND"));
    assert_eq!(api.kv_cache_layout_name(7).unwrap(), None);
}

#[test]
fn dcp_local_seq_lens_errors() {
    let seq = HostInts::of(&[4, 5, 6], Int::I32, 1);
    let mut out = HostInts::new(&[3, 2], Int::I64, 1);
    let mut args = DcpLocalSeqLensArgs {
        seq_lens: seq.view(),
        dcp_size: 0,
        dcp_rank: DcpRank::All,
        dcp_kv_cache_interleave_size: 1,
        stream: Stream::DEFAULT,
    };
    let e = expect_error(
        get_dcp_local_seq_lens(&args, &mut out.view_mut()),
        Status::InvalidArgument,
        "cattn::get_dcp_local_seq_lens: args.dcp_size is out of range",
    );
    assert!(e.message().contains("got 0"), "{e}");
    args.dcp_size = 2;
    args.dcp_rank = DcpRank::Rank(2);
    expect_error(
        get_dcp_local_seq_lens(&args, &mut out.view_mut()),
        Status::InvalidArgument,
        "args.dcp_rank",
    );
    args.dcp_rank = DcpRank::Rank(-1);
    expect_error(
        get_dcp_local_seq_lens(&args, &mut out.view_mut()),
        Status::InvalidArgument,
        "cattn::get_dcp_local_seq_lens: args.dcp_rank is negative (got DcpRank::Rank(-1), \
         expected a rank in [0, dcp_size) or DcpRank::All)",
    );
    args.dcp_rank = DcpRank::All;
    let mut short = HostInts::new(&[2, 2], Int::I64, 1);
    expect_error(
        get_dcp_local_seq_lens(&args, &mut short.view_mut()),
        Status::InsufficientSize,
        "cattn::get_dcp_local_seq_lens: out ",
    );
    let floats = [1.0f32, 2.0, 3.0];
    args.seq_lens = TensorRef::from_slice(&floats);
    expect_error(
        get_dcp_local_seq_lens(&args, &mut out.view_mut()),
        Status::InvalidArgument,
        "args.seq_lens",
    );
    assert!(untouched(&out) && untouched(&short));
}

#[test]
fn pcp_query_restore_idx_errors() {
    let odd = HostInts::of(&[0, 3], Int::I64, 1);
    expect_error(
        get_pcp_query_restore_idx_size(&odd.view()),
        Status::InvalidArgument,
        "cattn::get_pcp_query_restore_idx_size: cu_num_tokens ",
    );
    let decreasing = HostInts::of(&[0, 8, 4], Int::I32, 1);
    expect_error(
        get_pcp_query_restore_idx_size(&decreasing.view()),
        Status::InvalidArgument,
        "cu_num_tokens",
    );
    let cu = HostInts::of(&[0, 8, 20], Int::I32, 2);
    let mut small = HostInts::new(&[19], Int::I32, 1);
    expect_error(
        get_pcp_query_restore_idx(&cu.view(), &mut small.view_mut(), Stream::DEFAULT),
        Status::InsufficientSize,
        "cattn::get_pcp_query_restore_idx: restore_idx ",
    );
    assert!(untouched(&small));
    let two_d = HostInts::shaped(&[0, 8, 20, 30], &[2, 2], Int::I64, 1);
    expect_error(
        get_pcp_query_restore_idx_size(&two_d.view()),
        Status::InvalidArgument,
        "ndim",
    );
}

#[test]
fn device_tensors_in_a_build_without_a_gpu() {
    if cuda_device_count().unwrap() != 0 {
        // With a GPU the call would run on the fake pointer below.
        return;
    }
    // A device view is unsafe to make: the pointer is never dereferenced here because the
    // library has no device to run on.
    // Two separate fake addresses: the library refuses an output overlapping its input
    // before it looks for a device.
    let fake_in = 0x1000 as *mut std::ffi::c_void;
    let fake_out = 0x10_0000 as *mut std::ffi::c_void;
    // SAFETY: see above; the library fails before touching device memory.
    let (cu, mut idx) = unsafe {
        (
            TensorRef::from_raw_parts(fake_in, Device::Cuda(0), DataType::I64, &[3], None, 0),
            TensorMut::from_raw_parts(fake_out, Device::Cuda(0), DataType::I64, &[20], None, 0),
        )
    };
    let e = get_pcp_query_restore_idx(&cu, &mut idx, Stream::DEFAULT).unwrap_err();
    assert!(
        matches!(e.status(), Status::NotSupported | Status::NotImplemented),
        "{e}"
    );
    assert!(
        e.message().starts_with("cattn_get_pcp_query_restore_idx: "),
        "{e}"
    );
    // A host mirror must be host memory.
    expect_error(
        get_pcp_query_restore_idx_size(&cu),
        Status::InvalidArgument,
        "cu_num_tokens",
    );
}

#[test]
fn fused_pcp_qkv_select_errors() {
    let q = [0i32; 8];
    let qsl_odd = [0i64, 3];
    let mut bufs = vec![vec![0i32; 4]; 4];
    bufs.extend([vec![0i32; 8], vec![0i32; 8]]);
    let [qh, kh, vh, qt, kt, vt] = &mut bufs[..] else {
        unreachable!()
    };
    let args = FusedPcpQkvSelectArgs {
        q: TensorRef::new(&q, &[8, 1, 1]).unwrap(),
        k: TensorRef::new(&q, &[8, 1, 1]).unwrap(),
        v: TensorRef::new(&q, &[8, 1, 1]).unwrap(),
        query_start_loc: TensorRef::from_slice(&qsl_odd),
        pcp_world_size: 1,
        pcp_rank: 0,
        stream: Stream::DEFAULT,
    };
    let mut out = FusedPcpQkvSelectOutputs {
        q_head: TensorMut::new(qh, &[4, 1, 1]).unwrap(),
        k_head: TensorMut::new(kh, &[4, 1, 1]).unwrap(),
        v_head: TensorMut::new(vh, &[4, 1, 1]).unwrap(),
        q_tail: TensorMut::new(qt, &[4, 1, 1]).unwrap(),
        k_tail: TensorMut::new(kt, &[8, 1, 1]).unwrap(),
        v_tail: TensorMut::new(vt, &[8, 1, 1]).unwrap(),
    };
    expect_error(
        fused_pcp_qkv_select(&args, &mut out),
        Status::InvalidArgument,
        "cattn::fused_pcp_qkv_select: args.query_start_loc",
    );
    let qsl = [0i64, 8];
    let args = FusedPcpQkvSelectArgs {
        query_start_loc: TensorRef::from_slice(&qsl),
        pcp_rank: 1,
        ..args
    };
    expect_error(
        fused_pcp_qkv_select(&args, &mut out),
        Status::InvalidArgument,
        "args.pcp_rank",
    );
    let args = FusedPcpQkvSelectArgs {
        pcp_world_size: 2,
        ..args
    };
    // k_head needs Nq/2 * (r + 1) = 8 rows, k_tail Nq/2 * (2W - r) = 12.
    expect_error(
        fused_pcp_qkv_select(&args, &mut out),
        Status::InsufficientSize,
        "cattn::fused_pcp_qkv_select: out.",
    );
    drop(out);
    assert!(bufs.iter().flatten().all(|&v| v == 0));
}

#[test]
fn communicator_argument_errors() {
    let id = CommUniqueId([0; 128]);
    expect_error(
        Comm::new(&id, 0, 0, 0),
        Status::InvalidArgument,
        "cattn::Comm::new: nranks is out of range",
    );
    expect_error(
        Comm::new(&id, 2, 2, 0),
        Status::InvalidArgument,
        "rank is out of range (got 2, expected [0, 2))",
    );
    expect_error(
        Comm::new(&id, 1, 0, -1),
        Status::InvalidArgument,
        "cuda_device is negative",
    );
    // SAFETY: NULL is rejected before anything is read.
    let e = unsafe { Comm::borrowed(std::ptr::null_mut()) };
    expect_error(
        e,
        Status::InvalidArgument,
        "cattn::Comm::borrowed: nccl_comm",
    );
    if cuda_device_count().unwrap() == 0 {
        // No GPU: valid arguments still cannot make a communicator.
        let e = Comm::new(&id, 1, 0, 0).unwrap_err();
        assert!(
            matches!(e.status(), Status::NotSupported | Status::NcclError),
            "{e}"
        );
    }
    match comm_get_unique_id() {
        Ok(id) => assert_ne!(id.0, [0; 128]),
        Err(e) => {
            // A CPU-only build, or NCCL missing.
            assert_eq!(e.status(), Status::NotSupported, "{e}");
            assert!(e.message().starts_with("cattn_comm_get_unique_id: "), "{e}");
        }
    }
}

#[test]
fn causal_conv1d_metadata_errors() {
    let qsl = HostInts::of(&[0, 10, 16, 17], Int::I64, 1);
    expect_error(
        compute_causal_conv1d_metadata_size(&qsl.view(), 0),
        Status::InvalidArgument,
        "cattn::compute_causal_conv1d_metadata_size: block_m is out of range",
    );
    let decreasing = HostInts::of(&[0, 10, 6], Int::I32, 1);
    expect_error(
        compute_causal_conv1d_metadata_size(&decreasing.view(), 8),
        Status::InvalidArgument,
        "query_start_loc_cpu",
    );
    let mut nums = HostInts::new(&[2], Int::I32, 1);
    let mut mlist = HostInts::new(&[4], Int::I32, 1);
    expect_error(
        compute_causal_conv1d_metadata(
            &qsl.view(),
            8,
            &mut CausalConv1dOutputs {
                nums: Some(nums.view_mut()),
                mlist: Some(mlist.view_mut()),
                ..Default::default()
            },
            Stream::DEFAULT,
        ),
        Status::InsufficientSize,
        "cattn::compute_causal_conv1d_metadata: out.nums ",
    );
    assert!(untouched(&nums) && untouched(&mlist));
}

#[test]
fn extend_all_queries_by_n_errors() {
    let (q, s) = (
        HostInts::of(&[0, 3, 7], Int::I32, 1),
        HostInts::of(&[5, 4], Int::I32, 1),
    );
    let md = CommonAttnMetadata {
        query_start_loc: Some(q.view()),
        seq_lens: Some(s.view()),
        num_reqs: 2,
        num_actual_tokens: 7,
        max_query_len: 4,
        max_seq_len: 5,
        ..Default::default()
    };
    let mut qo = HostInts::new(&[3], Int::I32, 1);
    let mut so = HostInts::new(&[2], Int::I32, 1);
    let mut mirror = HostInts::new(&[3], Int::I32, 1);
    let mut run = |n: i64, with_mirror: bool| {
        extend_all_queries_by_n(
            &md,
            n,
            None,
            &mut ExtendOutputs {
                query_start_loc: qo.view_mut(),
                query_start_loc_cpu: with_mirror.then(|| mirror.view_mut()),
                seq_lens: so.view_mut(),
                seq_lens_cpu: None,
            },
            Stream::DEFAULT,
        )
    };
    expect_error(
        run(-1, false),
        Status::InvalidArgument,
        "cattn::extend_all_queries_by_n: n ",
    );
    // A mirror on the output side only.
    expect_error(run(1, true), Status::InvalidArgument, "query_start_loc_cpu");
    assert!(untouched(&qo) && untouched(&so) && untouched(&mirror));
    let mut short = HostInts::new(&[2], Int::I32, 1);
    let mut so = HostInts::new(&[2], Int::I32, 1);
    expect_error(
        extend_all_queries_by_n(
            &md,
            1,
            None,
            &mut ExtendOutputs {
                query_start_loc: short.view_mut(),
                query_start_loc_cpu: None,
                seq_lens: so.view_mut(),
                seq_lens_cpu: None,
            },
            Stream::DEFAULT,
        ),
        Status::InsufficientSize,
        "query_start_loc",
    );
}

#[test]
fn fast_prefill_errors() {
    let q = HostInts::of(&[0, 4, 8], Int::I32, 1);
    let md = CommonAttnMetadata {
        query_start_loc: Some(q.view()),
        num_reqs: 2,
        max_query_len: 4,
        ..Default::default()
    };
    let mut qo = HostInts::new(&[3], Int::I32, 1);
    expect_error(
        make_kv_sharing_fast_prefill_common_attn_metadata(
            &md,
            &mut FastPrefillOutputs {
                query_start_loc: qo.view_mut(),
                query_start_loc_cpu: None,
                decode_max_and_total: None,
            },
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::make_kv_sharing_fast_prefill_common_attn_metadata: metadata.",
    );
    assert!(untouched(&qo));
}

#[test]
fn local_attention_errors() {
    let (q, s) = (
        HostInts::of(&[0, 4], Int::I32, 1),
        HostInts::of(&[6], Int::I32, 1),
    );
    let table: Vec<i64> = (0..3).collect();
    let md = CommonAttnMetadata {
        query_start_loc_cpu: Some(q.view()),
        seq_lens_cpu: Some(s.view()),
        block_table_tensor: Some(TensorRef::new(&table, &[1, 3]).unwrap()),
        num_reqs: 1,
        num_actual_tokens: 4,
        ..Default::default()
    };
    expect_error(
        LocalAttentionPlan::new(&md, 4, 3),
        Status::InvalidArgument,
        "cattn::LocalAttentionPlan::new: block_size ",
    );
    let no_mirror = CommonAttnMetadata {
        seq_lens_cpu: None,
        ..md.clone()
    };
    expect_error(
        make_local_attention_virtual_batches(&no_mirror, 4, 2),
        Status::InvalidArgument,
        "seq_lens_cpu",
    );
    let plan = LocalAttentionPlan::new(&md, 4, 2).unwrap();
    let shape = plan.shape().unwrap();
    let (v, p) = (shape.virtual_batches, shape.pages);
    let mut qo = HostInts::new(&[v + 1], Int::I32, 1);
    let mut so = HostInts::new(&[v], Int::I32, 1);
    let mut co = HostInts::new(&[v], Int::I32, 1);
    let mut bt = HostInts::new(&[v, p - 1], Int::I64, 1);
    expect_error(
        plan.fill(
            &md,
            &mut LocalAttentionOutputs {
                query_start_loc_cpu: qo.view_mut(),
                seq_lens_cpu: so.view_mut(),
                num_computed_tokens_cpu: co.view_mut(),
                block_table_tensor: bt.view_mut(),
                query_start_loc: None,
                seq_lens: None,
            },
            Stream::DEFAULT,
        ),
        Status::InsufficientSize,
        "cattn::LocalAttentionPlan::fill: out.block_table_tensor ",
    );
    assert!(untouched(&qo) && untouched(&so) && untouched(&co) && untouched(&bt));
    // make_block_table: the output's dtype must be the table's.
    let mut wrong = HostInts::new(&[v, p], Int::I32, 1);
    expect_error(
        plan.make_block_table(
            &TensorRef::new(&table, &[1, 3]).unwrap(),
            &mut wrong.view_mut(),
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::LocalAttentionPlan::make_block_table: out ",
    );
}

#[test]
fn mamba_block_table_errors() {
    let table: Vec<i64> = (0..8).collect();
    let seq = [16i64, 100];
    let mut out = HostInts::new(&[2, 2], Int::I64, 1);
    let mut args = MambaBlockTableArgs {
        block_table: TensorRef::new(&table, &[2, 4]).unwrap(),
        seq_lens: Some(TensorRef::from_slice(&seq)),
        block_size: 0,
        num_speculative_blocks: 1,
        mode: MambaCacheMode::Align,
        stream: Stream::DEFAULT,
    };
    expect_error(
        mamba_get_block_table_tensor(&args, &mut out.view_mut()),
        Status::InvalidArgument,
        "cattn::mamba_get_block_table_tensor: args.block_size",
    );
    // Request 1 starts at column (100 - 1) // 16 = 6, past its 4 columns.
    args.block_size = 16;
    expect_error(
        mamba_get_block_table_tensor(&args, &mut out.view_mut()),
        Status::InvalidArgument,
        "past the end of a row",
    );
    args.seq_lens = None;
    expect_error(
        mamba_get_block_table_tensor(&args, &mut out.view_mut()),
        Status::InvalidArgument,
        "cattn::mamba_get_block_table_tensor: args.seq_lens ",
    );
    args.mode = MambaCacheMode::All;
    expect_error(
        mamba_get_block_table_tensor(&args, &mut out.view_mut()),
        Status::InsufficientSize,
        "cattn::mamba_get_block_table_tensor: out ",
    );
    assert!(untouched(&out));
}

#[test]
fn per_layer_parameter_errors() {
    expect_error(
        infer_global_hyperparameters(&[]),
        Status::InvalidArgument,
        "cattn::infer_global_hyperparameters: params.len() is zero",
    );
    // No layers is a valid (empty) model for the per-layer conversion.
    assert!(get_per_layer_parameters(&[]).unwrap().is_empty());
}

/// Each thread's error carries that thread's message, even while others fail concurrently.
#[test]
fn messages_are_per_thread() {
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let seq = [1i32, 2, 3];
                let mut out = [0i32; 3];
                for i in 0..200 {
                    let bad = -(t * 1000 + i);
                    let args = DcpLocalSeqLensArgs {
                        seq_lens: TensorRef::from_slice(&seq),
                        dcp_size: bad,
                        dcp_rank: DcpRank::All,
                        dcp_kv_cache_interleave_size: 1,
                        stream: Stream::DEFAULT,
                    };
                    let e = get_dcp_local_seq_lens(&args, &mut TensorMut::from_slice(&mut out))
                        .unwrap_err();
                    assert!(
                        e.message().contains(&format!("(got {bad},")),
                        "thread {t}: {e}"
                    );
                    // A success in between leaves the next failure's message intact.
                    assert!(is_valid_kv_cache_layout("NHD").unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn other_1_1_helper_errors() {
    expect_error(
        max_local_attention_virtual_batches(0, 1, 1),
        Status::InvalidArgument,
        "cattn::max_local_attention_virtual_batches: attn_chunk_size ",
    );
    expect_error(
        max_local_attention_virtual_batches(4, -1, 1),
        Status::InvalidArgument,
        "cattn::max_local_attention_virtual_batches: max_num_seqs ",
    );

    // N-D lengths keep the rank axis: a squeezed [B] out for all ranks of a group of one is
    // refused, and nothing is written.
    let seq = HostInts::of(&[4, 9, 0], Int::I64, 1);
    let mut squeezed = HostInts::new(&[3], Int::I64, 1);
    let args = DcpLocalSeqLensArgs {
        seq_lens: seq.view(),
        dcp_size: 1,
        dcp_rank: DcpRank::All,
        dcp_kv_cache_interleave_size: 1,
        stream: Stream::DEFAULT,
    };
    expect_error(
        get_dcp_local_seq_lens_nd(&args, &mut squeezed.view_mut()),
        Status::InvalidArgument,
        "cattn::get_dcp_local_seq_lens_nd: out has the wrong ndim",
    );
    assert!(untouched(&squeezed));

    let offsets = [0i32, 2, 1];
    let ranges = [1i32, 2, 3, 4];
    let csr = MmPrefixRanges {
        offsets: TensorRef::from_slice(&offsets),
        ranges: TensorRef::new(&ranges, &[2, 2]).unwrap(),
    };
    expect_error(
        compute_mm_prefix_range_tensor_size(Some(&csr)),
        Status::InvalidArgument,
        "cattn::compute_mm_prefix_range_tensor_size: ranges.offsets decreases",
    );
    let good = [0i32, 1];
    let csr = MmPrefixRanges {
        offsets: TensorRef::from_slice(&good),
        ranges: TensorRef::new(&[0i32, 9], &[1, 2]).unwrap(),
    };
    let mut out = HostInts::new(&[3, 2], Int::I32, 1);
    expect_error(
        fill_mm_prefix_query_ranges(
            Some(&csr),
            &TensorRef::from_slice(&[0i32, 4]),
            &TensorRef::from_slice(&[4i32]),
            &mut out.view_mut(),
        ),
        Status::InsufficientSize,
        "cattn::fill_mm_prefix_query_ranges: out ",
    );
    assert!(untouched(&out));

    let lse = [1.0f32, 2.0, 3.0];
    let mut short = [0f32; 2];
    expect_error(
        log2_lse_to_ln(
            &TensorRef::from_slice(&lse),
            &mut TensorMut::from_slice(&mut short),
            LseRounding::Torch,
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "cattn::log2_lse_to_ln: out has the wrong size",
    );
    assert_eq!(short, [0.0, 0.0]);
}

/// The library's messages come out in Rust terms: the Rust function, and the parameter or
/// field that carries the argument; `c_message()` keeps the library's wording.
#[test]
fn messages_name_arguments_in_rust_terms() {
    use cattn::{
        fused_pcp_qkv_select_size, pcp_qkv_halves, split_query_start_loc, HeadRows, SplitBatch,
        SplitOptions,
    };
    // A positional parameter of the same name.
    let e = fused_pcp_qkv_select_size(8, 0, 0).unwrap_err();
    assert_eq!(
        e.message(),
        "cattn::fused_pcp_qkv_select_size: pcp_world_size is out of range (got 0, expected >= 1)"
    );
    assert_eq!(
        e.c_message(),
        "cattn_fused_pcp_qkv_select_size: pcp_world_size is out of range (got 0, expected >= 1)"
    );
    // A one-call helper names its own parameters, whichever C call it made refused them.
    let q = [1.0f32; 8];
    let rows = |data| HeadRows {
        data,
        heads: 1,
        head_dim: 1,
    };
    let e = pcp_qkv_halves(rows(&q), rows(&q), rows(&q), &[0i32, 8], 2, 2).unwrap_err();
    assert_eq!(
        e.message(),
        "cattn::pcp_qkv_halves: pcp_rank is out of range (got 2, expected [0, 2))"
    );
    assert!(
        e.c_message()
            .starts_with("cattn_fused_pcp_qkv_select_size: pcp_rank "),
        "{e:?}"
    );
    let e = pcp_qkv_halves(rows(&q), rows(&q), rows(&q), &[0i32, 3], 1, 0).unwrap_err();
    assert!(
        e.message()
            .starts_with("cattn::pcp_qkv_halves: query_start_loc "),
        "{e:?}"
    );
    assert!(
        e.c_message()
            .starts_with("cattn_fused_pcp_qkv_select: args->query_start_loc "),
        "{e:?}"
    );
    let e = split_query_start_loc(&[0i64, 1, 3], -1).unwrap_err();
    assert!(
        e.message().starts_with(
            "cattn::split_query_start_loc: decode_threshold is out of range (got -1, "
        ),
        "{e:?}"
    );
    assert!(
        e.c_message()
            .starts_with("cattn_split_decodes_and_prefills: args->decode_threshold "),
        "{e:?}"
    );
    // A field of the struct argument.
    let qsl = [0i64, 1, 3];
    let batch = SplitBatch {
        num_reqs: 3,
        ..SplitBatch::from_query_start_loc(TensorRef::from_slice(&qsl))
    };
    let e = cattn::split_decodes_and_prefills(&batch, &SplitOptions::default()).unwrap_err();
    assert!(
        e.message()
            .starts_with("cattn::split_decodes_and_prefills: batch.query_start_loc_cpu "),
        "{e:?}"
    );
    // The crate's own checks never reached the library: c_message() is message().
    let e = cattn::dcp_local_seq_lens(&[16i64], 2, -1, 4).unwrap_err();
    assert_eq!(e.c_message(), e.message());
    // A call the table does not cover keeps the library's wording.
    let e = cattn::resolve_layout(&[]).unwrap_err();
    assert_eq!(e.message(), e.c_message());
    assert!(
        e.message()
            .starts_with("cattn_resolve_kv_cache_layout: args->worker_counts[0] "),
        "{e:?}"
    );
    // A path below a listed one keeps its rest, "->" written ".".
    let e = cattn::naive_query_lens(
        &cattn::CommonAttnMetadata::default(),
        &mut TensorMut::from_slice(&mut [0i64; 2]),
        cattn::Stream::DEFAULT,
    )
    .unwrap_err();
    assert!(
        e.message()
            .starts_with("cattn::naive_query_lens: metadata.query_start_loc "),
        "{e:?}"
    );
    assert!(
        e.c_message()
            .starts_with("cattn_naive_query_lens: args->metadata->query_start_loc "),
        "{e:?}"
    );
}
