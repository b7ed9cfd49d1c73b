// SPDX-License-Identifier: Apache-2.0
//! The one-call helpers: each against the oracle vectors of its utility, with int32 and int64
//! slices (the result keeping the input's element type), failing where the utility fails, and
//! the checks they make themselves before calling the library, in the library's message form.

mod support;

use cattn::*;
use support::json::Json;
use support::{expect_error, load_cases};

/// The values as `T`, or `None` when one does not fit (then the case is for int64 only).
fn narrow<T: IndexElement + TryFrom<i64>>(values: &[i64]) -> Option<Vec<T>> {
    values.iter().map(|&v| T::try_from(v).ok()).collect()
}

fn wide<T: IndexElement>(values: &[T]) -> Vec<i64> {
    values.iter().map(|&v| v.to_i64()).collect()
}

fn wide_rows<T: IndexElement>(rows: &[Vec<T>]) -> Vec<i64> {
    rows.iter().flat_map(|r| wide(r)).collect()
}

/// The rows of a JSON array of arrays, as `T`.
fn rows_of<T: IndexElement + TryFrom<i64>>(j: &Json) -> Option<Vec<Vec<T>>> {
    j.array().iter().map(|r| narrow(&r.ints())).collect()
}

/// Runs `case` for int32 (when the values fit) and int64.
macro_rules! both {
    ($case:ident, $c:expr) => {{
        $case::<i32>($c);
        $case::<i64>($c);
    }};
}

fn restore_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let Some(cu) = narrow::<T>(&c.get("cu_num_tokens").ints()) else {
        return;
    };
    let got = pcp_query_restore_idx(&cu).unwrap();
    assert_eq!(
        wide(&got),
        c.get("restore_idx").ints(),
        "{}",
        c.get("name").str()
    );
}

#[test]
fn pcp_query_restore_idx_vectors() {
    for c in &load_cases("get_pcp_query_restore_idx") {
        both!(restore_case, c);
    }
}

fn dcp_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let Some(seq) = narrow::<T>(&c.get("seq_lens").ints()) else {
        return;
    };
    let (size, rank, il) = (
        c.get("dcp_size").i64(),
        c.get("dcp_rank").i64(),
        c.get("interleave").i64(),
    );
    let want = c.get("out").ints();
    if rank < 0 {
        let got = dcp_local_seq_lens_all_ranks(&seq, size, il).unwrap();
        assert!(got.iter().all(|r| r.len() as i64 == size), "{name}");
        assert_eq!(wide_rows(&got), want, "{name}");
    } else {
        let got = dcp_local_seq_lens(&seq, size, rank, il).unwrap();
        assert_eq!(wide(&got), want, "{name}");
        // Rank by rank, the one-rank helper gives the all-ranks helper's columns.
        let all = dcp_local_seq_lens_all_ranks(&seq, size, il).unwrap();
        let column: Vec<T> = all.iter().map(|r| r[rank as usize]).collect();
        assert_eq!(column, got, "{name}");
    }
}

#[test]
fn dcp_local_seq_lens_vectors() {
    for c in &load_cases("get_dcp_local_seq_lens") {
        both!(dcp_case, c);
    }
    // A size the library refuses is the library's message, not a shaping failure here.
    let e = expect_error(
        dcp_local_seq_lens_all_ranks(&[4i32, 5], 0, 1),
        Status::InvalidArgument,
        "cattn::dcp_local_seq_lens_all_ranks: dcp_size is out of range",
    );
    assert!(e.message().contains("got 0"), "{e}");
    expect_error(
        dcp_local_seq_lens(&[4i64, 5], 2, -1, 1),
        Status::InvalidArgument,
        "cattn::dcp_local_seq_lens: dcp_rank is negative (got DcpRank::Rank(-1), expected a \
         rank in [0, dcp_size) or DcpRank::All)",
    );
    expect_error(
        dcp_local_seq_lens(&[4i64, 5], 2, 2, 1),
        Status::InvalidArgument,
        "cattn::dcp_local_seq_lens: dcp_rank is out of range",
    );
}

