// SPDX-License-Identifier: Apache-2.0
//! Conformance: every utility against the seed oracle's vectors in tests/vectors, through the
//! safe API, with int32 and int64 tensors and compact and strided views.
//!
//! pcp_kv_allgather_and_restore (the NCCL all-gather) has no vectors: it needs GPUs and NCCL; its argument checks
//! and handle plumbing are in errors.rs and handles.rs.

mod support;

use cattn::*;
use support::json::Json;
use support::{dtypes_for, load_cases, HostInts, Int, BOTH, POISON};

// ---------------------------------------------------------------------------------------------
// 1. KV-cache layout
// ---------------------------------------------------------------------------------------------

fn layout_of(j: &Json) -> Option<KvCacheLayout> {
    if j.is_null() {
        None
    } else {
        Some(KvCacheLayout::from_name(j.str()).expect("a layout name"))
    }
}

#[test]
fn get_kv_cache_layout_vectors() {
    let (mut resolved, mut valid_checks) = (0, 0);
    for c in load_cases("get_kv_cache_layout") {
        let name = c.get("name").str();
        if c.has("is_valid") {
            let got = is_valid_kv_cache_layout(c.get("is_valid").str()).unwrap();
            assert_eq!(got, c.get("valid").bool(), "{name}");
            valid_checks += 1;
            continue;
        }
        resolved += 1;
        let env = (!c.get("env").is_null()).then(|| c.get("env").str());
        let expect = c.get("layout").str();
        let ctx = Context::new().unwrap();
        ctx.set_kv_cache_layout_override(layout_of(c.get("override")))
            .unwrap();
        let args = KvCacheLayoutArgs {
            supported: SupportedLayouts::ANY,
            user_setting: env.map_or(UserSetting::Unset, UserSetting::Value),
            connector: layout_of(c.get("connector")),
        };
        let got = get_kv_cache_layout(Some(&ctx), &args);
        if expect == "error" {
            let err = support::expect_error(
                got.clone(),
                Status::InvalidArgument,
                "args->env_value is not a valid",
            );
            assert!(
                err.message().contains(&format!("\"{}\"", env.unwrap())),
                "{name}: {err}"
            );
        } else {
            assert_eq!(got.as_ref().unwrap().name(), expect, "{name}");
        }
        // Without an override, no context resolves the same way.
        if c.get("override").is_null() {
            assert_eq!(get_kv_cache_layout(None, &args), got, "{name}");
        }
    }
    assert_eq!(resolved, 72);
    assert!(valid_checks >= 8);
}

// ---------------------------------------------------------------------------------------------
// 2. DCP local sequence lengths
// ---------------------------------------------------------------------------------------------