fn conv1d_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let Some(qsl) = narrow::<T>(&c.get("query_start_loc_cpu").ints()) else {
        return;
    };
    let m = causal_conv1d_metadata(&qsl, c.get("block_m").i64()).unwrap();
    assert_eq!(wide(&m.nums), c.get("nums").ints(), "{name}");
    assert_eq!(m.mlist.len() as i64, c.get("tot").i64(), "{name}");
    assert_eq!(wide(&m.mlist), c.get("mlist").ints(), "{name}");
    assert_eq!(wide(&m.offsetlist), c.get("offsetlist").ints(), "{name}");
    let capacity = c.get("capacity").i64() as usize;
    for (got, head) in [
        (&m.batch_ptr, "batch_ptr_head"),
        (&m.token_chunk_offset_ptr, "token_chunk_offset_ptr_head"),
    ] {
        let mut want = c.get(head).ints();
        want.resize(capacity, PAD_SLOT_ID);
        assert_eq!(wide(got), want, "{name} {head}");
    }
}

#[test]
fn causal_conv1d_metadata_vectors() {
    for c in &load_cases("compute_causal_conv1d_metadata") {
        both!(conv1d_case, c);
    }
    expect_error(
        causal_conv1d_metadata(&[0i32, 4, 2], 8),
        Status::InvalidArgument,
        "cattn::causal_conv1d_metadata: query_start_loc ",
    );
}

fn local_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let (Some(qsl), Some(seq), Some(table)) = (
        narrow::<T>(&c.get("query_start_loc").ints()),
        narrow::<T>(&c.get("seq_lens").ints()),
        rows_of::<T>(c.get("block_table")),
    ) else {
        return;
    };
    // The helper takes num_actual_tokens from query_start_loc; other cases set it apart.
    if qsl.last().map(|v| v.to_i64()) != Some(c.get("num_actual_tokens").i64()) {
        return;
    }
    let got = local_attention_virtual_batches(
        c.get("attn_chunk_size").i64(),
        c.get("block_size").i64(),
        &qsl,
        &seq,
        &table,
    );
    let e = c.get("expect");
    if e.has("error") {
        assert!(got.is_err(), "{name}");
        return;
    }
    let got = got.unwrap_or_else(|err| panic!("{name}: {err}"));
    assert_eq!(
        wide(&got.query_start_loc),
        e.get("query_start_loc").ints(),
        "{name}"
    );
    assert_eq!(wide(&got.seq_lens), e.get("seq_lens").ints(), "{name}");
    assert_eq!(
        wide(&got.num_computed_tokens),
        e.get("num_computed_tokens").ints(),
        "{name}"
    );
    assert_eq!(
        wide_rows(&got.block_table),
        e.get("block_table").flat_ints(),
        "{name}"
    );
    let pages = e.get("pages").i64();
    assert!(
        got.block_table.iter().all(|r| r.len() as i64 == pages),
        "{name}"
    );
    assert_eq!(got.scalars.num_reqs, e.get("num_reqs").i64(), "{name}");
    assert_eq!(
        got.scalars.max_query_len,
        e.get("max_query_len").i64(),
        "{name}"
    );
    assert_eq!(
        got.scalars.max_seq_len,
        e.get("max_seq_len").i64(),
        "{name}"
    );
}

#[test]
fn local_attention_virtual_batches_vectors() {
    for c in &load_cases("make_local_attention_virtual_batches") {
        both!(local_case, c);
    }
    expect_error(
        local_attention_virtual_batches(4, 2, &[0, 2, 3], &[2, 1], &[vec![0, 1], vec![2]]),
        Status::InvalidArgument,
        "cattn::local_attention_virtual_batches: block_table[1] is not as long as the first row \
         (got 1 entries, expected 2 entries)",
    );
    expect_error(
        local_attention_virtual_batches(4, 3, &[0, 2, 3], &[2, 1], &[[0, 1], [2, 3]]),
        Status::InvalidArgument,
        "cattn::local_attention_virtual_batches: block_size does not divide",
    );
}

fn mamba_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let (Some(table), Some(seq)) = (
        rows_of::<T>(c.get("block_table")),
        narrow::<T>(&c.get("seq_lens").ints()),
    ) else {
        return;
    };
    let mode = [
        MambaCacheMode::None,
        MambaCacheMode::All,
        MambaCacheMode::Align,
    ][c.get("mode").i64() as usize];
    let got = mamba_block_table(
        &table,
        Some(&seq),
        c.get("block_size").i64(),
        c.get("num_speculative_blocks").i64(),
        mode,
    );
    if c.has("error") {
        let e = got.unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument, "{name}");
        return;
    }
    let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(wide_rows(&got), c.get("out").flat_ints(), "{name}");
    let shape = c.get("shape").ints();
    assert_eq!(got.len() as i64, shape[0], "{name}");
}

#[test]
fn mamba_block_table_vectors() {
    for c in &load_cases("mamba_get_block_table_tensor") {
        both!(mamba_case, c);
    }
    // The copy modes need no lengths; align does.
    let table = [[1i64, 2], [3, 4]];
    assert_eq!(
        mamba_block_table(&table, None, 0, 0, MambaCacheMode::None).unwrap(),
        [[1, 2], [3, 4]]
    );
    expect_error(
        mamba_block_table(&table, None, 16, 0, MambaCacheMode::Align),
        Status::InvalidArgument,
        "cattn::mamba_block_table: seq_lens ",
    );
    expect_error(
        mamba_block_table(&[vec![1i32], vec![]], None, 0, 0, MambaCacheMode::All),
        Status::InvalidArgument,
        "cattn::mamba_block_table: block_table[1] is not as long as the first row",
    );
}

fn extend_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let (Some(qsl), Some(seq)) = (
        narrow::<T>(&c.get("query_start_loc").ints()),
        narrow::<T>(&c.get("seq_lens").ints()),
    ) else {
        return;
    };
    let e = c.get("expect");
    let Ok(got) = queries_extended_by_n(&qsl, &seq, c.get("n").i64()) else {
        // A value that does not fit int32 after the extension.
        assert!(std::mem::size_of::<T>() == 4, "{name}");
        return;
    };
    assert_eq!(
        wide(&got.query_start_loc),
        e.get("query_start_loc").ints(),
        "{name}"
    );
    assert_eq!(wide(&got.seq_lens), e.get("seq_lens").ints(), "{name}");
    // The scalars the helper derives are the case's when the case is not padded.
    let derived = [
        qsl.last().unwrap().to_i64(),
        qsl.windows(2)
            .map(|w| w[1].to_i64() - w[0].to_i64())
            .max()
            .unwrap_or(0),
        seq.iter().map(|v| v.to_i64()).max().unwrap_or(0),
    ];
    let given = [
        c.get("num_actual_tokens").i64(),
        c.get("max_query_len").i64(),
        c.get("max_seq_len").i64(),
    ];
    if derived == given {
        assert_eq!(
            [
                got.scalars.num_actual_tokens,
                got.scalars.max_query_len,
                got.scalars.max_seq_len
            ],
            [
                e.get("num_actual_tokens").i64(),
                e.get("max_query_len").i64(),
                e.get("max_seq_len").i64()
            ],
            "{name}"
        );
    }
}

#[test]
fn queries_extended_by_n_vectors() {
    for c in &load_cases("extend_all_queries_by_n") {
        both!(extend_case, c);
    }
    expect_error(
        queries_extended_by_n(&[0i32, 1], &[1], -1),
        Status::InvalidArgument,
        "cattn::queries_extended_by_n: n ",
    );
}

fn fast_prefill_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    // The helper always has logits indices (a slice, perhaps empty): vLLM's None is not one.
    if c.get("logits_indices_padded").is_null() {
        return;
    }
    let (Some(qsl), Some(logits)) = (
        narrow::<T>(&c.get("query_start_loc").ints()),
        narrow::<T>(&c.get("logits_indices_padded").ints()),
    ) else {
        return;
    };
    let used = &logits[..c.get("num_logits_indices").i64() as usize];
    let derived = qsl.windows(2).map(|w| w[1].to_i64() - w[0].to_i64()).max();
    if derived != Some(c.get("max_query_len").i64())
        || qsl.len() as i64 - 1 != c.get("num_reqs").i64()
    {
        return;
    }
    let got = kv_sharing_fast_prefill_metadata(&qsl, used);
    if c.has("seed_error") {
        assert!(got.is_err(), "{name}");
        return;
    }
    let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
    let e = c.get("expect");
    assert_eq!(got.passthrough, c.get("passthrough").bool(), "{name}");
    assert_eq!(
        wide(&got.query_start_loc),
        e.get("query_start_loc").ints(),
        "{name}"
    );
    assert_eq!(
        got.scalars.max_query_len,
        e.get("max_query_len").i64(),
        "{name}"
    );
    assert_eq!(
        got.scalars.num_actual_tokens,
        e.get("num_actual_tokens").i64(),
        "{name}"
    );
}