#[test]
fn get_dcp_local_seq_lens_vectors() {
    let cases = load_cases("get_dcp_local_seq_lens");
    assert!(cases.len() > 20);
    for c in &cases {
        let name = c.get("name").str();
        let seq = c.get("seq_lens").ints();
        let rank = match c.get("dcp_rank").i64() {
            -1 => DcpRank::All,
            r => DcpRank::Rank(r),
        };
        let shape = c.get("shape").ints();
        let want = c.get("out").ints();
        for in_t in dtypes_for(&seq) {
            for out_t in dtypes_for(&want) {
                for step in [1, 2] {
                    let input = HostInts::of(&seq, in_t, step);
                    let mut out = HostInts::new(&shape, out_t, step);
                    let args = DcpLocalSeqLensArgs {
                        seq_lens: input.view(),
                        dcp_size: c.get("dcp_size").i64(),
                        dcp_rank: rank,
                        dcp_kv_cache_interleave_size: c.get("interleave").i64(),
                        stream: Stream::DEFAULT,
                    };
                    get_dcp_local_seq_lens(&args, &mut out.view_mut())
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(out.values(), want, "{name} {in_t:?}->{out_t:?} step {step}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 3. PCP query restore index
// ---------------------------------------------------------------------------------------------

#[test]
fn get_pcp_query_restore_idx_vectors() {
    for c in load_cases("get_pcp_query_restore_idx") {
        let name = c.get("name").str();
        let cu = c.get("cu_num_tokens").ints();
        let want = c.get("restore_idx").ints();
        for in_t in BOTH {
            for out_t in BOTH {
                for step in [1, 3] {
                    let input = HostInts::of(&cu, in_t, step);
                    let size = get_pcp_query_restore_idx_size(&input.view()).unwrap();
                    assert_eq!(size as usize, want.len(), "{name}");
                    // Three spare entries: set to -1.
                    let mut out = HostInts::new(&[size + 3], out_t, step);
                    get_pcp_query_restore_idx(&input.view(), &mut out.view_mut(), Stream::DEFAULT)
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    let mut expect = want.clone();
                    expect.extend([-1, -1, -1]);
                    assert_eq!(
                        out.values(),
                        expect,
                        "{name} {in_t:?}->{out_t:?} step {step}"
                    );
                }
            }
        }
        assert_eq!(pcp_query_restore_idx(&cu).unwrap(), want, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Fused PCP Q/K/V select
// ---------------------------------------------------------------------------------------------

/// An element type of the Q/K/V tensors, and the value stored for a source element.
trait Pattern: Element + PartialEq + std::fmt::Debug {
    fn at(salt: i64, index: i64) -> Self;
    fn poison() -> Self;
}

impl Pattern for i64 {
    fn at(salt: i64, index: i64) -> Self {
        salt * 1_000_000_007 + index
    }
    fn poison() -> Self {
        POISON
    }
}

impl Pattern for f32 {
    fn at(salt: i64, index: i64) -> Self {
        // Exact in f32 for every index of the vectors (< 2^16) and salt.
        (salt * 65536 + index) as f32
    }
    fn poison() -> Self {
        -1.5
    }
}

impl Pattern for u16 {
    fn at(salt: i64, index: i64) -> Self {
        // 16 bits cannot hold every index: collisions can hide a wrong row but never fake a
        // right one, and the wider types check the indices exactly.
        ((salt * 7919 + index) % 65521) as u16
    }
    fn poison() -> Self {
        0xFFFF
    }
}

/// A `[n, h, d]` tensor whose rows are `row_pad` elements longer than needed (a strided view
/// in dim 0) and whose element (i, j, k) holds `T::at(salt, flat index)`.
struct Rows<T> {
    data: Vec<T>,
    shape: [i64; 3],
    row_pad: i64,
}

impl<T: Pattern> Rows<T> {
    fn input(shape: [i64; 3], salt: i64, row_pad: i64) -> Rows<T> {
        let [n, h, d] = shape;
        let row = h * d + row_pad;
        let len = if n * h * d == 0 {
            0
        } else {
            (n - 1) * row + h * d
        };
        let mut data = vec![T::poison(); len as usize];
        for i in 0..n {
            for e in 0..h * d {
                data[(i * row + e) as usize] = T::at(salt, i * h * d + e);
            }
        }
        Rows {
            data,
            shape,
            row_pad,
        }
    }

    fn output(shape: [i64; 3]) -> Rows<T> {
        Rows {
            data: vec![T::poison(); (shape[0] * shape[1] * shape[2]) as usize],
            shape,
            row_pad: 0,
        }
    }

    fn view(&self) -> TensorRef<'_> {
        let [_, h, d] = self.shape;
        TensorRef::strided(&self.data, &self.shape, &[h * d + self.row_pad, d, 1]).unwrap()
    }

    fn view_mut(&mut self) -> TensorMut<'_> {
        TensorMut::new(&mut self.data, &self.shape).unwrap()
    }

    /// Checks that output element p holds source element want[p] (-1: left unwritten).
    fn expect(&self, salt: i64, want: &[i64], what: &str) {
        assert_eq!(self.data.len(), want.len(), "{what}: size");
        for (p, (&got, &src)) in self.data.iter().zip(want).enumerate() {
            let expect = if src < 0 {
                T::poison()
            } else {
                T::at(salt, src)
            };
            assert_eq!(got, expect, "{what}: element {p} (source {src})");
        }
    }
}

fn shape3(j: &Json) -> [i64; 3] {
    let v = j.ints();
    [v[0], v[1], v[2]]
}

fn fused_case<T: Pattern>(c: &Json, qsl_t: Int, step: i64, pad: i64) {
    let name = c.get("name").str();
    let (qs, ks, vs) = (
        shape3(c.get("q_shape")),
        shape3(c.get("k_shape")),
        shape3(c.get("v_shape")),
    );
    let (w, r) = (c.get("pcp_world_size").i64(), c.get("pcp_rank").i64());
    let half = qs[0] / 2;
    let q = Rows::<T>::input(qs, 1, pad);
    let k = Rows::<T>::input(ks, 2, pad);
    let v = Rows::<T>::input(vs, 3, 2 * pad);
    let qsl = HostInts::of(&c.get("query_start_loc").ints(), qsl_t, step);
    let mut qh = Rows::<T>::output([half, qs[1], qs[2]]);
    let mut qt = Rows::<T>::output([half, qs[1], qs[2]]);
    let mut kh = Rows::<T>::output([half * (r + 1), ks[1], ks[2]]);
    let mut vh = Rows::<T>::output([half * (r + 1), vs[1], vs[2]]);
    let mut kt = Rows::<T>::output([half * (2 * w - r), ks[1], ks[2]]);
    let mut vt = Rows::<T>::output([half * (2 * w - r), vs[1], vs[2]]);
    let args = FusedPcpQkvSelectArgs {
        q: q.view(),
        k: k.view(),
        v: v.view(),
        query_start_loc: qsl.view(),
        pcp_world_size: w,
        pcp_rank: r,
        stream: Stream::DEFAULT,
    };
    fused_pcp_qkv_select(
        &args,
        &mut FusedPcpQkvSelectOutputs {
            q_head: qh.view_mut(),
            k_head: kh.view_mut(),
            v_head: vh.view_mut(),
            q_tail: qt.view_mut(),
            k_tail: kt.view_mut(),
            v_tail: vt.view_mut(),
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    qh.expect(1, &c.get("q_head").ints(), &format!("{name} q_head"));
    qt.expect(1, &c.get("q_tail").ints(), &format!("{name} q_tail"));
    kh.expect(2, &c.get("k_head").ints(), &format!("{name} k_head"));
    kt.expect(2, &c.get("k_tail").ints(), &format!("{name} k_tail"));
    vh.expect(3, &c.get("v_head").ints(), &format!("{name} v_head"));
    vt.expect(3, &c.get("v_tail").ints(), &format!("{name} v_tail"));
}

#[test]
fn fused_pcp_qkv_select_vectors() {
    let cases = load_cases("fused_pcp_qkv_select");
    assert!(cases.len() > 20);
    for c in &cases {
        fused_case::<i64>(c, Int::I32, 1, 0);
        fused_case::<i64>(c, Int::I64, 2, 3);
        fused_case::<f32>(c, Int::I64, 1, 5);
        fused_case::<u16>(c, Int::I32, 3, 1);
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Causal-conv1d metadata
// ---------------------------------------------------------------------------------------------

#[test]
fn compute_causal_conv1d_metadata_vectors() {
    let cases = load_cases("compute_causal_conv1d_metadata");
    assert!(cases.len() > 20);
    for c in &cases {
        let name = c.get("name").str();
        let qsl = c.get("query_start_loc_cpu").ints();
        let block_m = c.get("block_m").i64();
        let tot = c.get("tot").i64();
        let capacity = c.get("capacity").i64();
        let nums = c.get("nums").ints();
        assert_eq!(c.get("batch_ptr_fill").i64(), PAD_SLOT_ID);
        assert_eq!(c.get("token_chunk_offset_ptr_fill").i64(), PAD_SLOT_ID);
        let padded = |head: Vec<i64>| {
            let mut v = head;
            v.resize(capacity as usize, PAD_SLOT_ID);
            v
        };
        let batch_ptr = padded(c.get("batch_ptr_head").ints());
        let chunk_ptr = padded(c.get("token_chunk_offset_ptr_head").ints());
        for in_t in BOTH {
            for out_t in BOTH {
                for step in [1, 3] {
                    let q = HostInts::of(&qsl, in_t, step);
                    let size = compute_causal_conv1d_metadata_size(&q.view(), block_m).unwrap();
                    assert_eq!((size.tot, size.capacity), (tot, capacity), "{name}");
                    let mut n = HostInts::new(&[nums.len() as i64], out_t, step);
                    let mut m = HostInts::new(&[tot], out_t, step);
                    let mut off = HostInts::new(&[tot], out_t, step);
                    let mut bp = HostInts::new(&[capacity], out_t, step);
                    let mut cp = HostInts::new(&[capacity], out_t, step);
                    let written = compute_causal_conv1d_metadata(
                        &q.view(),
                        block_m,
                        &mut CausalConv1dOutputs {
                            nums: Some(n.view_mut()),
                            mlist: Some(m.view_mut()),
                            offsetlist: Some(off.view_mut()),
                            batch_ptr: Some(bp.view_mut()),
                            token_chunk_offset_ptr: Some(cp.view_mut()),
                        },
                        Stream::DEFAULT,
                    )
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(written, tot, "{name}");
                    assert_eq!(n.values(), nums, "{name}");
                    assert_eq!(m.values(), c.get("mlist").ints(), "{name}");
                    assert_eq!(off.values(), c.get("offsetlist").ints(), "{name}");
                    assert_eq!(bp.values(), batch_ptr, "{name}");
                    assert_eq!(cp.values(), chunk_ptr, "{name}");
                }
            }
        }
        // With no tensor output only the count comes back.
        let q = HostInts::of(&qsl, Int::I64, 1);
        let written = compute_causal_conv1d_metadata(
            &q.view(),
            block_m,
            &mut CausalConv1dOutputs::default(),
            Stream::DEFAULT,
        )
        .unwrap();
        assert_eq!(written, tot, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Extend queries by n
// ---------------------------------------------------------------------------------------------

/// Checks what one extend call wrote (out of place or in place) against the case's `expect`:
/// `query_start_loc`, `seq_lens` and, when the batch has them, their host mirrors; the
/// `seq_lens_cpu` mirror is extended too, unlike vLLM's.
fn expect_extended(
    e: &Json,
    query_start_loc: &HostInts,
    seq_lens: &HostInts,
    mirrors: Option<(&HostInts, &HostInts)>,
    at: &str,
) {
    assert_eq!(
        query_start_loc.values(),
        e.get("query_start_loc").ints(),
        "{at}"
    );
    assert_eq!(seq_lens.values(), e.get("seq_lens").ints(), "{at}");
    if let Some((qsl_cpu, seq_cpu)) = mirrors {
        assert_eq!(
            qsl_cpu.values(),
            e.get("query_start_loc_cpu").ints(),
            "{at}"
        );
        assert_eq!(seq_cpu.values(), e.get("seq_lens").ints(), "{at}");
    }
}

#[test]
fn extend_all_queries_by_n_vectors() {
    let cases = load_cases("extend_all_queries_by_n");
    assert!(cases.len() > 15);
    let slots = [7i64, 8, 9];
    for c in &cases {
        let name = c.get("name").str();
        let q = c.get("query_start_loc").ints();
        let s = c.get("seq_lens").ints();
        let e = c.get("expect");
        let b = s.len() as i64;
        let n = c.get("n").i64();
        let scalars_in = MetadataScalars {
            num_reqs: c.get("num_reqs").i64(),
            num_actual_tokens: c.get("num_actual_tokens").i64(),
            max_query_len: c.get("max_query_len").i64(),
            max_seq_len: c.get("max_seq_len").i64(),
            ..Default::default()
        };
        let expect_scalars = |got: MetadataScalars| {
            assert_eq!(got.num_reqs, scalars_in.num_reqs, "{name}");
            assert_eq!(
                got.num_actual_tokens,
                e.get("num_actual_tokens").i64(),
                "{name}"
            );
            assert_eq!(got.max_query_len, e.get("max_query_len").i64(), "{name}");
            assert_eq!(got.max_seq_len, e.get("max_seq_len").i64(), "{name}");
            assert!(got.causal, "{name}");
        };
        for in_t in BOTH {
            for out_t in BOTH {
                for step in [1, 3] {
                    for mirrors in [true, false] {
                        let (qi, si) = (HostInts::of(&q, in_t, step), HostInts::of(&s, in_t, step));
                        let (qc, sc) = (
                            HostInts::of(&q, in_t.other(), 1),
                            HostInts::of(&s, in_t.other(), 1),
                        );
                        let md = CommonAttnMetadata {
                            query_start_loc: Some(qi.view()),
                            seq_lens: Some(si.view()),
                            query_start_loc_cpu: mirrors.then(|| qc.view()),
                            seq_lens_cpu: mirrors.then(|| sc.view()),
                            num_reqs: scalars_in.num_reqs,
                            num_actual_tokens: scalars_in.num_actual_tokens,
                            max_query_len: scalars_in.max_query_len,
                            max_seq_len: scalars_in.max_seq_len,
                            ..Default::default()
                        };
                        let mut qo = HostInts::new(&[b + 1], out_t, step);
                        let mut so = HostInts::new(&[b], out_t, step);
                        let mut qco = HostInts::new(&[b + 1], out_t.other(), 1);
                        let mut sco = HostInts::new(&[b], out_t.other(), 1);
                        let slot_view = TensorRef::from_slice(&slots);
                        let got = extend_all_queries_by_n(
                            &md,
                            n,
                            Some(&slot_view),
                            &mut ExtendOutputs {
                                query_start_loc: qo.view_mut(),
                                query_start_loc_cpu: mirrors.then(|| qco.view_mut()),
                                seq_lens: so.view_mut(),
                                seq_lens_cpu: mirrors.then(|| sco.view_mut()),
                            },
                            Stream::DEFAULT,
                        )
                        .unwrap_or_else(|err| panic!("{name}: {err}"));
                        expect_scalars(got);
                        expect_extended(e, &qo, &so, mirrors.then_some((&qco, &sco)), name);
                        if !mirrors {
                            assert!(qco.values().iter().all(|&v| v == POISON), "{name}");
                        }
                        // The input is untouched.
                        assert_eq!((qi.values(), si.values()), (q.clone(), s.clone()));
                    }
                }
            }
        }
        // In place, as vLLM does it.
        for t in BOTH {
            let (mut qi, mut si) = (HostInts::of(&q, t, 2), HostInts::of(&s, t, 2));
            let (mut qc, mut sc) = (HostInts::of(&q, t, 1), HostInts::of(&s, t, 1));
            let got = extend_all_queries_by_n_in_place(
                &mut ExtendOutputs {
                    query_start_loc: qi.view_mut(),
                    query_start_loc_cpu: Some(qc.view_mut()),
                    seq_lens: si.view_mut(),
                    seq_lens_cpu: Some(sc.view_mut()),
                },
                &scalars_in,
                n,
                None,
                Stream::DEFAULT,
            )
            .unwrap_or_else(|err| panic!("{name} in place: {err}"));
            expect_scalars(got);
            expect_extended(e, &qi, &si, Some((&qc, &sc)), &format!("{name} in place"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 8. KV-sharing fast-prefill metadata
// ---------------------------------------------------------------------------------------------

#[test]
fn make_kv_sharing_fast_prefill_common_attn_metadata_vectors() {
    let cases = load_cases("make_kv_sharing_fast_prefill_common_attn_metadata");
    assert!(cases.len() > 25);
    let (mut passthroughs, mut errors) = (0, 0);
    // Stand-ins for the fields the call only copies.
    let seq = [1i32];
    for c in &cases {
        let name = c.get("name").str();
        let q = c.get("query_start_loc").ints();
        let logits = (!c.get("logits_indices_padded").is_null())
            .then(|| c.get("logits_indices_padded").ints());
        let count = match c.get("num_logits_indices") {
            Json::Null => 0,
            j => j.i64(),
        };
        let num_reqs = c.get("num_reqs").i64();
        let dtypes = c.get("dtypes").array();
        let (qt0, lt0) = (Int::named(dtypes[0].str()), Int::named(dtypes[1].str()));
        for qt in [qt0, qt0.other()] {
            for lt in [lt0, lt0.other()] {
                for ot in BOTH {
                    for step in [1, 3] {
                        let qi = HostInts::of(&q, qt, step);
                        let li = logits.as_ref().map(|l| HostInts::of(l, lt, step));
                        let md = CommonAttnMetadata {
                            query_start_loc: Some(qi.view()),
                            seq_lens: Some(TensorRef::from_slice(&seq)),
                            logits_indices_padded: li.as_ref().map(HostInts::view),
                            num_reqs: q.len() as i64 - 1,
                            num_actual_tokens: 1234,
                            max_query_len: c.get("max_query_len").i64(),
                            max_seq_len: 4321,
                            num_logits_indices: count,
                            causal: false,
                            ..Default::default()
                        };
                        let rows = num_reqs.max(0) + 1;
                        let mut qo = HostInts::new(&[rows], ot, step);
                        let mut qco = HostInts::new(&[rows], ot.other(), step);
                        let mut mt = HostInts::new(&[2], ot, step);
                        let got = make_kv_sharing_fast_prefill_common_attn_metadata(
                            &md,
                            &mut FastPrefillOutputs {
                                query_start_loc: qo.view_mut(),
                                query_start_loc_cpu: Some(qco.view_mut()),
                                decode_max_and_total: Some(mt.view_mut()),
                            },
                            Stream::DEFAULT,
                        );
                        let untouched =
                            |t: &HostInts| t.storage_values().iter().all(|&v| v == POISON);
                        if c.has("seed_error") {
                            support::expect_error(
                                got,
                                Status::InvalidArgument,
                                "cattn::make_kv_sharing_fast_prefill_common_attn_metadata: \
                                 metadata.",
                            );
                            assert!(
                                untouched(&qo) && untouched(&qco) && untouched(&mt),
                                "{name}"
                            );
                            errors += 1;
                            continue;
                        }
                        let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                        if c.get("passthrough").bool() {
                            passthroughs += 1;
                            assert!(got.passthrough, "{name}");
                            assert_eq!(got.scalars.num_actual_tokens, 1234, "{name}");
                            assert_eq!(got.scalars.max_seq_len, 4321, "{name}");
                            assert_eq!(got.scalars.num_logits_indices, count, "{name}");
                            assert!(!got.scalars.causal, "{name}");
                            assert!(
                                untouched(&qo) && untouched(&qco) && untouched(&mt),
                                "{name}"
                            );
                            continue;
                        }
                        let e = c.get("expect");
                        assert!(!got.passthrough, "{name}");
                        assert_eq!(qo.values(), e.get("query_start_loc").ints(), "{name}");
                        assert_eq!(qco.values(), e.get("query_start_loc_cpu").ints(), "{name}");
                        assert_eq!(
                            mt.values(),
                            vec![
                                e.get("max_query_len").i64(),
                                e.get("num_actual_tokens").i64()
                            ],
                            "{name}"
                        );
                        assert_eq!(got.scalars.max_query_len, e.get("max_query_len").i64());
                        assert_eq!(
                            got.scalars.num_actual_tokens,
                            e.get("num_actual_tokens").i64()
                        );
                        assert_eq!(got.scalars.num_reqs, num_reqs, "{name}");
                        assert!(got.scalars.causal, "{name}");
                        assert!(!e.get("has_logits_indices").bool(), "{name}");
                        assert_eq!(got.scalars.num_logits_indices, 0, "{name}");
                        assert_eq!(got.scalars.max_seq_len, 4321, "{name}");
                    }
                }
            }
        }
    }
    assert!(passthroughs > 0 && errors > 0);
}

// ---------------------------------------------------------------------------------------------
// 9. Local-attention virtual batches
// ---------------------------------------------------------------------------------------------

#[test]
fn make_local_attention_virtual_batches_vectors() {
    let cases = load_cases("make_local_attention_virtual_batches");
    assert!(cases.len() > 25);
    let mut differing = 0;
    for c in &cases {
        let name = c.get("name").str();
        let q = c.get("query_start_loc").ints();
        let s = c.get("seq_lens").ints();
        let table = c.get("block_table").flat_ints();
        let rows = c.get("block_table").array().len() as i64;
        let cols = c.get("block_table").array()[0].array().len() as i64;
        let e = c.get("expect");
        let (v, p) = (e.get("num_reqs").i64(), e.get("pages").i64());
        let want_table = e.get("block_table").flat_ints();
        if c.has("seed_block_table") {
            // The vectors themselves: libcattn differs from the seed exactly on these rows.
            differing += 1;
            let seed = c.get("seed_block_table").array();
            let mine = e.get("block_table").array();
            let rows_differing: Vec<i64> = (0..v)
                .filter(|&r| seed[r as usize] != mine[r as usize])
                .collect();
            assert_eq!(
                rows_differing,
                c.get("differs_from_seed_rows").ints(),
                "{name}"
            );
            assert!(!rows_differing.is_empty());
        }
        for qt in BOTH {
            for tt in BOTH {
                for step in [1, 2] {
                    let qi = HostInts::of(&q, qt, step);
                    let si = HostInts::of(&s, qt, step);
                    let bt = HostInts::shaped(&table, &[rows, cols], tt, step);
                    let md = CommonAttnMetadata {
                        query_start_loc_cpu: Some(qi.view()),
                        seq_lens_cpu: Some(si.view()),
                        block_table_tensor: Some(bt.view()),
                        num_reqs: s.len() as i64,
                        num_actual_tokens: c.get("num_actual_tokens").i64(),
                        ..Default::default()
                    };
                    let plan = LocalAttentionPlan::new(
                        &md,
                        c.get("attn_chunk_size").i64(),
                        c.get("block_size").i64(),
                    )
                    .unwrap_or_else(|err| panic!("{name}: {err}"));
                    let shape = plan.shape().unwrap();
                    assert_eq!((shape.virtual_batches, shape.pages), (v, p), "{name}");
                    let ot = qt.other();
                    let mut qo = HostInts::new(&[v + 1], ot, step);
                    let mut so = HostInts::new(&[v], ot, step);
                    let mut co = HostInts::new(&[v], ot, step);
                    let mut bo = HostInts::new(&[v, p], tt, step);
                    let mut qd = HostInts::new(&[v + 1], qt, 1);
                    let mut sd = HostInts::new(&[v], qt, 1);
                    let got = plan
                        .fill(
                            &md,
                            &mut LocalAttentionOutputs {
                                query_start_loc_cpu: qo.view_mut(),
                                seq_lens_cpu: so.view_mut(),
                                num_computed_tokens_cpu: co.view_mut(),
                                block_table_tensor: bo.view_mut(),
                                query_start_loc: Some(qd.view_mut()),
                                seq_lens: Some(sd.view_mut()),
                            },
                            Stream::DEFAULT,
                        )
                        .unwrap_or_else(|err| panic!("{name}: {err}"));
                    assert_eq!(qo.values(), e.get("query_start_loc").ints(), "{name}");
                    assert_eq!(qd.values(), e.get("query_start_loc").ints(), "{name}");
                    assert_eq!(so.values(), e.get("seq_lens").ints(), "{name}");
                    assert_eq!(sd.values(), e.get("seq_lens").ints(), "{name}");
                    assert_eq!(co.values(), e.get("num_computed_tokens").ints(), "{name}");
                    assert_eq!(bo.values(), want_table, "{name}");
                    assert_eq!(got.num_reqs, v, "{name}");
                    assert_eq!(got.num_actual_tokens, e.get("num_actual_tokens").i64());
                    assert_eq!(got.max_query_len, e.get("max_query_len").i64(), "{name}");
                    assert_eq!(got.max_seq_len, e.get("max_seq_len").i64(), "{name}");
                    assert!(got.causal);

                    // make_block_table on the same table gathers the same pages.
                    let mut again = HostInts::new(&[v, p], tt, 1);
                    plan.make_block_table(&bt.view(), &mut again.view_mut(), Stream::DEFAULT)
                        .unwrap_or_else(|err| panic!("{name}: {err}"));
                    assert_eq!(again.values(), want_table, "{name}");
                }
            }
        }
    }
    assert!(differing > 0);
}

// ---------------------------------------------------------------------------------------------
// 10. Mamba block table
// ---------------------------------------------------------------------------------------------

#[test]
fn mamba_get_block_table_tensor_vectors() {
    let cases = load_cases("mamba_get_block_table_tensor");
    assert!(cases.len() > 20);
    let mut errors = 0;
    for c in &cases {
        let name = c.get("name").str();
        let table = c.get("block_table").flat_ints();
        let cols = c.get("cols").i64();
        let seq = c.get("seq_lens").ints();
        let b = seq.len() as i64;
        let mode = match c.get("mode").i64() {
            0 => MambaCacheMode::None,
            1 => MambaCacheMode::All,
            2 => MambaCacheMode::Align,
            m => panic!("{name}: mode {m}"),
        };
        let error = c.opt("error").is_some_and(Json::bool);
        errors += usize::from(error);
        let out_cols = if mode == MambaCacheMode::Align {
            1 + c.get("num_speculative_blocks").i64()
        } else {
            cols
        };
        for bt_t in dtypes_for(&table) {
            for seq_t in BOTH {
                for out_t in dtypes_for(&table) {
                    for step in [1, 2] {
                        let bt = HostInts::shaped(&table, &[b, cols], bt_t, step);
                        let s = HostInts::of(&seq, seq_t, step);
                        let mut out = HostInts::new(&[b, out_cols], out_t, 3 - step);
                        let args = MambaBlockTableArgs {
                            block_table: bt.view(),
                            seq_lens: Some(s.view()),
                            block_size: c.get("block_size").i64(),
                            num_speculative_blocks: c.get("num_speculative_blocks").i64(),
                            mode,
                            stream: Stream::DEFAULT,
                        };
                        let got = mamba_get_block_table_tensor(&args, &mut out.view_mut());
                        if error {
                            support::expect_error(
                                got,
                                Status::InvalidArgument,
                                "past the end of a row",
                            );
                            assert!(out.storage_values().iter().all(|&v| v == POISON));
                        } else {
                            got.unwrap_or_else(|e| panic!("{name}: {e}"));
                            assert_eq!(out.values(), c.get("out").flat_ints(), "{name}");
                        }
                    }
                }
            }
        }
    }
    assert!(errors >= 3);
}

// ---------------------------------------------------------------------------------------------
// 11. Per-layer parameters
// ---------------------------------------------------------------------------------------------

/// Same value and sign, or both NaN.
fn same_double(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
}

fn same_cap(got: Option<f64>, want: &Json) -> bool {
    match (got, want.is_null()) {
        (None, true) => true,
        (Some(g), false) => same_double(g, want.f64()),
        _ => false,
    }
}

#[test]
fn get_per_layer_parameters_vectors() {
    let cases = load_cases("get_per_layer_parameters");
    assert!(cases.len() > 20);
    for c in &cases {
        let name = c.get("name").str();
        let layers: Vec<AttentionLayerDesc> = c
            .get("layers")
            .array()
            .iter()
            .map(|l| AttentionLayerDesc {
                sliding_window: (!l.get("window").is_null()).then(|| {
                    let w = l.get("window").ints();
                    (w[0], w[1])
                }),
                logits_soft_cap: (!l.get("soft_cap").is_null()).then(|| l.get("soft_cap").f64()),
                scale: l.get("scale").f64(),
                has_sinks: l.get("sinks").bool(),
            })
            .collect();
        let params = get_per_layer_parameters(&layers).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(params.len(), layers.len());
        for (p, e) in params.iter().zip(c.get("per_layer").array()) {
            assert_eq!(p.window_left, e.get("window_left").i64(), "{name}");
            assert!(
                same_cap(p.logits_soft_cap, e.get("logits_soft_cap")),
                "{name}: {p:?}"
            );
            assert!(
                same_double(p.sm_scale, e.get("sm_scale").f64()),
                "{name}: {p:?}"
            );
            assert_eq!(p.has_sinks, e.get("has_sinks").bool(), "{name}");
        }
        let g = infer_global_hyperparameters(&params).unwrap_or_else(|e| panic!("{name}: {e}"));
        let e = c.get("global");
        assert_eq!(g.params.window_left, e.get("window_left").i64(), "{name}");
        assert!(
            same_cap(g.params.logits_soft_cap, e.get("logits_soft_cap")),
            "{name}"
        );
        assert!(
            same_double(g.params.sm_scale, e.get("sm_scale").f64()),
            "{name}"
        );
        assert_eq!(g.params.has_sinks, e.get("has_sinks").bool(), "{name}");
        assert_eq!(
            g.has_same_window_lefts,
            e.get("has_same_window_lefts").bool(),
            "{name}"
        );
        assert_eq!(
            g.has_same_all_params,
            e.get("has_same_all_params").bool(),
            "{name}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Per-request metadata helpers (upstream oracle)
// ---------------------------------------------------------------------------------------------

#[test]
fn naive_query_lens_vectors() {
    let cases = load_cases("naive_query_lens");
    assert!(cases.len() > 40);
    let mut checked = 0;
    for c in &cases {
        let name = c.get("name").str();
        let qsl = c.get("query_start_loc").ints();
        let seq = c.get("seq_lens").ints();
        let mut inputs = qsl.clone();
        inputs.extend(&seq);
        for (computed, key) in [
            (false, "naive_query_lens"),
            (true, "compute_num_computed_tokens"),
        ] {
            let want = c.get("expect").get(key).ints();
            for in_t in dtypes_for(&inputs) {
                for out_t in dtypes_for(&want) {
                    for step in [1, 3] {
                        let q = HostInts::of(&qsl, in_t, step);
                        let s = HostInts::of(&seq, in_t, 1);
                        let mut out = HostInts::new(&[want.len() as i64], out_t, step);
                        let md = CommonAttnMetadata {
                            query_start_loc: Some(q.view()),
                            seq_lens: Some(s.view()),
                            ..Default::default()
                        };
                        let r = if computed {
                            compute_num_computed_tokens(&md, &mut out.view_mut(), Stream::DEFAULT)
                        } else {
                            naive_query_lens(&md, &mut out.view_mut(), Stream::DEFAULT)
                        };
                        r.unwrap_or_else(|e| panic!("{name}: {e}"));
                        assert_eq!(out.values(), want, "{name} {key} {in_t:?}->{out_t:?}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn token_to_req_indices_vectors() {
    let cases = load_cases("token_to_req_indices");
    let (mut ok, mut failed) = (0, 0);
    for c in &cases {
        let name = c.get("name").str();
        let qsl = c.get("query_start_loc").ints();
        let qsl_cpu = c.get("query_start_loc_cpu").ints();
        let len = c.get("buffer_len").i64();
        for in_t in dtypes_for(&qsl) {
            for buf_t in [Int::I32, Int::I64] {
                let q = HostInts::of(&qsl, in_t, 2);
                let q_cpu = HostInts::of(&qsl_cpu, in_t, 1);
                let mut buf = HostInts::new(&[len], buf_t, 2);
                let md = CommonAttnMetadata {
                    query_start_loc: Some(q.view()),
                    query_start_loc_cpu: Some(q_cpu.view()),
                    num_actual_tokens: c.get("num_actual_tokens").i64(),
                    ..Default::default()
                };
                let r = token_to_req_indices(&md, &mut buf.view_mut(), Stream::DEFAULT);
                if c.has("error") {
                    assert!(
                        r.is_err(),
                        "{name}: upstream raises {}",
                        c.get("error").str()
                    );
                    assert!(buf.values().iter().all(|&v| v == POISON), "{name}: written");
                    failed += 1;
                    continue;
                }
                r.unwrap_or_else(|e| panic!("{name}: {e}"));
                let mut want = c.get("expect").ints();
                want.resize(len as usize, POISON);
                assert_eq!(buf.values(), want, "{name} {in_t:?}->{buf_t:?}");
                ok += 1;
            }
        }
    }
    assert!(ok > 50 && failed > 10, "{ok} {failed}");
    assert_eq!(
        token_to_req_indices_vec(&[0, 2, 2, 5], 7).unwrap(),
        [0, 0, 2, 2, 2, 0, 0]
    );
    assert_eq!(num_computed_tokens(&[0, 3, 4], &[10, 1]).unwrap(), [7, 0]);
}

#[test]
fn unpadded_vectors() {
    let cases = load_cases("unpadded");
    assert!(cases.len() > 20);
    for c in &cases {
        let name = c.get("name").str();
        let input = c.get("input");
        let e = c.get("expect");
        let qsl = input.get("query_start_loc").ints();
        let seq = input.get("seq_lens").ints();
        let slots = input.get("slot_mapping").ints();
        let table = input.get("block_table_tensor").ints();
        let cols = c.get("block_table_cols").i64();
        for step in [1, 2] {
            let q = HostInts::of(&qsl, Int::I32, step);
            let s = HostInts::of(&seq, Int::I64, step);
            let sl = HostInts::of(&slots, Int::I64, 1);
            let t = HostInts::shaped(&table, &[seq.len() as i64, cols], Int::I32, 1);
            let md = CommonAttnMetadata {
                query_start_loc: Some(q.view()),
                seq_lens: Some(s.view()),
                slot_mapping: Some(sl.view()),
                block_table_tensor: Some(t.view()),
                num_reqs: seq.len() as i64,
                num_actual_tokens: input.get("num_actual_tokens").i64(),
                max_query_len: input.get("max_query_len").i64(),
                max_seq_len: input.get("max_seq_len").i64(),
                ..Default::default()
            };
            let reqs = c.get("num_actual_reqs").i64();
            let tokens = c.get("num_actual_tokens").i64();
            let u = unpadded(&md, tokens, reqs).unwrap_or_else(|err| panic!("{name}: {err}"));
            assert_eq!(u.num_reqs, reqs, "{name}");
            assert_eq!(u.num_actual_tokens, tokens, "{name}");
            assert_eq!(u.max_query_len, e.get("max_query_len").i64(), "{name}");
            let first = |v: &Option<TensorRef<'_>>| v.as_ref().unwrap().shape()[0];
            assert_eq!(
                first(&u.query_start_loc) as usize,
                e.get("query_start_loc").ints().len()
            );
            assert_eq!(first(&u.seq_lens) as usize, e.get("seq_lens").ints().len());
            assert_eq!(
                first(&u.slot_mapping) as usize,
                e.get("slot_mapping").ints().len()
            );
            assert_eq!(
                u.block_table_tensor.as_ref().unwrap().shape(),
                &[reqs, cols]
            );
            assert_eq!(
                u.seq_lens.as_ref().unwrap().strides(),
                s.view().strides(),
                "{name}"
            );
            // The cut views read the input's memory: their values are the expected slices.
            let got: Vec<i64> = u
                .query_start_loc
                .as_ref()
                .map(|v| {
                    let raw = unsafe { &*v.as_raw() };
                    let base = raw.data as *const i32;
                    (0..v.shape()[0])
                        .map(|i| unsafe { i64::from(*base.add((i * step) as usize)) })
                        .collect()
                })
                .unwrap();
            assert_eq!(got, e.get("query_start_loc").ints(), "{name}");
        }
    }
    support::expect_error(
        unpadded(&CommonAttnMetadata::default(), -1, 0),
        Status::InvalidArgument,
        "cattn::unpadded: num_actual_tokens is negative",
    );
}

// ---------------------------------------------------------------------------------------------
// 1.1: the other helpers (upstream oracle)
// ---------------------------------------------------------------------------------------------

#[test]
fn max_local_attention_virtual_batches_vectors() {
    let cases = load_cases("max_local_attention_virtual_batches");
    assert!(cases.len() >= 30);
    for c in &cases {
        let b = max_local_attention_virtual_batches(
            c.get("attn_chunk_size").i64(),
            c.get("max_num_seqs").i64(),
            c.get("max_num_batched_tokens").i64(),
        )
        .unwrap();
        assert_eq!(b.bound, c.get("bound").i64(), "{}", c.get("name").str());
        if c.has("virtual_batches") {
            assert!(c.get("virtual_batches").i64() <= b.bound_with_empty_rows);
        }
    }
}

#[test]
fn get_dcp_local_seq_lens_nd_vectors() {
    let cases = load_cases("get_dcp_local_seq_lens_nd");
    assert!(cases.len() >= 40);
    for c in &cases {
        let name = c.get("name").str();
        let seq = c.get("seq_lens").ints();
        let rank = match c.get("dcp_rank").i64() {
            -1 => DcpRank::All,
            r => DcpRank::Rank(r),
        };
        let want = c.get("out").ints();
        for in_t in dtypes_for(&seq) {
            for out_t in dtypes_for(&want) {
                for step in [1, 2] {
                    let input = HostInts::shaped(&seq, &c.get("seq_shape").ints(), in_t, step);
                    let mut out = HostInts::new(&c.get("shape").ints(), out_t, step);
                    let args = DcpLocalSeqLensArgs {
                        seq_lens: input.view(),
                        dcp_size: c.get("dcp_size").i64(),
                        dcp_rank: rank,
                        dcp_kv_cache_interleave_size: c.get("interleave").i64(),
                        stream: Stream::DEFAULT,
                    };
                    get_dcp_local_seq_lens_nd(&args, &mut out.view_mut())
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(out.values(), want, "{name} {in_t:?}->{out_t:?} step {step}");
                }
            }
        }
    }
}

/// A case's CSR tensors, or None for vLLM's None.
fn csr_of(c: &Json, t: Int, step: i64) -> Option<(HostInts, HostInts)> {
    if c.get("none_input").bool() {
        return None;
    }
    let offsets = c.get("range_offsets").ints();
    let flat = c.get("ranges").flat_ints();
    let rows = flat.len() as i64 / 2;
    Some((
        HostInts::of(&offsets, t, step),
        HostInts::shaped(&flat, &[rows, 2], t, step),
    ))
}

#[test]
fn compute_mm_prefix_range_tensor_vectors() {
    let cases = load_cases("compute_mm_prefix_range_tensor");
    assert!(cases.len() >= 30);
    for c in &cases {
        let name = c.get("name").str();
        for t in BOTH {
            let csr = csr_of(c, t, 2);
            let ranges = csr.as_ref().map(|(o, r)| MmPrefixRanges {
                offsets: o.view(),
                ranges: r.view(),
            });
            let got = compute_mm_prefix_range_tensor_size(ranges.as_ref()).unwrap();
            if c.get("is_none").bool() {
                assert_eq!(got, None, "{name}");
                continue;
            }
            assert_eq!(got, Some(c.get("max_ranges").i64()), "{name}");
            let mut out = HostInts::new(&c.get("shape").ints(), t, 1);
            compute_mm_prefix_range_tensor(ranges.as_ref(), &mut out.view_mut()).unwrap();
            assert_eq!(out.values(), c.get("out").ints(), "{name}");
        }
        if !c.get("none_input").bool() {
            // The one-call helper from the same lists.
            let offsets = c.get("range_offsets").ints();
            let flat = c.get("ranges").flat_ints();
            let lists: Vec<Vec<(i64, i64)>> = offsets
                .windows(2)
                .map(|w| {
                    (w[0]..w[1])
                        .map(|k| (flat[2 * k as usize], flat[2 * k as usize + 1]))
                        .collect()
                })
                .collect();
            let one = mm_prefix_range_tensor(&lists).unwrap();
            assert_eq!(one.is_none(), c.get("is_none").bool(), "{name}");
            if let Some(t) = one {
                let want: Vec<i32> = c.get("out").ints().iter().map(|&v| v as i32).collect();
                assert_eq!(t.data, want, "{name}");
            }
        }
    }
}

#[test]
fn fill_mm_prefix_query_ranges_vectors() {
    let cases = load_cases("fill_mm_prefix_query_ranges");
    assert!(cases.len() >= 40);
    for c in &cases {
        let name = c.get("name").str();
        let capacity = c.get("capacity").i64();
        let want = c.get("out").ints();
        for t in BOTH {
            let csr = csr_of(c, t, 1);
            let ranges = csr.as_ref().map(|(o, r)| MmPrefixRanges {
                offsets: o.view(),
                ranges: r.view(),
            });
            let qsl = HostInts::of(&c.get("query_start_loc").ints(), t, 2);
            let seq = HostInts::of(&c.get("seq_lens").ints(), t, 1);
            let mut out =
                HostInts::shaped(&vec![7777; capacity as usize * 2], &[capacity, 2], t, 1);
            let rows = fill_mm_prefix_query_ranges(
                ranges.as_ref(),
                &qsl.view(),
                &seq.view(),
                &mut out.view_mut(),
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(rows, c.get("rows").i64(), "{name}");
            assert_eq!(out.values(), want, "{name}");
        }
    }
}

#[test]
fn log2_lse_to_ln_vectors() {
    let cases = load_cases("log2_lse_to_ln");
    assert!(cases.len() >= 26);
    let hex = |s: &str, w: usize| -> Vec<u64> {
        (0..s.len() / w)
            .map(|i| u64::from_str_radix(&s[i * w..(i + 1) * w], 16).unwrap())
            .collect()
    };
    for c in &cases {
        let name = c.get("name").str();
        let dtype = c.get("dtype").str();
        for rounding in [LseRounding::Torch, LseRounding::Torch1Cpu] {
            let key = if rounding == LseRounding::Torch {
                "out_torch"
            } else {
                "out"
            };
            match dtype {
                "float16" | "bfloat16" => {
                    let half = if dtype == "float16" {
                        HalfType::F16
                    } else {
                        HalfType::BF16
                    };
                    let mut bits: Vec<u16> = hex(c.get("in").str(), 4)
                        .iter()
                        .map(|&v| v as u16)
                        .collect();
                    log2_lse_to_ln_half(&mut bits, half, rounding).unwrap();
                    let want = hex(c.get(key).str(), 4);
                    let nan = |v: u64| {
                        if half == HalfType::F16 {
                            (v & 0x7FFF) > 0x7C00
                        } else {
                            (v & 0x7FFF) > 0x7F80
                        }
                    };
                    for (i, (&g, &w)) in bits.iter().zip(&want).enumerate() {
                        assert!(
                            u64::from(g) == w || (nan(u64::from(g)) && nan(w)),
                            "{name} [{i}] {rounding:?}"
                        );
                    }
                }
                "float32" => {
                    let mut v: Vec<f32> = hex(c.get("in").str(), 8)
                        .iter()
                        .map(|&b| f32::from_bits(b as u32))
                        .collect();
                    log2_lse_to_ln_f32(&mut v).unwrap();
                    for (g, w) in v.iter().zip(hex(c.get(key).str(), 8)) {
                        let w = f32::from_bits(w as u32);
                        assert!(
                            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                            "{name}"
                        );
                    }
                }
                _ => {
                    let mut v: Vec<f64> = hex(c.get("in").str(), 16)
                        .iter()
                        .map(|&b| f64::from_bits(b))
                        .collect();
                    log2_lse_to_ln_f64(&mut v).unwrap();
                    for (g, w) in v.iter().zip(hex(c.get(key).str(), 16)) {
                        let w = f64::from_bits(w);
                        assert!(
                            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                            "{name}"
                        );
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 1.1: the metadata fields that extend, fast prefill and the local-attention fill update
// (upstream oracle, as tests/test_metadata_1_1_fields.cpp)
// ---------------------------------------------------------------------------------------------

fn dcp_group_of(c: &Json) -> DcpGroup {
    DcpGroup {
        size: c.get("dcp_size").i64(),
        rank: c.get("dcp_rank").i64(),
        kv_cache_interleave_size: c.get("dcp_kv_cache_interleave_size").i64(),
    }
}

/// The tensors one extend call wrote for an `extend_all_queries_by_n_upstream` case, out of
/// place or in place.
struct UpstreamExtended<'a> {
    query_start_loc: &'a HostInts,
    query_start_loc_cpu: &'a HostInts,
    seq_lens: &'a HostInts,
    seq_lens_cpu: &'a HostInts,
    seq_lens_cpu_upper_bound: &'a HostInts,
    dcp_local_seq_lens: &'a HostInts,
    dcp_local_seq_lens_cpu: &'a HostInts,
    positions: &'a HostInts,
}

impl UpstreamExtended<'_> {
    /// Checks every tensor against the case's `expect`. Upstream leaves the device DCP lengths
    /// stale and drops their mirror: libcattn writes the extended batch's into both.
    fn expect(&self, e: &Json, at: &str) {
        let dcp = e.get("dcp_local_seq_lens").ints();
        for (key, got, want) in [
            (
                "query_start_loc",
                self.query_start_loc,
                e.get("query_start_loc").ints(),
            ),
            (
                "query_start_loc_cpu",
                self.query_start_loc_cpu,
                e.get("query_start_loc_cpu").ints(),
            ),
            ("seq_lens", self.seq_lens, e.get("seq_lens").ints()),
            (
                "seq_lens_cpu",
                self.seq_lens_cpu,
                e.get("seq_lens_cpu").ints(),
            ),
            (
                "seq_lens_cpu_upper_bound",
                self.seq_lens_cpu_upper_bound,
                e.get("seq_lens_cpu_upper_bound").ints(),
            ),
            ("dcp_local_seq_lens", self.dcp_local_seq_lens, dcp.clone()),
            ("dcp_local_seq_lens_cpu", self.dcp_local_seq_lens_cpu, dcp),
            ("positions", self.positions, e.get("positions").ints()),
        ] {
            assert_eq!(got.values(), want, "{at}: {key}");
        }
    }
}

#[test]
fn extend_all_queries_by_n_upstream_vectors() {
    let cases = load_cases("extend_all_queries_by_n_upstream");
    assert!(cases.len() > 15);
    for c in &cases {
        let name = c.get("name").str();
        let q = c.get("query_start_loc").ints();
        let s = c.get("seq_lens").ints();
        let u = c.get("seq_lens_cpu_upper_bound").ints();
        let e = c.get("expect");
        let b = s.len() as i64;
        let n = c.get("n").i64();
        let positions_len = c.get("positions_len").i64();
        let dcp = dcp_group_of(c);
        let scalars_in = MetadataScalars {
            num_reqs: b,
            num_actual_tokens: c.get("num_actual_tokens").i64(),
            max_query_len: c.get("max_query_len").i64(),
            max_seq_len: c.get("max_seq_len").i64(),
            max_logits_per_req: Some(3),
            ..Default::default()
        };
        let expect_scalars = |got: MetadataScalars| {
            // Copied, as the other newer fields that extend does not update.
            assert_eq!(got.max_logits_per_req, Some(3), "{name}");
            assert_eq!(
                got.num_actual_tokens,
                e.get("num_actual_tokens").i64(),
                "{name}"
            );
            assert_eq!(got.max_query_len, e.get("max_query_len").i64(), "{name}");
            assert_eq!(got.max_seq_len, e.get("max_seq_len").i64(), "{name}");
        };
        for t in BOTH {
            for out_t in BOTH {
                for step in [1, 2] {
                    let (qi, qc) = (HostInts::of(&q, t, step), HostInts::of(&q, t, 1));
                    let (si, sc) = (HostInts::of(&s, t, step), HostInts::of(&s, t, 1));
                    let ui = HostInts::of(&u, t, step);
                    // Stale DCP lengths: the call recomputes them without reading these.
                    let di = HostInts::of(&vec![77; b as usize], t, 1);
                    let dci = HostInts::of(&vec![78; b as usize], t, 1);
                    let md = CommonAttnMetadata {
                        query_start_loc: Some(qi.view()),
                        query_start_loc_cpu: Some(qc.view()),
                        seq_lens: Some(si.view()),
                        seq_lens_cpu: Some(sc.view()),
                        seq_lens_cpu_upper_bound: Some(ui.view()),
                        dcp_local_seq_lens: Some(di.view()),
                        dcp_local_seq_lens_cpu: Some(dci.view()),
                        num_reqs: scalars_in.num_reqs,
                        num_actual_tokens: scalars_in.num_actual_tokens,
                        max_query_len: scalars_in.max_query_len,
                        max_seq_len: scalars_in.max_seq_len,
                        max_logits_per_req: scalars_in.max_logits_per_req,
                        ..Default::default()
                    };
                    let mut qo = HostInts::new(&[b + 1], out_t, step);
                    let mut qco = HostInts::new(&[b + 1], out_t, 1);
                    let mut so = HostInts::new(&[b], out_t, step);
                    let mut sco = HostInts::new(&[b], out_t, 1);
                    let mut uo = HostInts::new(&[b], out_t, step);
                    let mut d_o = HostInts::new(&[b], out_t, 1);
                    let mut dco = HostInts::new(&[b], out_t, step);
                    let mut po = HostInts::new(&[positions_len], out_t, step);
                    let got = extend_all_queries_by_n_with(
                        &md,
                        n,
                        None,
                        &mut ExtendOutputs {
                            query_start_loc: qo.view_mut(),
                            query_start_loc_cpu: Some(qco.view_mut()),
                            seq_lens: so.view_mut(),
                            seq_lens_cpu: Some(sco.view_mut()),
                        },
                        &mut ExtendNewerOutputs {
                            seq_lens_cpu_upper_bound: Some(uo.view_mut()),
                            dcp_local_seq_lens: Some(d_o.view_mut()),
                            dcp_local_seq_lens_cpu: Some(dco.view_mut()),
                            positions: Some(po.view_mut()),
                        },
                        Some(dcp),
                        Stream::DEFAULT,
                    )
                    .unwrap_or_else(|err| panic!("{name}: {err}"));
                    expect_scalars(got);
                    UpstreamExtended {
                        query_start_loc: &qo,
                        query_start_loc_cpu: &qco,
                        seq_lens: &so,
                        seq_lens_cpu: &sco,
                        seq_lens_cpu_upper_bound: &uo,
                        dcp_local_seq_lens: &d_o,
                        dcp_local_seq_lens_cpu: &dco,
                        positions: &po,
                    }
                    .expect(e, &format!("{name} {t:?}->{out_t:?} step {step}"));
                    // The inputs are untouched.
                    assert_eq!(
                        (ui.values(), di.values()),
                        (u.clone(), vec![77; b as usize])
                    );
                }
            }
        }
        // In place: every tensor updated where it lies.
        let (mut qi, mut qc) = (HostInts::of(&q, Int::I64, 1), HostInts::of(&q, Int::I64, 1));
        let (mut si, mut sc) = (HostInts::of(&s, Int::I64, 1), HostInts::of(&s, Int::I64, 1));
        let mut ui = HostInts::of(&u, Int::I64, 1);
        let mut di = HostInts::of(&vec![77; b as usize], Int::I64, 1);
        let mut dci = HostInts::of(&vec![78; b as usize], Int::I64, 1);
        let mut po = HostInts::new(&[positions_len], Int::I64, 1);
        let got = extend_all_queries_by_n_in_place_with(
            &mut ExtendOutputs {
                query_start_loc: qi.view_mut(),
                query_start_loc_cpu: Some(qc.view_mut()),
                seq_lens: si.view_mut(),
                seq_lens_cpu: Some(sc.view_mut()),
            },
            &mut ExtendNewerOutputs {
                seq_lens_cpu_upper_bound: Some(ui.view_mut()),
                dcp_local_seq_lens: Some(di.view_mut()),
                dcp_local_seq_lens_cpu: Some(dci.view_mut()),
                positions: Some(po.view_mut()),
            },
            &scalars_in,
            n,
            None,
            Some(dcp),
            Stream::DEFAULT,
        )
        .unwrap_or_else(|err| panic!("{name} in place: {err}"));
        expect_scalars(got);
        UpstreamExtended {
            query_start_loc: &qi,
            query_start_loc_cpu: &qc,
            seq_lens: &si,
            seq_lens_cpu: &sc,
            seq_lens_cpu_upper_bound: &ui,
            dcp_local_seq_lens: &di,
            dcp_local_seq_lens_cpu: &dci,
            positions: &po,
        }
        .expect(e, &format!("{name} in place"));
    }

    // The DCP group is needed with DCP lengths; the 1.0 call has no upper-bound output.
    let c = &cases[4];
    let (q, s) = (c.get("query_start_loc").ints(), c.get("seq_lens").ints());
    let b = s.len() as i64;
    let (qi, si) = (HostInts::of(&q, Int::I32, 1), HostInts::of(&s, Int::I32, 1));
    let di = HostInts::of(&s, Int::I32, 1);
    let md = CommonAttnMetadata {
        query_start_loc: Some(qi.view()),
        seq_lens: Some(si.view()),
        dcp_local_seq_lens: Some(di.view()),
        num_reqs: b,
        ..Default::default()
    };
    let mut qo = HostInts::new(&[b + 1], Int::I32, 1);
    let mut so = HostInts::new(&[b], Int::I32, 1);
    let mut d_o = HostInts::new(&[b], Int::I32, 1);
    for (dcp, needle) in [
        (
            None,
            "cattn::extend_all_queries_by_n_with: dcp.size is not given",
        ),
        (
            Some(DcpGroup {
                rank: b + 100,
                ..dcp_group_of(c)
            }),
            "cattn::extend_all_queries_by_n_with: dcp.rank ",
        ),
    ] {
        support::expect_error(
            extend_all_queries_by_n_with(
                &md,
                1,
                None,
                &mut ExtendOutputs {
                    query_start_loc: qo.view_mut(),
                    query_start_loc_cpu: None,
                    seq_lens: so.view_mut(),
                    seq_lens_cpu: None,
                },
                &mut ExtendNewerOutputs {
                    dcp_local_seq_lens: Some(d_o.view_mut()),
                    ..Default::default()
                },
                dcp,
                Stream::DEFAULT,
            ),
            Status::InvalidArgument,
            needle,
        );
        assert!(d_o.values().iter().all(|&v| v == POISON));
    }
    let ui = HostInts::of(&s, Int::I32, 1);
    let with_upper = CommonAttnMetadata {
        dcp_local_seq_lens: None,
        seq_lens_cpu_upper_bound: Some(ui.view()),
        ..md.clone()
    };
    support::expect_error(
        extend_all_queries_by_n(
            &with_upper,
            1,
            None,
            &mut ExtendOutputs {
                query_start_loc: qo.view_mut(),
                query_start_loc_cpu: None,
                seq_lens: so.view_mut(),
                seq_lens_cpu: None,
            },
            Stream::DEFAULT,
        ),
        Status::InvalidArgument,
        "args->out->seq_lens_cpu_upper_bound is NULL",
    );
}

#[test]
fn make_kv_sharing_fast_prefill_common_attn_metadata_upstream_vectors() {
    let cases = load_cases("make_kv_sharing_fast_prefill_common_attn_metadata_upstream");
    assert!(cases.len() > 5);
    for c in &cases {
        let name = c.get("name").str();
        let q = c.get("query_start_loc").ints();
        let li = c.get("logits_indices_padded").ints();
        let b = q.len() as i64 - 1;
        let e = c.get("expect");
        let trusted = c.get("max_logits_per_req").i64();
        for given in [true, false] {
            let qi = HostInts::of(&q, Int::I32, 1);
            let logits = HostInts::of(&li, Int::I64, 1);
            let upper = HostInts::of(&vec![0; b as usize], Int::I64, 1);
            let positions = HostInts::of(&[0; 4], Int::I64, 1);
            let prefilling = HostInts::of(&vec![0; b as usize], Int::I32, 1);
            let md = CommonAttnMetadata {
                query_start_loc: Some(qi.view()),
                logits_indices_padded: Some(logits.view()),
                num_logits_indices: li.len() as i64,
                num_reqs: b,
                max_query_len: c.get("max_query_len").i64(),
                max_logits_per_req: given.then_some(trusted),
                seq_lens_cpu_upper_bound: Some(upper.view()),
                positions: Some(positions.view()),
                is_prefilling: Some(prefilling.view()),
                ..Default::default()
            };
            let mut qo = HostInts::new(&[b + 1], Int::I64, 1);
            let mut mt = HostInts::new(&[2], Int::I64, 1);
            let got = make_kv_sharing_fast_prefill_common_attn_metadata(
                &md,
                &mut FastPrefillOutputs {
                    query_start_loc: qo.view_mut(),
                    query_start_loc_cpu: None,
                    decode_max_and_total: Some(mt.view_mut()),
                },
                Stream::DEFAULT,
            )
            .unwrap_or_else(|err| panic!("{name}: {err}"));
            assert!(!got.passthrough, "{name}");
            let dq = qo.values();
            assert_eq!(dq, e.get("query_start_loc").ints(), "{name}");
            assert_eq!(
                got.scalars.num_actual_tokens,
                e.get("num_actual_tokens").i64(),
                "{name}"
            );
            let largest = dq.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
            if given && trusted > 0 {
                assert_eq!(
                    got.scalars.max_query_len,
                    e.get("max_query_len").i64(),
                    "{name}"
                );
            } else {
                // Not given (or 0, read as not given): the largest decode query, as in 1.0.
                assert_eq!(got.scalars.max_query_len, largest, "{name} given {given}");
            }
            // The tensor always holds the computed counts.
            assert_eq!(mt.values(), vec![largest, e.get("num_actual_tokens").i64()]);
            let kept = got.newer;
            assert_eq!(
                kept.seq_lens_cpu_upper_bound,
                e.get("keeps_upper_bound").bool(),
                "{name}"
            );
            assert_eq!(kept.positions, e.get("keeps_positions").bool(), "{name}");
            assert_eq!(
                kept.is_prefilling,
                e.get("keeps_is_prefilling").bool(),
                "{name}"
            );
            assert_eq!(got.scalars.max_logits_per_req, None, "{name}");
            assert!(e.get("max_logits_per_req").is_null(), "{name}");
        }
    }
}

#[test]
fn make_local_attention_virtual_batches_upstream_vectors() {
    let cases = load_cases("make_local_attention_virtual_batches_upstream");
    assert!(cases.len() > 5);
    for c in &cases {
        let name = c.get("name").str();
        let q = c.get("query_start_loc").ints();
        let s = c.get("seq_lens").ints();
        let (b, cols) = (s.len() as i64, c.get("cols").i64());
        let (qi, si) = (HostInts::of(&q, Int::I32, 1), HostInts::of(&s, Int::I32, 1));
        let table = HostInts::shaped(&vec![0; (b * cols) as usize], &[b, cols], Int::I32, 1);
        let md = CommonAttnMetadata {
            query_start_loc_cpu: Some(qi.view()),
            seq_lens_cpu: Some(si.view()),
            block_table_tensor: Some(table.view()),
            num_reqs: b,
            num_actual_tokens: *q.last().unwrap(),
            ..Default::default()
        };
        let plan = LocalAttentionPlan::new(
            &md,
            c.get("attn_chunk_size").i64(),
            c.get("block_size").i64(),
        )
        .unwrap_or_else(|err| panic!("{name}: {err}"));
        let PlanShape {
            virtual_batches: v,
            pages,
        } = plan.shape().unwrap();
        let want = c.get("expect").get("seq_lens_cpu_upper_bound").ints();
        assert_eq!(v, want.len() as i64, "{name}");
        assert_eq!(v, c.get("expect").get("num_reqs").i64(), "{name}");
        // Upstream's is the input's [B] tensor, mis-shaped for V virtual batches.
        assert_eq!(
            c.get("upstream")
                .get("seq_lens_cpu_upper_bound")
                .ints()
                .len(),
            s.len(),
            "{name}"
        );
        for step in [1, 3] {
            let mut qo = HostInts::new(&[v + 1], Int::I64, 1);
            let mut so = HostInts::new(&[v], Int::I64, 1);
            let mut co = HostInts::new(&[v], Int::I64, 1);
            let mut bo = HostInts::new(&[v, pages], Int::I32, 1);
            let mut upper = HostInts::new(&[v], Int::I32, step);
            let mut fill = |upper: &mut HostInts| {
                plan.fill_with_upper_bound(
                    &md,
                    &mut LocalAttentionOutputs {
                        query_start_loc_cpu: qo.view_mut(),
                        seq_lens_cpu: so.view_mut(),
                        num_computed_tokens_cpu: co.view_mut(),
                        block_table_tensor: bo.view_mut(),
                        query_start_loc: None,
                        seq_lens: None,
                    },
                    Some(&mut upper.view_mut()),
                    Stream::DEFAULT,
                )
            };
            let got = fill(&mut upper).unwrap_or_else(|err| panic!("{name}: {err}"));
            assert_eq!(got.num_reqs, v, "{name}");
            assert_eq!(upper.values(), want, "{name} step {step}");
            // A wrongly sized one is refused before anything is written.
            let mut wrong = HostInts::new(&[if b == v { v + 1 } else { b }], Int::I32, 1);
            let before = wrong.clone();
            assert!(fill(&mut wrong).is_err(), "{name}");
            assert_eq!(wrong, before, "{name}");
            assert_eq!(so.values(), want, "{name} step {step}");
        }
    }
}

#[test]
fn unpadded_cuts_the_1_1_fields() {
    let (qsl, seq) = ([0i32, 3, 7, 7], [5i32, 9, 0]);
    let (positions, upper, dcp) = ([0i64; 8], [6i32, 9, 0], [3i32, 5, 0]);
    let md = CommonAttnMetadata {
        query_start_loc: Some(TensorRef::from_slice(&qsl)),
        seq_lens: Some(TensorRef::from_slice(&seq)),
        positions: Some(TensorRef::from_slice(&positions)),
        seq_lens_cpu_upper_bound: Some(TensorRef::from_slice(&upper)),
        dcp_local_seq_lens: Some(TensorRef::from_slice(&dcp)),
        num_reqs: 3,
        max_logits_per_req: Some(2),
        ..Default::default()
    };
    let u = unpadded(&md, 7, 2).unwrap();
    assert_eq!(u.positions.unwrap().shape(), &[7]);
    assert_eq!(u.seq_lens_cpu_upper_bound.unwrap().shape(), &[2]);
    assert_eq!(u.dcp_local_seq_lens.unwrap().shape(), &[2]);
    assert!(u.is_prefilling.is_none() && u.encoder_seq_lens.is_none());
    assert_eq!(u.max_logits_per_req, Some(2));
    // A cut past a newer field's length is an error too.
    let short = CommonAttnMetadata {
        positions: Some(TensorRef::from_slice(&positions[..5])),
        ..md.clone()
    };
    assert_eq!(
        unpadded(&short, 7, 2).unwrap_err().status(),
        Status::InvalidArgument
    );
}

/// Every vector file is read by one of the tests above (a new utility's vectors need a test).
#[test]
fn every_vector_file_is_covered() {
    let covered = [
        "compute_causal_conv1d_metadata",
        "compute_mm_prefix_range_tensor",
        "extend_all_queries_by_n",
        "extend_all_queries_by_n_upstream",
        "fill_mm_prefix_query_ranges",
        "fused_pcp_qkv_select",
        "get_dcp_local_seq_lens",
        "get_dcp_local_seq_lens_nd",
        "get_kv_cache_layout",
        "get_pcp_query_restore_idx",
        "get_per_layer_parameters",
        "get_supported_kv_cache_layouts", // tests/kv_cache_layout.rs
        "kv_cache_layout",                // tests/kv_cache_layout.rs
        "log2_lse_to_ln",
        "make_kv_sharing_fast_prefill_common_attn_metadata",
        "make_kv_sharing_fast_prefill_common_attn_metadata_upstream",
        "make_local_attention_virtual_batches",
        "make_local_attention_virtual_batches_upstream",
        "mamba_get_block_table_tensor",
        "max_local_attention_virtual_batches",
        "naive_query_lens",
        "reorder_batch_to_split_decodes_and_prefills", // tests/split.rs
        "resolve_kv_cache_layout",                     // tests/kv_cache_layout.rs
        "spec_decode",                                 // tests/spec_decode.rs
        "split_decodes_and_prefills",                  // tests/split.rs
        "split_decodes_prefills_and_extends",          // tests/split.rs
        "split_prefill_chunks",                        // tests/split.rs
        "step_inputs",                                 // tests/step_inputs.rs
        "token_to_req_indices",
        "unpadded",
    ];
    let mut files: Vec<String> = std::fs::read_dir(support::vectors_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    files.sort();
    assert_eq!(
        files, covered,
        "a vector file without a Rust conformance test"
    );
}