#[test]
fn kv_sharing_fast_prefill_metadata_vectors() {
    for c in &load_cases("make_kv_sharing_fast_prefill_common_attn_metadata") {
        both!(fast_prefill_case, c);
    }
    // One-token queries pass through: the result is the input.
    let f = kv_sharing_fast_prefill_metadata(&[0i64, 1, 2], &[0, 1]).unwrap();
    assert!(f.passthrough);
    assert_eq!(f.query_start_loc, [0, 1, 2]);
}

fn lens_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let (Some(qsl), Some(seq)) = (
        narrow::<T>(&c.get("query_start_loc").ints()),
        narrow::<T>(&c.get("seq_lens").ints()),
    ) else {
        return;
    };
    let e = c.get("expect");
    // The vectors' B is seq_lens' length; the helper's query_start_loc's less one.
    if qsl.len() == seq.len() + 1 {
        match query_lens(&qsl) {
            Ok(got) => assert_eq!(wide(&got), e.get("naive_query_lens").ints(), "{name}"),
            Err(err) => assert!(e.get("naive_query_lens").is_null(), "{name}: {err}"),
        }
    }
    match num_computed_tokens(&qsl, &seq) {
        Ok(got) => assert_eq!(
            wide(&got),
            e.get("compute_num_computed_tokens").ints(),
            "{name}"
        ),
        Err(err) => assert!(
            e.get("compute_num_computed_tokens").is_null(),
            "{name}: {err}"
        ),
    }
}

#[test]
fn query_lens_and_num_computed_tokens_vectors() {
    for c in &load_cases("naive_query_lens") {
        both!(lens_case, c);
    }
}

fn token_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let Some(qsl) = narrow::<T>(&c.get("query_start_loc").ints()) else {
        return;
    };
    // The helper sizes its own buffer, so the vectors' short-buffer errors do not apply.
    let mirror = c.get("query_start_loc_cpu");
    if c.has("error") || mirror.is_null() || mirror.ints() != c.get("query_start_loc").ints() {
        return;
    }
    let tokens = c.get("num_actual_tokens").i64() as usize;
    let got = token_to_req_indices_vec(&qsl, tokens).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(wide(&got), c.get("result").ints(), "{name}");
}

#[test]
fn token_to_req_indices_vectors() {
    for c in &load_cases("token_to_req_indices") {
        both!(token_case, c);
    }
}

fn mm_case<T: IndexElement + TryFrom<i64>>(c: &Json) {
    let name = c.get("name").str();
    let (Some(qsl), Some(seq)) = (
        narrow::<T>(&c.get("query_start_loc").ints()),
        narrow::<T>(&c.get("seq_lens").ints()),
    ) else {
        return;
    };
    let per_request: Vec<Vec<(i64, i64)>> = if c.get("none_input").bool() {
        Vec::new()
    } else {
        let offsets = c.get("range_offsets").ints();
        let ranges: Vec<(i64, i64)> = c
            .get("ranges")
            .array()
            .iter()
            .map(|r| (r.array()[0].i64(), r.array()[1].i64()))
            .collect();
        offsets
            .windows(2)
            .map(|w| ranges[w[0] as usize..w[1] as usize].to_vec())
            .collect()
    };
    let got = mm_prefix_query_ranges(&per_request, &qsl, &seq);
    let rows = c.get("rows").i64();
    let Ok(got) = got else {
        // Range values past int32 are the library's error for an int32 output only.
        return;
    };
    match got {
        None => assert_eq!(rows, 0, "{name}"),
        Some(pairs) => {
            assert_eq!(pairs.len() as i64, rows, "{name}");
            let flat: Vec<i64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
            assert_eq!(flat, c.get("out").ints()[..flat.len()], "{name}");
        }
    }
}

#[test]
fn mm_prefix_query_ranges_vectors() {
    for c in &load_cases("fill_mm_prefix_query_ranges") {
        both!(mm_case, c);
    }
}

fn head_rows<'a>(data: &'a [i64], shape: &[i64]) -> HeadRows<'a, i64> {
    HeadRows {
        data,
        heads: shape[1] as usize,
        head_dim: shape[2] as usize,
    }
}

#[test]
fn pcp_qkv_halves_vectors() {
    for c in &load_cases("fused_pcp_qkv_select") {
        let name = c.get("name").str();
        let shape = |key: &str| c.get(key).ints();
        // Element i of each input is i, as the vectors' inputs.
        let input = |key: &str| -> Vec<i64> { (0..shape(key).iter().product::<i64>()).collect() };
        let (q, k, v) = (input("q_shape"), input("k_shape"), input("v_shape"));
        let h = pcp_qkv_halves(
            head_rows(&q, &shape("q_shape")),
            head_rows(&k, &shape("k_shape")),
            head_rows(&v, &shape("v_shape")),
            &c.get("query_start_loc").ints(),
            c.get("pcp_world_size").i64(),
            c.get("pcp_rank").i64(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (got, key) in [
            (&h.q_head, "q_head"),
            (&h.q_tail, "q_tail"),
            (&h.k_head, "k_head"),
            (&h.k_tail, "k_tail"),
            (&h.v_head, "v_head"),
            (&h.v_tail, "v_tail"),
        ] {
            // Element p holds input element want[p], which is want[p] itself here; -1: left
            // unwritten (rows past query_start_loc[B] / 2), so still zero.
            let want: Vec<i64> = c.get(key).ints().iter().map(|&src| src.max(0)).collect();
            assert_eq!(got, &want, "{name} {key}");
        }
    }
    let data = [0f32; 10];
    let rows = |heads, head_dim| HeadRows {
        data: &data,
        heads,
        head_dim,
    };
    expect_error(
        pcp_qkv_halves(rows(2, 2), rows(1, 1), rows(1, 1), &[0i32, 2], 1, 0),
        Status::InvalidArgument,
        "cattn::pcp_qkv_halves: q.data does not hold whole rows (got 10 elements, expected a \
         multiple of heads * head_dim = 4)",
    );
    expect_error(
        pcp_qkv_halves(rows(1, 1), rows(0, 1), rows(1, 1), &[0i32, 2], 1, 0),
        Status::InvalidArgument,
        "cattn::pcp_qkv_halves: k.heads is 0 (got 0, expected at least 1)",
    );
    expect_error(
        pcp_qkv_halves(rows(1, 1), rows(1, 1), rows(1, 1), &[0i32, 2], 2, 2),
        Status::InvalidArgument,
        "cattn::pcp_qkv_halves: pcp_rank is out of range",
    );
}

#[test]
fn log2_lse_to_ln_vec_keeps_the_input() {
    let lse = [1.0f32, -2.0, 0.5];
    let ln = log2_lse_to_ln_vec(&lse).unwrap();
    let mut in_place = lse;
    log2_lse_to_ln_f32(&mut in_place).unwrap();
    assert_eq!(ln, in_place);
    assert_eq!(lse, [1.0, -2.0, 0.5]);
    assert!(log2_lse_to_ln_vec::<f64>(&[]).unwrap().is_empty());
}

/// The helpers are methods of every `Api`, so a library loaded at run time has them too.
#[cfg(unix)]
#[test]
fn the_helpers_are_api_methods() {
    let path = dynamic::loaded_library_path().expect("the linked libcattn is mapped");
    let lib = dynamic::Library::open(path).unwrap();
    let api = lib.api();
    let qsl = [0i32, 4, 14, 19];
    let seq = [6i32, 17, 9];
    let cu = [0i64, 8, 9, 21, 33];
    assert_eq!(
        api.pcp_query_restore_idx(&cu).unwrap(),
        pcp_query_restore_idx(&cu).unwrap()
    );
    assert_eq!(
        api.dcp_local_seq_lens_all_ranks(&seq, 2, 4).unwrap(),
        dcp_local_seq_lens_all_ranks(&seq, 2, 4).unwrap()
    );
    assert_eq!(
        api.causal_conv1d_metadata(&qsl, 8).unwrap(),
        causal_conv1d_metadata(&qsl, 8).unwrap()
    );
    let table: Vec<Vec<i32>> = (0..3).map(|r| (9 * r..9 * r + 9).collect()).collect();
    assert_eq!(
        api.local_attention_virtual_batches(4, 2, &qsl, &seq, &table)
            .unwrap(),
        local_attention_virtual_batches(4, 2, &qsl, &seq, &table).unwrap()
    );
    assert_eq!(api.query_lens(&qsl).unwrap(), [4, 10, 5]);
    assert_eq!(api.resolve_layout(&["HND"]).unwrap(), CacheLayout::Lbhnc);
}
