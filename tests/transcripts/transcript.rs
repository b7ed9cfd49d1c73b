// SPDX-License-Identifier: Apache-2.0
//! transcript.rs - a test transcript: the batch of the C transcript (transcript.c, next to this
//! file) through the safe Rust API. It runs every libcattn utility (1-15) on one small,
//! hand-checkable batch and prints the inputs, the results and the status of every call, in the
//! very format of the C transcript's host run; scripts/test_rust.sh diffs the two.
//!
//! The batch: 4 requests mixing prefill and decode, KV block size 4, 10 blocks per request.
//!
//!   request             0 (new prompt)   1 (chunked prefill)   2 (chunked prefill)   3 (decode)
//!   query tokens        16               4                     8                     1
//!   sequence length     16               10                    17                    33
//!   block table row     0 1 ... 9        10 11 ... 19          20 21 ... 29          30 ... 39
//!
//! The 1.2 sections (14, step inputs; 15, speculative decoding) take the batch as vLLM's model
//! runner v2 keeps it, persistent request rows and all, plus a fifth request (a decode with 2
//! drafts) in a CUDA-graph bucket of 6 rows, and then run a drafter step on it.
//!
//! It always runs on the host: Rust has no CUDA runtime here to allocate device memory with
//! (device tensors would come in through `TensorRef::from_raw_parts`).
//!
//! Run from bindings/rust (bindings/rust/cattn/Cargo.toml names this file as the example
//! `transcript`): `CATTN_LIB_DIR=<build> LD_LIBRARY_PATH=<build> cargo run --example transcript`.
//! pcp_kv_allgather_and_restore (the NCCL all-gather + restore) needs GPUs and NCCL: as the C
//! transcript's host run, this shows the status a host caller gets and does not count it.
//!
//! Exit status: 0 when every counted utility returned CATTN_OK, 1 otherwise.

use std::mem::size_of;
use std::process::ExitCode;

use cattn::sys;
use cattn::*;

// ---------------------------------------------------------------------------------------------
// Printing, as the C transcript's printf("%g") and print_tensor do it
// ---------------------------------------------------------------------------------------------

/// C's `%g`: 6 significant digits, trailing zeros dropped, exponent form outside
/// [1e-4, 1e6).
fn g(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    const P: i32 = 6;
    // The exponent after rounding to P significant digits decides the form.
    let sci = format!("{:.*e}", (P - 1) as usize, v);
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if (-4..P).contains(&exp) {
        strip(&format!("{:.*}", (P - 1 - exp) as usize, v))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    }
}

/// The values of a host tensor, for printing.
trait Printable: Copy {
    const NAME: &'static str;
    fn value(self) -> f64;
}
impl Printable for i32 {
    const NAME: &'static str = "int32";
    fn value(self) -> f64 {
        f64::from(self)
    }
}
impl Printable for i64 {
    const NAME: &'static str = "int64";
    fn value(self) -> f64 {
        self as f64
    }
}
/// Flags (the speculative-decoding masks): one byte per entry, nonzero = set.
impl Printable for u8 {
    const NAME: &'static str = "uint8";
    fn value(self) -> f64 {
        f64::from(self)
    }
}
impl Printable for f32 {
    const NAME: &'static str = "float32";
    fn value(self) -> f64 {
        f64::from(self)
    }
}

fn run(values: &[f64]) -> String {
    values.iter().map(|&v| g(v)).collect::<Vec<_>>().join(", ")
}

/// Prints `label`, the shape, the dtype and the values; long tensors print `head` values and
/// summarise the rest (saying so when it is one repeated value, e.g. padding).
fn print_tensor_head<T: Printable>(label: &str, data: &[T], shape: &[i64], head: usize) {
    let values: Vec<f64> = data.iter().map(|v| v.value()).collect();
    let dims = shape
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    print!("    {label:<26} ");
    if shape.len() == 2 {
        println!("[{dims}] {}", T::NAME);
        let cols = shape[1] as usize;
        for row in values.chunks(cols.max(1)) {
            println!("      [{}]", run(row));
        }
        return;
    }
    if shape.len() == 1 {
        print!("[{dims}] {} = [", T::NAME);
    } else {
        print!("[{dims}] {}, flattened = [", T::NAME);
    }
    if values.len() <= head {
        println!("{}]", run(&values));
    } else {
        let rest = &values[head..];
        let more = rest.len();
        if rest.iter().all(|&v| v == rest[0]) {
            println!(
                "{}, ... {more} more, all {}]",
                run(&values[..head]),
                g(rest[0])
            );
        } else {
            println!("{}, ... {more} more]", run(&values[..head]));
        }
    }
}

fn print_tensor<T: Printable>(label: &str, data: &[T], shape: &[i64]) {
    print_tensor_head(label, data, shape, 40);
}

fn section(utility: usize, title: &str) {
    println!("\n== {utility}. {title} ==");
}

fn print_scalars(m: &MetadataScalars) {
    println!(
        "    num_reqs {}, num_actual_tokens {}, max_query_len {}, max_seq_len {}, causal {}",
        m.num_reqs,
        m.num_actual_tokens,
        m.max_query_len,
        m.max_seq_len,
        i32::from(m.causal)
    );
}

// ---------------------------------------------------------------------------------------------
// Status bookkeeping: every call's status is printed; a utility fails if a call that should
// succeed did not, or a call made to show an error did not give that error.
// ---------------------------------------------------------------------------------------------

const NUM_UTILITIES: usize = 15;

#[derive(Default)]
struct Tally {
    first_bad: [Option<Status>; NUM_UTILITIES + 1],
    /// Why a utility's status does not decide the exit status (None: it does).
    not_counted: [Option<&'static str>; NUM_UTILITIES + 1],
}

impl Tally {
    fn record_failure(&mut self, utility: usize, status: Status) {
        self.first_bad[utility].get_or_insert(status);
    }

    /// Prints a call's status; the value on success.
    fn check<T>(&mut self, utility: usize, call: &str, result: Result<T>) -> Option<T> {
        match result {
            Ok(value) => {
                println!("  {call} -> CATTN_OK");
                Some(value)
            }
            Err(e) => {
                println!(
                    "  {call} -> {}\n      message: \"{}\"",
                    e.status().name(),
                    e.message()
                );
                self.record_failure(utility, e.status());
                None
            }
        }
    }

    /// A call made on purpose with a bad argument, to show the library's error report.
    fn check_expected_error<T>(
        &mut self,
        utility: usize,
        call: &str,
        result: Result<T>,
        expected: Status,
    ) {
        match result {
            Ok(_) => {
                println!(
                    "  {call} -> CATTN_OK (expected {})\n      message: \"\"",
                    expected.name()
                );
                self.record_failure(utility, Status::Internal);
            }
            Err(e) => {
                println!(
                    "  {call} -> {} (expected {})\n      message: \"{}\"",
                    e.status().name(),
                    expected.name(),
                    e.message()
                );
                if e.status() != expected {
                    self.record_failure(utility, e.status());
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The batch
// ---------------------------------------------------------------------------------------------

const B: usize = 4;
const KV_BLOCK: i64 = 4;
const BLOCKS_PER_REQ: usize = 10;
const QUERY_LENS: [i64; B] = [16, 4, 8, 1];
const SEQ_LENS: [i64; B] = [16, 10, 17, 33];

struct Batch {
    qsl: Vec<i32>,
    seq_lens: Vec<i32>,
    num_computed: Vec<i32>,
    block_table: Vec<i32>,
    slot_mapping: Vec<i64>,
    logits_indices_padded: Vec<i32>,
    num_tokens: i64,
    max_query_len: i64,
    max_seq_len: i64,
    num_logits_indices: i64,
}

/// Slot of every query token: its page in the request's block table times the block size plus
/// its offset in the page, as vLLM's slot_mapping.
fn slot_mapping(qlens: &[i64], slens: &[i64]) -> Vec<i64> {
    let mut out = Vec::new();
    for (b, (&q, &s)) in qlens.iter().zip(slens).enumerate() {
        for i in 0..q {
            let pos = s - q + i;
            out.push(
                (b as i64 * BLOCKS_PER_REQ as i64 + pos / KV_BLOCK) * KV_BLOCK + pos % KV_BLOCK,
            );
        }
    }
    out
}

fn make_batch() -> Batch {
    let mut qsl = vec![0i32];
    for q in QUERY_LENS {
        qsl.push(qsl.last().unwrap() + q as i32);
    }
    Batch {
        num_tokens: i64::from(qsl[B]),
        qsl,
        seq_lens: SEQ_LENS.iter().map(|&s| s as i32).collect(),
        num_computed: (0..B)
            .map(|b| (SEQ_LENS[b] - QUERY_LENS[b]) as i32)
            .collect(),
        block_table: (0..B * BLOCKS_PER_REQ)
            .map(|i| ((i / BLOCKS_PER_REQ) * 10 + i % BLOCKS_PER_REQ) as i32)
            .collect(),
        slot_mapping: slot_mapping(&QUERY_LENS, &SEQ_LENS),
        // Logits at every request's last token, plus one draft position (18) of request 1;
        // padded to 8 entries as for a CUDA graph.
        logits_indices_padded: vec![15, 18, 19, 27, 28, 0, 0, 0],
        max_query_len: *QUERY_LENS.iter().max().unwrap(),
        max_seq_len: *SEQ_LENS.iter().max().unwrap(),
        num_logits_indices: 5,
    }
}

impl Batch {
    /// The batch as metadata (the same tensors serve as device tensors and host mirrors).
    fn metadata(&self) -> CommonAttnMetadata<'_> {
        CommonAttnMetadata {
            query_start_loc: Some(TensorRef::from_slice(&self.qsl)),
            query_start_loc_cpu: Some(TensorRef::from_slice(&self.qsl)),
            seq_lens: Some(TensorRef::from_slice(&self.seq_lens)),
            seq_lens_cpu: Some(TensorRef::from_slice(&self.seq_lens)),
            num_computed_tokens_cpu: Some(TensorRef::from_slice(&self.num_computed)),
            block_table_tensor: Some(self.block_table_view()),
            slot_mapping: Some(TensorRef::from_slice(&self.slot_mapping)),
            logits_indices_padded: Some(TensorRef::from_slice(&self.logits_indices_padded)),
            num_reqs: B as i64,
            num_actual_tokens: self.num_tokens,
            max_query_len: self.max_query_len,
            max_seq_len: self.max_seq_len,
            num_logits_indices: self.num_logits_indices,
            causal: true,
            // The 1.1 fields (positions, DCP and encoder lengths, ...): none in this batch.
            ..Default::default()
        }
    }

    fn block_table_view(&self) -> TensorRef<'_> {
        TensorRef::new(&self.block_table, &[B as i64, BLOCKS_PER_REQ as i64]).expect("4 x 10")
    }

    fn print(&self) {
        println!("\nThe batch (inputs shared by the sections below):");
        print_tensor("query_start_loc", &self.qsl, &[B as i64 + 1]);
        print_tensor("seq_lens", &self.seq_lens, &[B as i64]);
        print_tensor("num_computed_tokens_cpu", &self.num_computed, &[B as i64]);
        print_tensor(
            "block_table_tensor",
            &self.block_table,
            &[B as i64, BLOCKS_PER_REQ as i64],
        );
        print_tensor(
            "slot_mapping",
            &self.slot_mapping,
            &[self.slot_mapping.len() as i64],
        );
        print_tensor("logits_indices_padded", &self.logits_indices_padded, &[8]);
        println!(
            "    num_logits_indices {}, num_reqs {B}, num_actual_tokens {}, max_query_len {}, \
             max_seq_len {}",
            self.num_logits_indices, self.num_tokens, self.max_query_len, self.max_seq_len
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 1. KV-cache layout
// ---------------------------------------------------------------------------------------------

fn resolve_layout(
    tally: &mut Tally,
    ctx: &Context<'_>,
    user: Option<&str>,
    connector: Option<KvCacheLayout>,
    what: &str,
) {
    // The user setting comes as a value, never from the environment, so that the transcript does not
    // depend on the caller's environment.
    let args = KvCacheLayoutArgs {
        supported: SupportedLayouts::ANY,
        user_setting: user.map_or(UserSetting::Unset, UserSetting::Value),
        connector,
    };
    let call = format!("cattn_get_kv_cache_layout({what})");
    if let Some(layout) = tally.check(1, &call, get_kv_cache_layout(Some(ctx), &args)) {
        println!("      layout = {layout}");
    }
}

fn transcript_kv_cache_layout(tally: &mut Tally) {
    section(
        1,
        "KV-cache layout (get_kv_cache_layout, is_valid_kv_cache_layout)",
    );
    let call = "cattn_is_valid_kv_cache_layout(\"HND\")";
    if let Some(valid) = tally.check(1, call, is_valid_kv_cache_layout("HND")) {
        println!("      valid = {}", i32::from(valid));
    }
    let call = "cattn_is_valid_kv_cache_layout(\"hnd\")";
    if let Some(valid) = tally.check(1, call, is_valid_kv_cache_layout("hnd")) {
        println!(
            "      valid = {} (case-sensitive, as vLLM)",
            i32::from(valid)
        );
    }
    let Some(ctx) = tally.check(1, "cattn_context_create", Context::new()) else {
        return;
    };
    resolve_layout(tally, &ctx, None, None, "no setting -> default");
    resolve_layout(
        tally,
        &ctx,
        None,
        Some(KvCacheLayout::Hnd),
        "connector prefers HND",
    );
    resolve_layout(
        tally,
        &ctx,
        Some("NHD"),
        Some(KvCacheLayout::Hnd),
        "user says NHD, connector HND",
    );
    tally.check(
        1,
        "cattn_context_set_kv_cache_layout_override(HND)",
        ctx.set_kv_cache_layout_override(Some(KvCacheLayout::Hnd)),
    );
    resolve_layout(
        tally,
        &ctx,
        Some("NHD"),
        None,
        "override HND beats user NHD",
    );
    tally.check(
        1,
        "cattn_context_set_kv_cache_layout_override(UNSET)",
        ctx.set_kv_cache_layout_override(None),
    );
    let args = KvCacheLayoutArgs {
        user_setting: UserSetting::Value("nhd"),
        ..Default::default()
    };
    tally.check_expected_error(
        1,
        "cattn_get_kv_cache_layout(user says \"nhd\"; vLLM asserts)",
        get_kv_cache_layout(Some(&ctx), &args),
        Status::InvalidArgument,
    );
}

// ---------------------------------------------------------------------------------------------
// 2. DCP local sequence lengths
// ---------------------------------------------------------------------------------------------

fn transcript_dcp_local_seq_lens(tally: &mut Tally, batch: &Batch) {
    section(2, "DCP local sequence lengths (get_dcp_local_seq_lens)");
    println!("  inputs: seq_lens (above), dcp_size 2, dcp_kv_cache_interleave_size 4");
    let mut args = DcpLocalSeqLensArgs {
        seq_lens: TensorRef::from_slice(&batch.seq_lens),
        dcp_size: 2,
        dcp_rank: DcpRank::All,
        dcp_kv_cache_interleave_size: 4,
        stream: Stream::DEFAULT,
    };
    let mut all = [0i32; B * 2];
    let result = TensorMut::new(&mut all, &[B as i64, 2])
        .and_then(|mut out| get_dcp_local_seq_lens(&args, &mut out));
    if tally
        .check(2, "cattn_get_dcp_local_seq_lens(every rank)", result)
        .is_some()
    {
        print_tensor("local seq_lens [b, rank]", &all, &[B as i64, 2]);
    }
    args.dcp_rank = DcpRank::Rank(1);
    let mut one = [0i32; B];
    let result = get_dcp_local_seq_lens(&args, &mut TensorMut::from_slice(&mut one));
    if tally
        .check(2, "cattn_get_dcp_local_seq_lens(rank 1)", result)
        .is_some()
    {
        print_tensor("rank 1's seq_lens", &one, &[B as i64]);
    }
}

// ---------------------------------------------------------------------------------------------
// 3. PCP query restore index
// ---------------------------------------------------------------------------------------------

fn transcript_pcp_query_restore_idx(tally: &mut Tally, batch: &Batch) {
    section(3, "PCP query restore index (get_pcp_query_restore_idx)");
    println!(
        "  inputs: cu_num_tokens = query_start_loc (above), sized from its host mirror \
         query_start_loc_cpu;\n          request 3 is a decode and takes no part"
    );
    let qsl = TensorRef::from_slice(&batch.qsl);
    let Some(size) = tally.check(
        3,
        "cattn_get_pcp_query_restore_idx_size",
        get_pcp_query_restore_idx_size(&qsl),
    ) else {
        return;
    };
    println!("      size = {size}");
    // Four spare entries show the -1 fill past `size`.
    let mut out = vec![0i32; size as usize + 4];
    let result =
        get_pcp_query_restore_idx(&qsl, &mut TensorMut::from_slice(&mut out), Stream::DEFAULT);
    if tally
        .check(3, "cattn_get_pcp_query_restore_idx", result)
        .is_some()
    {
        print_tensor("restore_idx", &out, &[out.len() as i64]);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Fused PCP Q/K/V select
// ---------------------------------------------------------------------------------------------

fn transcript_fused_pcp_qkv_select(tally: &mut Tally) -> Result<()> {
    // PCP world size 2, rank 0. Requests 0-2 are split into 2W = 4 chunks; rank 0 holds chunks
    // 0 and 3, so its local query lengths are 8, 2 and 4. One head of dimension 1 keeps the
    // print short: q row i holds 100 + i, K row j holds 200 + j and V row j holds 300 + j.
    let local_qsl = [0i32, 8, 10, 14];
    let (nq, world, rank) = (14i64, 2i64, 0i64);
    section(4, "Fused PCP Q/K/V select (fused_pcp_qkv_select)");
    let q: Vec<f32> = (0..nq).map(|i| (100 + i) as f32).collect();
    let k: Vec<f32> = (0..world * nq).map(|i| (200 + i) as f32).collect();
    let v: Vec<f32> = (0..world * nq).map(|i| (300 + i) as f32).collect();
    let half = nq / 2;
    let (head_rows, tail_rows) = (half * (rank + 1), half * (2 * world - rank));
    let mut qh = vec![0f32; half as usize];
    let mut qt = vec![0f32; half as usize];
    let mut kh = vec![0f32; head_rows as usize];
    let mut vh = vec![0f32; head_rows as usize];
    let mut kt = vec![0f32; tail_rows as usize];
    let mut vt = vec![0f32; tail_rows as usize];
    println!("  inputs: pcp_world_size 2, pcp_rank 0");
    print_tensor("query_start_loc (local)", &local_qsl, &[4]);
    print_tensor("q [Nq, H, Dq]", &q, &[nq, 1, 1]);
    print_tensor("k [W*Nq, H, Dk]", &k, &[world * nq, 1, 1]);
    print_tensor("v [W*Nq, H, Dv]", &v, &[world * nq, 1, 1]);
    let args = FusedPcpQkvSelectArgs {
        q: TensorRef::new(&q, &[nq, 1, 1])?,
        k: TensorRef::new(&k, &[world * nq, 1, 1])?,
        v: TensorRef::new(&v, &[world * nq, 1, 1])?,
        query_start_loc: TensorRef::from_slice(&local_qsl),
        pcp_world_size: world,
        pcp_rank: rank,
        stream: Stream::DEFAULT,
    };
    let result = fused_pcp_qkv_select(
        &args,
        &mut FusedPcpQkvSelectOutputs {
            q_head: TensorMut::new(&mut qh, &[half, 1, 1])?,
            k_head: TensorMut::new(&mut kh, &[head_rows, 1, 1])?,
            v_head: TensorMut::new(&mut vh, &[head_rows, 1, 1])?,
            q_tail: TensorMut::new(&mut qt, &[half, 1, 1])?,
            k_tail: TensorMut::new(&mut kt, &[tail_rows, 1, 1])?,
            v_tail: TensorMut::new(&mut vt, &[tail_rows, 1, 1])?,
        },
    );
    if tally
        .check(4, "cattn_fused_pcp_qkv_select", result)
        .is_some()
    {
        print_tensor("q_head", &qh, &[half, 1, 1]);
        print_tensor("k_head", &kh, &[head_rows, 1, 1]);
        print_tensor("v_head", &vh, &[head_rows, 1, 1]);
        print_tensor("q_tail", &qt, &[half, 1, 1]);
        print_tensor("k_tail", &kt, &[tail_rows, 1, 1]);
        print_tensor("v_tail", &vt, &[tail_rows, 1, 1]);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 5. PCP all-gather + restore
// ---------------------------------------------------------------------------------------------

/// The host run of the C transcript's section 5: the batch of a one-rank group, and the status a host
/// caller gets. The safe API cannot express that call (it needs a live `Comm`, which needs NCCL
/// and a GPU), so the call goes through the raw FFI, with host tensors and a NULL communicator.
fn transcript_pcp_kv_allgather_and_restore(tally: &mut Tally) -> Result<()> {
    // 6 tokens plus 2 rows of CUDA-graph padding; key row t, element d holds 500 + 10 t + d and
    // value row t 600 + 10 t + d, so every output row names the input row it came from.
    const ROWS: i64 = 8;
    const TOKENS: i64 = 6;
    const OUT_ROWS: i64 = 7;
    const HEAD_DIM: i64 = 2;
    section(5, "PCP all-gather + restore (pcp_kv_allgather_and_restore)");
    let element = |base: i64, i: i64| (base + 10 * (i / HEAD_DIM) + i % HEAD_DIM) as f32;
    let key: Vec<f32> = (0..ROWS * HEAD_DIM).map(|i| element(500, i)).collect();
    let value: Vec<f32> = (0..ROWS * HEAD_DIM).map(|i| element(600, i)).collect();
    let restore_idx: [i32; OUT_ROWS as usize] = [0, 1, 2, 3, 4, 5, 5];
    let mut key_out = vec![0f32; (OUT_ROWS * HEAD_DIM) as usize];
    let mut value_out = vec![0f32; (OUT_ROWS * HEAD_DIM) as usize];
    println!(
        "  inputs: a PCP group of 1 rank (W = 1), num_actual_tokens {TOKENS} (rows 6-7 are \
         CUDA-graph padding);\n          key row t holds 500 + 10t + d, value row t 600 + 10t + \
         d; restore_idx takes row 5\n          twice (rows may repeat)"
    );
    print_tensor("key [N, H, D]", &key, &[ROWS, 1, HEAD_DIM]);
    print_tensor("value [N, H, D]", &value, &[ROWS, 1, HEAD_DIM]);
    print_tensor("restore_idx", &restore_idx, &[OUT_ROWS]);
    println!(
        "  This utility needs GPUs and NCCL (NCCL gathers device memory): not counted on the host."
    );
    let key_view = TensorRef::new(&key, &[ROWS, 1, HEAD_DIM])?;
    let value_view = TensorRef::new(&value, &[ROWS, 1, HEAD_DIM])?;
    let idx_view = TensorRef::from_slice(&restore_idx);
    let mut key_out_view = TensorMut::new(&mut key_out, &[OUT_ROWS, 1, HEAD_DIM])?;
    let mut value_out_view = TensorMut::new(&mut value_out, &[OUT_ROWS, 1, HEAD_DIM])?;
    let args = sys::cattn_pcp_kv_allgather_and_restore_args_t {
        struct_size: size_of::<sys::cattn_pcp_kv_allgather_and_restore_args_t>(),
        comm: std::ptr::null_mut(),
        key: key_view.as_raw(),
        value: value_view.as_raw(),
        num_actual_tokens: TOKENS,
        restore_idx: idx_view.as_raw(),
        key_out: key_out_view.as_raw(),
        value_out: value_out_view.as_raw(),
        workspace: std::ptr::null_mut(),
        workspace_size: 0,
        stream: Stream::DEFAULT.as_raw(),
    };
    let api = Api::linked()?;
    // SAFETY: a valid argument struct whose views live through the call; the NULL communicator
    // and workspace are what a host caller has.
    let st = unsafe { sys::cattn_pcp_kv_allgather_and_restore(&args) };
    print_raw_status(
        api,
        "cattn_pcp_kv_allgather_and_restore(host tensors, comm NULL)",
        st,
    );
    if let Some(status) = Status::from_code(st as i32) {
        tally.record_failure(5, status);
    }
    tally.not_counted[5] = Some("not counted on the host: needs GPUs and NCCL");
    Ok(())
}

fn print_raw_status(api: Api<'_>, call: &str, st: sys::cattn_status_t) {
    let name = api.status_string(st as i32).unwrap_or_default();
    let message = if st == sys::CATTN_OK {
        String::new()
    } else {
        api.last_error_message()
    };
    println!("  {call} -> {name}\n      message: \"{message}\"");
}

// ---------------------------------------------------------------------------------------------
// 6. Causal-conv1d metadata
// ---------------------------------------------------------------------------------------------

fn transcript_causal_conv1d_metadata(tally: &mut Tally, batch: &Batch) {
    section(6, "Causal-conv1d metadata (compute_causal_conv1d_metadata)");
    println!("  inputs: query_start_loc_cpu (above), block_m 8");
    let qsl = TensorRef::from_slice(&batch.qsl);
    let Some(size) = tally.check(
        6,
        "cattn_compute_causal_conv1d_metadata_size",
        compute_causal_conv1d_metadata_size(&qsl, 8),
    ) else {
        return;
    };
    println!("      tot = {}, capacity = {}", size.tot, size.capacity);
    let (tot, capacity) = (size.tot as usize, size.capacity as usize);
    let mut nums = vec![0i32; B];
    let mut mlist = vec![0i32; tot];
    let mut offsets = vec![0i32; tot];
    let mut batch_ptr = vec![0i32; capacity];
    let mut chunk_ptr = vec![0i32; capacity];
    let result = compute_causal_conv1d_metadata(
        &qsl,
        8,
        &mut CausalConv1dOutputs {
            nums: Some(TensorMut::from_slice(&mut nums)),
            mlist: Some(TensorMut::from_slice(&mut mlist)),
            offsetlist: Some(TensorMut::from_slice(&mut offsets)),
            batch_ptr: Some(TensorMut::from_slice(&mut batch_ptr)),
            token_chunk_offset_ptr: Some(TensorMut::from_slice(&mut chunk_ptr)),
        },
        Stream::DEFAULT,
    );
    if let Some(written) = tally.check(6, "cattn_compute_causal_conv1d_metadata", result) {
        println!("      tot = {written}");
        print_tensor("nums", &nums, &[B as i64]);
        print_tensor("mlist", &mlist, &[tot as i64]);
        print_tensor("offsetlist", &offsets, &[tot as i64]);
        print_tensor_head("batch_ptr", &batch_ptr, &[capacity as i64], tot + 3);
        print_tensor_head(
            "token_chunk_offset_ptr",
            &chunk_ptr,
            &[capacity as i64],
            tot + 3,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Extend queries by n
// ---------------------------------------------------------------------------------------------

fn transcript_extend_all_queries_by_n(tally: &mut Tally, batch: &Batch) {
    section(
        7,
        "Extend queries (extend_all_queries_by_1, generalised to N)",
    );
    // The slot mapping of the extended batch (each request's new token included) is the
    // caller's, as in vLLM.
    let qlens: Vec<i64> = QUERY_LENS.iter().map(|q| q + 1).collect();
    let slens: Vec<i64> = SEQ_LENS.iter().map(|s| s + 1).collect();
    let new_slots = slot_mapping(&qlens, &slens);
    let (mut qsl, mut qsl_cpu) = ([0i32; B + 1], [0i32; B + 1]);
    let (mut sl, mut sl_cpu) = ([0i32; B], [0i32; B]);
    println!("  inputs: the batch, n = 1");
    print_tensor("new_slot_mapping", &new_slots, &[new_slots.len() as i64]);
    let md = batch.metadata();
    let result = extend_all_queries_by_n(
        &md,
        1,
        Some(&TensorRef::from_slice(&new_slots)),
        &mut ExtendOutputs {
            query_start_loc: TensorMut::from_slice(&mut qsl),
            query_start_loc_cpu: Some(TensorMut::from_slice(&mut qsl_cpu)),
            seq_lens: TensorMut::from_slice(&mut sl),
            seq_lens_cpu: Some(TensorMut::from_slice(&mut sl_cpu)),
        },
        Stream::DEFAULT,
    );
    if let Some(scalars) = tally.check(7, "cattn_extend_all_queries_by_n", result) {
        print_tensor("query_start_loc", &qsl, &[B as i64 + 1]);
        print_tensor("query_start_loc_cpu", &qsl_cpu, &[B as i64 + 1]);
        print_tensor("seq_lens", &sl, &[B as i64]);
        print_tensor("seq_lens_cpu", &sl_cpu, &[B as i64]);
        print_scalars(&scalars);
        // extend_all_queries_by_n checks this before returning Ok.
        println!("    slot_mapping is new_slot_mapping: yes");
    }
}

// ---------------------------------------------------------------------------------------------
// 8. KV-sharing fast-prefill metadata
// ---------------------------------------------------------------------------------------------

fn transcript_fast_prefill(tally: &mut Tally, batch: &Batch) {
    section(
        8,
        "KV-sharing fast-prefill metadata (make_kv_sharing_fast_prefill_common_attn_metadata)",
    );
    println!(
        "  inputs: the batch's query_start_loc and its first {} logits_indices_padded entries",
        batch.num_logits_indices
    );
    let (mut qsl, mut qsl_cpu, mut max_total) = ([0i32; B + 1], [0i32; B + 1], [0i32; 2]);
    let md = batch.metadata();
    let result = make_kv_sharing_fast_prefill_common_attn_metadata(
        &md,
        &mut FastPrefillOutputs {
            query_start_loc: TensorMut::from_slice(&mut qsl),
            query_start_loc_cpu: Some(TensorMut::from_slice(&mut qsl_cpu)),
            decode_max_and_total: Some(TensorMut::from_slice(&mut max_total)),
        },
        Stream::DEFAULT,
    );
    if let Some(made) = tally.check(
        8,
        "cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
        result,
    ) {
        print_tensor("decode query_start_loc", &qsl, &[B as i64 + 1]);
        print_tensor("decode query_start_loc_cpu", &qsl_cpu, &[B as i64 + 1]);
        print_tensor("decode_max_and_total", &max_total, &[2]);
        print_scalars(&made.scalars);
        println!("    passthrough {}", i32::from(made.passthrough));
    }
}

// ---------------------------------------------------------------------------------------------
// 9. Local-attention virtual batches
// ---------------------------------------------------------------------------------------------

fn transcript_local_attention(tally: &mut Tally, batch: &Batch) -> Result<()> {
    section(
        9,
        "Local-attention virtual batches (make_local_attention_virtual_batches)",
    );
    println!("  inputs: the batch, attn_chunk_size 8, block_size 4");
    let md = batch.metadata();
    let Some(plan) = tally.check(
        9,
        "cattn_make_local_attention_virtual_batches",
        make_local_attention_virtual_batches(&md, 8, KV_BLOCK),
    ) else {
        return Ok(());
    };
    let Some(shape) = tally.check(9, "cattn_local_attention_plan_get_shape", plan.shape()) else {
        return Ok(());
    };
    let (vb, pages) = (shape.virtual_batches, shape.pages);
    println!("      virtual batches = {vb}, pages per virtual batch = {pages}");
    let v = vb as usize;
    let (mut qsl_cpu, mut qsl) = (vec![0i32; v + 1], vec![0i32; v + 1]);
    let (mut sl_cpu, mut sl) = (vec![0i32; v], vec![0i32; v]);
    let mut computed = vec![0i32; v];
    let mut table = vec![0i32; v * pages as usize];
    let result = plan.fill(
        &md,
        &mut LocalAttentionOutputs {
            query_start_loc_cpu: TensorMut::from_slice(&mut qsl_cpu),
            seq_lens_cpu: TensorMut::from_slice(&mut sl_cpu),
            num_computed_tokens_cpu: TensorMut::from_slice(&mut computed),
            block_table_tensor: TensorMut::new(&mut table, &[vb, pages])?,
            query_start_loc: Some(TensorMut::from_slice(&mut qsl)),
            seq_lens: Some(TensorMut::from_slice(&mut sl)),
        },
        Stream::DEFAULT,
    );
    if let Some(scalars) = tally.check(9, "cattn_local_attention_plan_fill", result) {
        print_tensor("query_start_loc_cpu", &qsl_cpu, &[vb + 1]);
        print_tensor("query_start_loc", &qsl, &[vb + 1]);
        print_tensor("seq_lens_cpu", &sl_cpu, &[vb]);
        print_tensor("seq_lens", &sl, &[vb]);
        print_tensor("num_computed_tokens_cpu", &computed, &[vb]);
        print_tensor("block_table_tensor", &table, &[vb, pages]);
        print_scalars(&scalars);
    }
    // The plan is vLLM's make_block_table closure: the same gather applied to a new table.
    let shifted: Vec<i32> = batch.block_table.iter().map(|b| b + 1000).collect();
    let mut regathered = vec![0i32; v * pages as usize];
    let result = plan.make_block_table(
        &TensorRef::new(&shifted, &[B as i64, BLOCKS_PER_REQ as i64])?,
        &mut TensorMut::new(&mut regathered, &[vb, pages])?,
        Stream::DEFAULT,
    );
    if tally
        .check(
            9,
            "cattn_local_attention_plan_make_block_table(block table + 1000)",
            result,
        )
        .is_some()
    {
        print_tensor("re-gathered block table", &regathered, &[vb, pages]);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 10. Mamba block table
// ---------------------------------------------------------------------------------------------

fn transcript_mamba_block_table(tally: &mut Tally, batch: &Batch) {
    section(10, "Mamba block table (mamba_get_block_table_tensor)");
    println!(
        "  inputs: block_table_tensor and seq_lens (above), mode align, block_size 4, \
         num_speculative_blocks 1"
    );
    let args = MambaBlockTableArgs {
        block_table: batch.block_table_view(),
        seq_lens: Some(TensorRef::from_slice(&batch.seq_lens)),
        block_size: KV_BLOCK,
        num_speculative_blocks: 1,
        mode: MambaCacheMode::Align,
        stream: Stream::DEFAULT,
    };
    let mut out = [0i32; B * 2];
    let result = TensorMut::new(&mut out, &[B as i64, 2])
        .and_then(|mut t| mamba_get_block_table_tensor(&args, &mut t));
    if tally
        .check(10, "cattn_mamba_get_block_table_tensor(align)", result)
        .is_some()
    {
        print_tensor("block table for Mamba", &out, &[B as i64, 2]);
    }
}

// ---------------------------------------------------------------------------------------------
// 11. Per-layer parameters
// ---------------------------------------------------------------------------------------------

fn print_params(label: &str, p: &PerLayerParameters) {
    let cap = p.logits_soft_cap.map_or("None".to_owned(), g);
    println!(
        "    {label:<8} window_left {}, logits_soft_cap {cap}, sm_scale {}, has_sinks {}",
        p.window_left,
        g(p.sm_scale),
        i32::from(p.has_sinks)
    );
}

fn print_global(g_: &GlobalHyperparameters) {
    println!(
        "    global: window_left {}, sm_scale {}, has_same_window_lefts {}, has_same_all_params {}",
        g_.params.window_left,
        g(g_.params.sm_scale),
        i32::from(g_.has_same_window_lefts),
        i32::from(g_.has_same_all_params)
    );
}

fn transcript_per_layer_parameters(tally: &mut Tally) {
    section(
        11,
        "Per-layer parameters (get_per_layer_parameters, infer_global_hyperparameters)",
    );
    // Layers 0 and 2: sliding window (4095, 0); layer 1: global attention with a soft cap.
    let windowed = AttentionLayerDesc {
        sliding_window: Some((4095, 0)),
        scale: 0.125,
        ..Default::default()
    };
    let capped = AttentionLayerDesc {
        logits_soft_cap: Some(30.0),
        scale: 0.125,
        ..Default::default()
    };
    println!(
        "  inputs: layer 0 and 2 - sliding_window (4095, 0), no soft cap, scale 0.125;\n          \
         layer 1 - no window, logits_soft_cap 30, scale 0.125"
    );
    let Some(mut params) = tally.check(
        11,
        "cattn_get_per_layer_parameters",
        get_per_layer_parameters(&[windowed, capped, windowed]),
    ) else {
        return;
    };
    print_params("layer 0", &params[0]);
    print_params("layer 1", &params[1]);
    print_params("layer 2", &params[2]);
    if let Some(global) = tally.check(
        11,
        "cattn_infer_global_hyperparameters(layers 0-2)",
        infer_global_hyperparameters(&params),
    ) {
        print_global(&global);
    }
    params[1] = params[2];
    if let Some(global) = tally.check(
        11,
        "cattn_infer_global_hyperparameters(layers 0, 2, 2)",
        infer_global_hyperparameters(&params),
    ) {
        print_global(&global);
    }
}

// ---------------------------------------------------------------------------------------------
// 12. KV-cache layout resolver
// ---------------------------------------------------------------------------------------------

fn names_of(layouts: &[CacheLayout]) -> String {
    layouts
        .iter()
        .map(|l| l.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn ints<T: std::fmt::Display>(values: &[T]) -> String {
    let parts: Vec<String> = values.iter().map(T::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// Resolves `names` (the supported list of both workers) in `ctx`, or in a fresh context when
/// it is `None`; the layout on success.
fn resolve_kv_layout(
    tally: &mut Tally,
    ctx: Option<&Context<'_>>,
    names: &[&str],
    connector: Option<&str>,
    what: &str,
) -> Option<CacheLayout> {
    let own;
    let ctx = match ctx {
        Some(ctx) => ctx,
        None => {
            own = tally.check(12, "cattn_context_create", Context::new())?;
            &own
        }
    };
    // No user setting, and never the environment.
    let workers = [names, names];
    let args = ResolveArgs {
        workers: &workers,
        connector,
        ..Default::default()
    };
    let call = format!("cattn_resolve_kv_cache_layout({what})");
    let resolved = tally.check(12, &call, resolve_kv_cache_layout(ctx, &args))?;
    println!(
        "      layout = {}, connector_fell_back {}, from_preset {}",
        resolved.layout,
        i32::from(resolved.connector_fell_back),
        i32::from(resolved.from_preset)
    );
    Some(resolved.layout)
}

fn transcript_kv_cache_layout_resolver(tally: &mut Tally) {
    use CacheLayout::*;
    section(
        12,
        "KV-cache layout resolver (resolve_kv_cache_layout, get_supported_kv_cache_layouts)",
    );
    println!(
        "  inputs: backend A declares BLHNC, LBHNC, LBNHC; backend B LBNHC, BLHNC, LBHNC, BLNHC;\n          \
         backend C declares nothing; two workers with the same backends"
    );
    // Backend A prefers BLHNC, backend B LBNHC; backend C declares nothing (any layout).
    let a = [Blhnc, Lbhnc, Lbnhc];
    let b = [Lbnhc, Blhnc, Lbhnc, Blnhc];
    let Some(supported) = tally.check(
        12,
        "cattn_get_supported_kv_cache_layouts(A, B, C)",
        get_supported_kv_cache_layouts(&[Some(&a[..]), Some(&b[..]), None]),
    ) else {
        return;
    };
    println!("      supported = {}", names_of(&supported));
    println!("      (the layouts A and B share, by first-choice votes, ties in vLLM's order)");
    let names: Vec<&str> = supported.iter().map(|l| l.name()).collect();
    let Some(ctx) = tally.check(12, "cattn_context_create", Context::new()) else {
        return;
    };
    let ctx = Some(&ctx);
    resolve_kv_layout(tally, ctx, &names, None, "no preset, setting or connector");
    resolve_kv_layout(
        tally,
        ctx,
        &names,
        Some("BLHNC"),
        "same context, connector BLHNC",
    );
    let chosen = resolve_kv_layout(
        tally,
        None,
        &names,
        Some("BLHNC"),
        "new context, connector BLHNC",
    );
    resolve_kv_layout(
        tally,
        None,
        &names,
        Some("LHBNC"),
        "new context, connector LHBNC",
    );
    if let Some(chosen) = chosen {
        if let Some(p) = tally.check(
            12,
            "cattn_kv_cache_layout_get_properties(BLHNC)",
            chosen.properties(),
        ) {
            println!(
                "      stride_order {}, layer_view_order {}",
                ints(&p.stride_order),
                ints(&p.layer_view_order)
            );
            println!(
                "      is_layer_compact {}, is_block_contiguous {}, is_block_compact {}, \
                 is_block_outermost {}",
                i32::from(p.is_layer_compact),
                i32::from(p.is_block_contiguous),
                i32::from(p.is_block_compact),
                i32::from(p.is_block_outermost)
            );
        }
        if let Some(fi) = tally.check(
            12,
            "cattn_get_flashinfer_layout_string(BLHNC)",
            chosen.flashinfer_layout_string(),
        ) {
            println!("      flashinfer layout = {fi}");
        }
        // [L, B, H, N, C]: 2 layers, 3 blocks, 4 heads, KV_BLOCK slots, 8 elements.
        if let Some(s) = tally.check(
            12,
            "cattn_kv_cache_layout_strides(BLHNC, [L, B, H, N, C] = [2, 3, 4, 4, 8])",
            chosen.strides([2, 3, 4, KV_BLOCK, 8]),
        ) {
            println!(
                "      strides {}, physical_shape {}, numel {}",
                ints(&s.strides),
                ints(&s.physical_shape),
                s.numel
            );
        }
    }
    tally.check_expected_error(
        12,
        "cattn_get_flashinfer_layout_string(LHBNC; vLLM asserts)",
        Lhbnc.flashinfer_layout_string(),
        Status::NotSupported,
    );
}

// ---------------------------------------------------------------------------------------------
// 13. Batch split and reorder
// ---------------------------------------------------------------------------------------------

/// Splits the host batch (`qsl`, `seq_lens`) two ways at `threshold`.
fn split_batch(
    tally: &mut Tally,
    qsl: &[i32],
    seq_lens: &[i32],
    max_query_len: i64,
    threshold: i64,
    what: &str,
) {
    let batch = SplitBatch {
        query_start_loc_cpu: TensorRef::from_slice(qsl),
        num_reqs: B as i64,
        num_actual_tokens: i64::from(qsl[B]),
        max_query_len,
    };
    let opts = SplitOptions {
        decode_threshold: threshold,
        ..SplitOptions::default()
    };
    let call = format!("cattn_split_decodes_and_prefills({what}, threshold {threshold})");
    if let Some(s) = tally.check(13, &call, split_decodes_and_prefills(&batch, &opts)) {
        println!(
            "      num_decodes {}, num_prefills {}, num_decode_tokens {}, num_prefill_tokens {}",
            s.num_decodes, s.num_prefills, s.num_decode_tokens, s.num_prefill_tokens
        );
    }
    let upper_bound = TensorRef::from_slice(seq_lens);
    let call = format!("cattn_split_decodes_prefills_and_extends({what}, threshold {threshold})");
    if let Some(s) = tally.check(
        13,
        &call,
        split_decodes_prefills_and_extends(&batch, Some(&upper_bound), threshold),
    ) {
        println!(
            "      num_decodes {}, num_extends {}, num_prefills {}, num_decode_tokens {}, \
             num_extend_tokens {}, num_prefill_tokens {}",
            s.num_decodes,
            s.num_extends,
            s.num_prefills,
            s.num_decode_tokens,
            s.num_extend_tokens,
            s.num_prefill_tokens
        );
    }
}

fn transcript_split_and_reorder(tally: &mut Tally, batch: &Batch) {
    // The prompts of requests 1 and 2 go on past what is computed so far (chunked prefills);
    // request 3 computed its 20-token prompt and 12 generated tokens.
    const PROMPT_LENS: [i64; B] = [16, 24, 32, 20];
    section(
        13,
        "Batch split (split_decodes_and_prefills, split_decodes_prefills_and_extends, \
         split_prefill_chunks, reorder_batch_to_split_decodes_and_prefills)",
    );
    println!(
        "  inputs: query_start_loc_cpu and seq_lens_cpu (above); the batch starts with a \
         prefill, not in vLLM's order"
    );
    split_batch(
        tally,
        &batch.qsl,
        &batch.seq_lens,
        batch.max_query_len,
        1,
        "the batch",
    );

    let computed: Vec<i64> = (0..B).map(|b| SEQ_LENS[b] - QUERY_LENS[b]).collect();
    println!("  reorder inputs: num_prompt_tokens as below, decode_threshold 1");
    print_tensor("num_scheduled_tokens", &QUERY_LENS, &[B as i64]);
    print_tensor("num_computed_tokens", &computed, &[B as i64]);
    print_tensor("num_prompt_tokens", &PROMPT_LENS, &[B as i64]);
    let Some(plan) = tally.check(
        13,
        "cattn_reorder_batch_to_split_decodes_and_prefills",
        reorder_batch_to_split_decodes_and_prefills(&QUERY_LENS, &computed, &PROMPT_LENS, 1),
    ) else {
        return;
    };
    print_tensor("index_map", &plan.index_map, &[B as i64]);
    let swaps = if plan.swaps.is_empty() {
        " none".to_owned()
    } else {
        plan.swaps
            .iter()
            .map(|(a, b)| format!(" ({a}, {b})"))
            .collect::<Vec<_>>()
            .join(",")
    };
    println!("      changed {}, swaps{swaps}", i32::from(plan.changed));
    let [d, se, le, p] = plan.counts;
    println!("      regions: decode {d}, short extend {se}, long extend {le}, prefill {p}");

    // What the engine then does: the batch in the new order (request index_map[i] at i).
    let order: Vec<usize> = plan.index_map.iter().map(|&i| i as usize).collect();
    let mut qsl = vec![0i32];
    for &from in &order {
        qsl.push(qsl.last().unwrap() + QUERY_LENS[from] as i32);
    }
    let seq_lens: Vec<i32> = order.iter().map(|&from| SEQ_LENS[from] as i32).collect();
    let max_q = order
        .iter()
        .map(|&from| QUERY_LENS[from])
        .max()
        .unwrap_or(0);
    println!("  the batch reordered by index_map:");
    print_tensor("query_start_loc_cpu", &qsl, &[B as i64 + 1]);
    print_tensor("seq_lens_cpu", &seq_lens, &[B as i64]);
    split_batch(tally, &qsl, &seq_lens, max_q, 1, "reordered");
    split_batch(tally, &qsl, &seq_lens, max_q, 4, "reordered");

    // The requests after the decodes, chunked for a 32-token workspace (MLA's chunked context).
    let num_decodes = plan.counts[0];
    let prefill_lens: Vec<i64> = seq_lens[num_decodes as usize..]
        .iter()
        .map(|&s| i64::from(s))
        .collect();
    println!(
        "  chunk inputs: the seq_lens after the decodes, workspace_size 32, request_offset \
         {num_decodes}"
    );
    print_tensor("seq_lens_cpu", &prefill_lens, &[prefill_lens.len() as i64]);
    if let Some(chunks) = tally.check(
        13,
        "cattn_split_prefill_chunks",
        split_prefill_chunks(&prefill_lens, 32, num_decodes),
    ) {
        let flat: Vec<i64> = chunks.iter().flat_map(|&(s, e)| [s, e]).collect();
        print_tensor("chunks [start, end)", &flat, &[chunks.len() as i64, 2]);
    }
}

// ---------------------------------------------------------------------------------------------
// 14. Step inputs (1.2)
// ---------------------------------------------------------------------------------------------

// The step of the 1.2 sections: the batch above as model runner v2 (MRV2) keeps it, plus a
// fifth request, a decode with 2 drafts, in a CUDA-graph bucket of 6 batch rows whose last is
// padding, over 6 persistent request rows (persistent row 4 holds a request that is not
// scheduled this step):
//
//   batch row             0     1     2     3     4     5 (padding: never read)
//   persistent row        2     5     0     3     1     -
//   num_computed_tokens   0     6     9     32    20    -
//   scheduled tokens      16    4     8     1     3     -
//   drafts                0     0     0     0     2     -
//
// Two KV-cache groups: group 0 has blocks of 4 tokens and batch row b's blocks are 10b + j (the
// batch above's table), group 1 blocks of 8 and blocks 100 + 10b + j. Rows 0-2 are prompt
// chunks (seq_len <= prefill_len), whose input ids the engine wrote (request b's token at
// position p is 100 (b + 1) + p); rows 3 and 4 are decodes, whose ids the combine call writes.
const STEP_ROWS: usize = 6;
const STEP_LIVE: usize = 5;
const STEP_PERSISTENT: usize = 6;
const STEP_TOKEN_CAP: usize = 36;
const STEP_LOGIT_CAP: usize = 8;
const STEP_W0: usize = 10;
const STEP_W1: usize = 5;
const STEP_MAX_DRAFTS: usize = 2;
const STEP_SCHEDULED: [i32; STEP_ROWS] = [16, 4, 8, 1, 3, 7];
const STEP_IDX_MAPPING: [i32; STEP_ROWS] = [2, 5, 0, 3, 1, 4];
const STEP_DRAFTS: [i32; STEP_ROWS] = [0, 0, 0, 0, 2, 0];
// Per persistent row: the batch row it is this step (5: none), its computed tokens, the group-0
// blocks in use (cdiv(seq_len, 4)) and its prompt length.
const STEP_OWNER: [i32; STEP_PERSISTENT] = [2, 4, 0, 3, 5, 1];
const STEP_COMPUTED: [i32; STEP_PERSISTENT] = [9, 20, 0, 32, 12, 6];
const STEP_NUM_BLOCKS0: [i32; STEP_PERSISTENT] = [5, 6, 4, 9, 3, 3];
const STEP_PREFILL_LEN: [i32; STEP_PERSISTENT] = [32, 18, 16, 20, 30, 24];
// Persistent row 1's drafts; persistent row r's last sampled token is 900 + r.
const STEP_DRAFT_TOKENS: [i32; STEP_MAX_DRAFTS] = [960, 961];

/// The live rows' query_start_loc, positions and input ids: the prompt tokens of the prompt
/// chunks and, with `combined`, each decode row's last sampled token and drafts (what
/// combine_sampled_and_draft_tokens writes), else 0 there.
fn step_tokens(combined: bool) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let mut qsl = vec![0i32];
    let (mut positions, mut ids) = (Vec::new(), Vec::new());
    for b in 0..STEP_LIVE {
        let r = STEP_IDX_MAPPING[b] as usize;
        let (nct, q, d) = (STEP_COMPUTED[r], STEP_SCHEDULED[b], STEP_DRAFTS[b]);
        let decode = nct + q > STEP_PREFILL_LEN[r];
        for j in 0..q {
            positions.push(nct + j);
            ids.push(if !decode {
                100 * (b as i32 + 1) + nct + j
            } else if !combined {
                0
            } else if j < q - d {
                900 + r as i32
            } else {
                STEP_DRAFT_TOKENS[(j - (q - d)) as usize]
            });
        }
        qsl.push(positions.len() as i32);
    }
    (qsl, positions, ids)
}

fn transcript_step_inputs(tally: &mut Tally) -> Result<()> {
    section(
        14,
        "Step inputs, 1.2 (step_inputs_size, prepare_pos_seq_lens, gather_block_tables, \
         compute_slot_mappings, combine_sampled_and_draft_tokens, step_batch_check)",
    );
    let (rows, persistent) = (STEP_ROWS as i64, STEP_PERSISTENT as i64);
    let (w0, w1, s) = (STEP_W0 as i64, STEP_W1 as i64, STEP_MAX_DRAFTS as i64);
    let (mut table0, mut table1, mut draft_tokens) = (Vec::new(), Vec::new(), Vec::new());
    for (r, &owner) in STEP_OWNER.iter().enumerate() {
        table0.extend((0..w0 as i32).map(|j| 10 * owner + j));
        table1.extend((0..w1 as i32).map(|j| 100 + 10 * owner + j));
        let drafts = if r == STEP_IDX_MAPPING[4] as usize {
            STEP_DRAFT_TOKENS
        } else {
            [0; STEP_MAX_DRAFTS]
        };
        draft_tokens.extend(drafts);
    }
    let last: Vec<i32> = (0..persistent as i32).map(|r| 900 + r).collect();
    let mut ids = vec![0i32; STEP_TOKEN_CAP];
    let (_, _, prompt_ids) = step_tokens(false);
    ids[..prompt_ids.len()].copy_from_slice(&prompt_ids);
    let num_reqs = [STEP_LIVE as i32];
    println!(
        "  inputs: a CUDA-graph bucket of 6 batch rows with num_reqs 5 live (row 5 is padding: \
         its entries\n          are never read), 6 persistent request rows (row 4 is not \
         scheduled this step)"
    );
    print_tensor("num_reqs", &num_reqs, &[1]);
    print_tensor("num_scheduled_tokens", &STEP_SCHEDULED, &[rows]);
    print_tensor("idx_mapping", &STEP_IDX_MAPPING, &[rows]);
    print_tensor("num_draft_tokens", &STEP_DRAFTS, &[rows]);
    print_tensor("num_computed_tokens", &STEP_COMPUTED, &[persistent]);
    print_tensor("prefill_len", &STEP_PREFILL_LEN, &[persistent]);
    print_tensor("last_sampled_tokens", &last, &[persistent]);
    print_tensor("draft_tokens", &draft_tokens, &[persistent, s]);
    print_tensor("block_table (group 0)", &table0, &[persistent, w0]);
    print_tensor("num_blocks (group 0)", &STEP_NUM_BLOCKS0, &[persistent]);
    print_tensor("block_table (group 1)", &table1, &[persistent, w1]);
    print_tensor("input_ids (prompt tokens)", &ids, &[STEP_TOKEN_CAP as i64]);

    let size = step_inputs_size(&StepInputsSizeArgs {
        num_scheduled_tokens: Some(TensorRef::from_slice(&STEP_SCHEDULED)),
        num_reqs: Some(TensorRef::from_slice(&num_reqs)),
        num_draft_tokens: Some(TensorRef::from_slice(&STEP_DRAFTS)),
        ..Default::default()
    });
    let Some(size) = tally.check(14, "cattn_step_inputs_size", size) else {
        return Ok(());
    };
    println!(
        "      num_tokens = {}, num_logits = {}; the outputs are sized for the bucket: \
         {STEP_TOKEN_CAP} tokens, {STEP_LOGIT_CAP} logits",
        size.num_tokens, size.num_logits
    );
    if size.num_tokens > STEP_TOKEN_CAP as i64 || size.num_logits > STEP_LOGIT_CAP as i64 {
        println!("      the bucket is too small for the step");
        tally.record_failure(14, Status::InsufficientSize);
        return Ok(());
    }

    let mut qsl = vec![0i32; STEP_ROWS + 1];
    let mut seq_lens = vec![0i32; STEP_ROWS];
    let mut positions = vec![0i32; STEP_TOKEN_CAP];
    let mut batch_nct = vec![0i32; STEP_ROWS];
    let result = prepare_pos_seq_lens(
        &PreparePosSeqLensArgs {
            num_scheduled_tokens: TensorRef::from_slice(&STEP_SCHEDULED),
            idx_mapping: TensorRef::from_slice(&STEP_IDX_MAPPING),
            num_computed_tokens: TensorRef::from_slice(&STEP_COMPUTED),
            num_reqs: Some(TensorRef::from_slice(&num_reqs)),
            stream: Stream::DEFAULT,
        },
        &mut PreparePosSeqLensOutputs {
            query_start_loc: TensorMut::from_slice(&mut qsl),
            seq_lens: TensorMut::from_slice(&mut seq_lens),
            positions: Some(TensorMut::from_slice(&mut positions)),
            batch_num_computed_tokens: Some(TensorMut::from_slice(&mut batch_nct)),
        },
    );
    if tally
        .check(14, "cattn_prepare_pos_seq_lens", result)
        .is_none()
    {
        return Ok(());
    }
    print_tensor("query_start_loc", &qsl, &[rows + 1]);
    print_tensor("seq_lens", &seq_lens, &[rows]);
    print_tensor("positions", &positions, &[STEP_TOKEN_CAP as i64]);
    print_tensor("batch_num_computed_tokens", &batch_nct, &[rows]);

    // The gathered tables start as -1: entries past a row's num_blocks are left as they are.
    let mut g0 = vec![-1i32; STEP_ROWS * STEP_W0];
    let mut g1 = vec![-1i32; STEP_ROWS * STEP_W1];
    println!(
        "  the batch tables start as -1 (entries past a row's num_blocks are left as they are)"
    );
    let result = gather_block_tables(
        &GatherBlockTablesArgs {
            idx_mapping: TensorRef::from_slice(&STEP_IDX_MAPPING),
            num_reqs: Some(TensorRef::from_slice(&num_reqs)),
            block_table: TensorRef::new(&table0, &[persistent, w0])?,
            num_blocks: Some(TensorRef::from_slice(&STEP_NUM_BLOCKS0)),
            stream: Stream::DEFAULT,
        },
        &mut TensorMut::new(&mut g0, &[rows, w0])?,
    );
    if tally
        .check(14, "cattn_gather_block_tables(group 0, num_blocks)", result)
        .is_some()
    {
        print_tensor("batch table (group 0)", &g0, &[rows, w0]);
    }
    let result = gather_block_tables(
        &GatherBlockTablesArgs {
            idx_mapping: TensorRef::from_slice(&STEP_IDX_MAPPING),
            num_reqs: Some(TensorRef::from_slice(&num_reqs)),
            block_table: TensorRef::new(&table1, &[persistent, w1])?,
            num_blocks: None,
            stream: Stream::DEFAULT,
        },
        &mut TensorMut::new(&mut g1, &[rows, w1])?,
    );
    if tally
        .check(14, "cattn_gather_block_tables(group 1, full width)", result)
        .is_none()
    {
        return Ok(());
    }
    print_tensor("batch table (group 1)", &g1, &[rows, w1]);

    let mut s0 = vec![0i64; STEP_TOKEN_CAP];
    let mut s1 = vec![0i64; STEP_TOKEN_CAP];
    let result = compute_slot_mappings(
        &ComputeSlotMappingsArgs {
            params: SlotMappingParams {
                contract: SlotMappingContract::MRV2,
                block_size: 4,
                kernel_block_size: 4,
                ..Default::default()
            },
            query_start_loc: TensorRef::from_slice(&qsl),
            num_reqs: Some(TensorRef::from_slice(&num_reqs)),
            positions: TensorRef::from_slice(&positions),
            idx_mapping: Some(TensorRef::from_slice(&STEP_IDX_MAPPING)),
            block_table: TensorRef::new(&table0, &[persistent, w0])?,
            stream: Stream::DEFAULT,
        },
        &mut TensorMut::from_slice(&mut s0),
    );
    if tally
        .check(
            14,
            "cattn_compute_slot_mappings(group 0: MRV2, block_size 4, persistent table)",
            result,
        )
        .is_none()
    {
        return Ok(());
    }
    print_tensor("slot_mapping (group 0)", &s0, &[STEP_TOKEN_CAP as i64]);
    let result = compute_slot_mappings(
        &ComputeSlotMappingsArgs {
            params: SlotMappingParams {
                contract: SlotMappingContract::V1,
                block_size: 8,
                kernel_block_size: 8,
                ..Default::default()
            },
            query_start_loc: TensorRef::from_slice(&qsl),
            num_reqs: Some(TensorRef::from_slice(&num_reqs)),
            positions: TensorRef::from_slice(&positions),
            idx_mapping: None,
            block_table: TensorRef::new(&g1, &[rows, w1])?,
            stream: Stream::DEFAULT,
        },
        &mut TensorMut::from_slice(&mut s1),
    );
    if tally
        .check(
            14,
            "cattn_compute_slot_mappings(group 1: v1, block_size 8, batch table)",
            result,
        )
        .is_none()
    {
        return Ok(());
    }
    print_tensor("slot_mapping (group 1)", &s1, &[STEP_TOKEN_CAP as i64]);

    let mut logits = vec![0i32; STEP_LOGIT_CAP];
    let mut cu_logits = vec![0i32; STEP_ROWS + 1];
    let mut exp_idx = vec![0i32; STEP_LOGIT_CAP];
    let mut exp_pos = vec![0i32; STEP_LOGIT_CAP];
    let result = combine_sampled_and_draft_tokens(
        &CombineSampledAndDraftTokensArgs {
            num_reqs: Some(TensorRef::from_slice(&num_reqs)),
            num_draft_tokens: Some(TensorRef::from_slice(&STEP_DRAFTS)),
            idx_mapping: Some(TensorRef::from_slice(&STEP_IDX_MAPPING)),
            seq_lens: Some(TensorRef::from_slice(&seq_lens)),
            prefill_len: Some(TensorRef::from_slice(&STEP_PREFILL_LEN)),
            last_sampled_tokens: Some(TensorRef::from_slice(&last)),
            draft_tokens: Some(TensorRef::new(&draft_tokens, &[persistent, s])?),
            ..CombineSampledAndDraftTokensArgs::new(TensorRef::from_slice(&qsl))
        },
        &mut CombineSampledAndDraftTokensOutputs {
            logits_indices: TensorMut::from_slice(&mut logits),
            cu_num_logits: Some(TensorMut::from_slice(&mut cu_logits)),
            expanded_idx_mapping: Some(TensorMut::from_slice(&mut exp_idx)),
            expanded_local_pos: Some(TensorMut::from_slice(&mut exp_pos)),
            input_ids: Some(TensorMut::from_slice(&mut ids)),
        },
    );
    if tally
        .check(14, "cattn_combine_sampled_and_draft_tokens", result)
        .is_none()
    {
        return Ok(());
    }
    let logit_cap = STEP_LOGIT_CAP as i64;
    print_tensor("logits_indices", &logits, &[logit_cap]);
    print_tensor("cu_num_logits", &cu_logits, &[rows + 1]);
    print_tensor("expanded_idx_mapping", &exp_idx, &[logit_cap]);
    print_tensor("expanded_local_pos", &exp_pos, &[logit_cap]);
    print_tensor("input_ids", &ids, &[STEP_TOKEN_CAP as i64]);

    let mut status = [0i32; 3];
    let mut check = StepBatchCheckArgs::new(TensorRef::from_slice(&qsl));
    check.num_reqs = Some(TensorRef::from_slice(&num_reqs));
    check.seq_lens = Some(TensorRef::from_slice(&seq_lens));
    check.block_tables[0] = Some(TensorRef::new(&g0, &[rows, w0])?);
    check.block_tables[1] = Some(TensorRef::new(&g1, &[rows, w1])?);
    check.slot_mappings[0] = Some(TensorRef::from_slice(&s0));
    check.slot_mappings[1] = Some(TensorRef::from_slice(&s1));
    let result = step_batch_check(&check, &mut TensorMut::from_slice(&mut status));
    if tally
        .check(14, "cattn_step_batch_check(both groups)", result)
        .is_some()
    {
        print_tensor("status [field, index, group]", &status, &[3]);
        if status[0] == sys::CATTN_STEP_CHECK_OK as i32 {
            println!("      the step keeps the padding contract");
        } else {
            println!("      the step BREAKS the padding contract");
            tally.record_failure(14, Status::Internal);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 15. Speculative decoding (1.2)
// ---------------------------------------------------------------------------------------------

// A drafter step after the target model verified section 14's 5 live requests, chained as
// vLLM's EAGLE proposer chains it: EAGLE fed the target's hidden states (shift s = 1) with
// parallel drafting (P = 2: the bonus token and one parallel-drafting token), so that each
// request grows by N = P - s = 1 token. Requests 1 and 2 are prompt chunks: their sampled tokens
// are discarded and they go on from a backup token. Request 4 verified its 2 drafts (960, 961):
// the target accepted 960 and sampled 705 in place of 961. The drafter's layers use KV group 1
// (blocks of 8, batch row b's blocks 100 + 10b + j); max_model_len is 34.
const SPEC_REQS: usize = 5;
const SPEC_COLS: usize = 3; // the most drafts + 1
const SPEC_P: i64 = 2;
const SPEC_BLOCK: i64 = 8;
const SPEC_MAX_MODEL_LEN: i64 = 34;
const SPEC_GRAPH_ROWS: usize = 8;
const SPEC_NEXT_ROWS: usize = 6;
const SPEC_SAMPLED: [i32; SPEC_REQS * SPEC_COLS] = [
    701, -1, -1, 702, -1, -1, 703, -1, -1, 704, -1, -1, 960, 705, -1,
];
const SPEC_DISCARD: [u8; SPEC_REQS] = [0, 1, 1, 0, 0];
const SPEC_BACKUP: [i32; SPEC_REQS] = [801, 802, 803, 804, 805];
// The next step's batch: the 4 old requests in place, a new request at row 4, old row 4 at
// row 5; the scheduler's counts (row 5's assumes that every draft was accepted).
const NEXT_PREV_POSITIONS: [i32; SPEC_NEXT_ROWS] = [0, 1, 2, 3, -1, 4];
const NEXT_CPU_COMPUTED: [i32; SPEC_NEXT_ROWS] = [16, 10, 17, 33, 0, 23];

fn transcript_spec_decode(tally: &mut Tally) -> Result<()> {
    section(
        15,
        "Speculative decoding, 1.2 (eagle_prepare_next_token_padded, \
         eagle_prepare_inputs_padded, copy_and_expand_eagle_inputs, compute_new_slot_mapping, \
         eagle_step_update_slot_mapping_and_metadata, \
         update_num_computed_tokens_for_batch_change)",
    );
    let params = CopyAndExpandEagleParams {
        padding_token_id: 0,
        parallel_drafting_token_id: 32000,
        num_padding_slots_per_request: SPEC_P,
        max_tokens_per_request: None,
        shift_input_ids: true,
    };
    let n_new = SPEC_P - 1; // N = P - s
    let (qsl, positions, ids) = step_tokens(true);
    let num_tokens = positions.len();
    let n_out = num_tokens + SPEC_REQS * n_new as usize;
    let reqs = SPEC_REQS as i64;
    let mut cu_drafts = Vec::new();
    let mut seq_lens = Vec::new();
    let mut table = Vec::new();
    for b in 0..SPEC_REQS {
        cu_drafts.push(STEP_DRAFTS[..=b].iter().sum::<i32>());
        // The drafter batch's seq_lens: the verified ones grown by N, as
        // extend_all_queries_by_n grows them.
        let r = STEP_IDX_MAPPING[b] as usize;
        seq_lens.push(STEP_COMPUTED[r] + STEP_SCHEDULED[b] + n_new as i32);
        table.extend((0..STEP_W1 as i32).map(|j| 100 + 10 * b as i32 + j));
    }
    let table_shape = [reqs, STEP_W1 as i64];
    println!(
        "  inputs: the verified batch (section 14's live rows and input_ids); EAGLE, \
         shift_input_ids 1,\n          num_padding_slots_per_request P = 2 (N = P - 1 = 1 new \
         token a request), vocab_size 32000,\n          parallel_drafting_token_id 32000, \
         padding_token_id 0, block_size 8, max_model_len 34"
    );
    print_tensor("query_start_loc", &qsl, &[reqs + 1]);
    print_tensor("target_token_ids", &ids, &[num_tokens as i64]);
    print_tensor("target_positions", &positions, &[num_tokens as i64]);
    print_tensor("cu_num_draft_tokens", &cu_drafts, &[reqs]);
    print_tensor(
        "sampled_token_ids",
        &SPEC_SAMPLED,
        &[reqs, SPEC_COLS as i64],
    );
    print_tensor("discard_request_mask", &SPEC_DISCARD, &[reqs]);
    print_tensor("backup_next_token_ids", &SPEC_BACKUP, &[reqs]);
    print_tensor("block_table (group 1)", &table, &table_shape);

    // 1. Each request's next token and its count of valid sampled tokens.
    let mut next = vec![0i32; SPEC_REQS];
    let mut valid = vec![0i32; SPEC_REQS];
    let result = eagle_prepare_next_token_padded(
        &EaglePrepareNextTokenPaddedArgs {
            vocab_size: 32000,
            sampled_token_ids: TensorRef::new(&SPEC_SAMPLED, &[reqs, SPEC_COLS as i64])?,
            discard_request_mask: Some(TensorRef::from_slice(&SPEC_DISCARD)),
            backup_next_token_ids: TensorRef::from_slice(&SPEC_BACKUP),
            stream: Stream::DEFAULT,
        },
        &mut EaglePrepareNextTokenPaddedOutputs {
            next_token_ids: TensorMut::from_slice(&mut next),
            valid_sampled_tokens_count: TensorMut::from_slice(&mut valid),
        },
    );
    if tally
        .check(15, "cattn_eagle_prepare_next_token_padded", result)
        .is_none()
    {
        return Ok(());
    }
    print_tensor("next_token_ids", &next, &[reqs]);
    print_tensor("valid_sampled_tokens_count", &valid, &[reqs]);

    // 2. The rejected tails and the token each request samples from, its last valid token.
    let mut to_sample = vec![0i32; SPEC_REQS];
    let mut rejected = vec![0i32; SPEC_REQS];
    let result = eagle_prepare_inputs_padded(
        &EaglePrepareInputsPaddedArgs {
            cu_num_draft_tokens: TensorRef::from_slice(&cu_drafts),
            valid_sampled_tokens_count: TensorRef::from_slice(&valid),
            query_start_loc: TensorRef::from_slice(&qsl),
            stream: Stream::DEFAULT,
        },
        &mut EaglePrepareInputsPaddedOutputs {
            token_indices_to_sample: TensorMut::from_slice(&mut to_sample),
            num_rejected_tokens: TensorMut::from_slice(&mut rejected),
        },
    );
    if tally
        .check(15, "cattn_eagle_prepare_inputs_padded", result)
        .is_none()
    {
        return Ok(());
    }
    print_tensor("num_rejected_tokens", &rejected, &[reqs]);
    print_tensor("token_indices_to_sample", &to_sample, &[reqs]);

    // 3. The drafter's first-pass inputs; query_end_loc is the index of step 2.
    let mut out_ids = vec![0i32; n_out];
    let mut out_pos = vec![0i32; n_out];
    let mut out_rejected = vec![0u8; n_out];
    let mut out_masked = vec![0u8; n_out];
    let mut new_idx = vec![0i32; SPEC_REQS * SPEC_P as usize];
    let mut hidden = vec![0i32; num_tokens];
    let result = copy_and_expand_eagle_inputs(
        &CopyAndExpandEagleInputsArgs {
            params,
            target_token_ids: TensorRef::from_slice(&ids),
            target_positions: TensorRef::from_slice(&positions),
            next_token_ids: TensorRef::from_slice(&next),
            query_start_loc: TensorRef::from_slice(&qsl),
            query_end_loc: TensorRef::from_slice(&to_sample),
            stream: Stream::DEFAULT,
        },
        &mut CopyAndExpandEagleInputsOutputs {
            input_ids: TensorMut::from_slice(&mut out_ids),
            positions: TensorMut::from_slice(&mut out_pos),
            is_rejected_token_mask: Some(TensorMut::from_slice(&mut out_rejected)),
            is_masked_token_mask: Some(TensorMut::from_slice(&mut out_masked)),
            new_token_indices: Some(TensorMut::from_slice(&mut new_idx)),
            hidden_state_mapping: Some(TensorMut::from_slice(&mut hidden)),
        },
    );
    if tally
        .check(
            15,
            "cattn_copy_and_expand_eagle_inputs(query_end_loc = token_indices_to_sample)",
            result,
        )
        .is_none()
    {
        return Ok(());
    }
    let out_shape = [n_out as i64];
    print_tensor("out_input_ids", &out_ids, &out_shape);
    print_tensor("out_positions", &out_pos, &out_shape);
    print_tensor("out_is_rejected_token_mask", &out_rejected, &out_shape);
    print_tensor("out_is_masked_token_mask", &out_masked, &out_shape);
    print_tensor("out_new_token_indices", &new_idx, &[new_idx.len() as i64]);
    print_tensor("out_hidden_state_mapping", &hidden, &[num_tokens as i64]);

    // 4. The slots of the drafter's tokens, -1 for the rejected ones.
    let mut new_slots = vec![0i64; n_out];
    let result = compute_new_slot_mapping(
        &ComputeNewSlotMappingArgs {
            block_size: SPEC_BLOCK,
            num_new_tokens: n_new,
            max_model_len: SPEC_MAX_MODEL_LEN,
            query_start_loc: TensorRef::from_slice(&qsl),
            block_table: TensorRef::new(&table, &table_shape)?,
            new_positions: TensorRef::from_slice(&out_pos),
            is_rejected_token_mask: Some(TensorRef::from_slice(&out_rejected)),
            stream: Stream::DEFAULT,
        },
        &mut TensorMut::from_slice(&mut new_slots),
    );
    if tally
        .check(
            15,
            "cattn_compute_new_slot_mapping(N = 1, out_positions, out_is_rejected_token_mask)",
            result,
        )
        .is_some()
    {
        print_tensor("new_slot_mapping", &new_slots, &out_shape);
    }

    // 5. One autoregressive draft step from the position of each request's last new token (the
    // engine gathers it: out_positions at out_new_token_indices[2i + 1]).
    let p = SPEC_P as usize;
    let step_pos: Vec<i32> = (0..SPEC_REQS)
        .map(|b| out_pos[new_idx[b * p + p - 1] as usize])
        .collect();
    let mut clamped = vec![0i32; SPEC_REQS];
    let mut step_slots = vec![0i64; SPEC_GRAPH_ROWS];
    println!(
        "  draft step inputs: positions of each request's last new token, the drafter batch's \
         seq_lens\n          (the verified ones + N), input_batch_size 8 (a CUDA graph's bucket)"
    );
    print_tensor("positions", &step_pos, &[reqs]);
    print_tensor("seq_lens", &seq_lens, &[reqs]);
    let result = eagle_step_update_slot_mapping_and_metadata(
        &EagleStepUpdateSlotMappingAndMetadataArgs {
            block_size: SPEC_BLOCK,
            max_model_len: SPEC_MAX_MODEL_LEN,
            input_batch_size: Some(SPEC_GRAPH_ROWS as i64),
            positions: TensorRef::from_slice(&step_pos),
            block_table: TensorRef::new(&table, &table_shape)?,
            stream: Stream::DEFAULT,
        },
        &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
            seq_lens: TensorMut::from_slice(&mut seq_lens),
            clamped_positions: TensorMut::from_slice(&mut clamped),
            slot_mapping: TensorMut::from_slice(&mut step_slots),
        },
    );
    if tally
        .check(
            15,
            "cattn_eagle_step_update_slot_mapping_and_metadata",
            result,
        )
        .is_some()
    {
        print_tensor("out_clamped_positions", &clamped, &[reqs]);
        print_tensor("out_slot_mapping", &step_slots, &[SPEC_GRAPH_ROWS as i64]);
        print_tensor("seq_lens (updated)", &seq_lens, &[reqs]);
    }

    // 6. The next step's batch: each request's computed tokens, carried across the change. The
    // verified batch's counts in its own layout (entry 5 is past it), 1 accepted each.
    let mut nct: Vec<i32> = (0..SPEC_NEXT_ROWS)
        .map(|b| {
            if b < SPEC_REQS {
                STEP_COMPUTED[STEP_IDX_MAPPING[b] as usize]
            } else {
                0
            }
        })
        .collect();
    let mut accepted = vec![1i32; SPEC_NEXT_ROWS];
    let next_rows = SPEC_NEXT_ROWS as i64;
    println!(
        "  batch change inputs: the next step keeps the 4 old requests in place, adds a new one \
         at row 4\n          and moves old row 4 to row 5; valid_sampled_token_count is the one \
         above"
    );
    print_tensor("prev_positions", &NEXT_PREV_POSITIONS, &[next_rows]);
    print_tensor("prev_num_draft_tokens", &STEP_DRAFTS[..SPEC_REQS], &[reqs]);
    print_tensor("cpu_num_computed_tokens", &NEXT_CPU_COMPUTED, &[next_rows]);
    print_tensor("num_computed_tokens", &nct, &[next_rows]);
    print_tensor("num_accepted_tokens", &accepted, &[next_rows]);
    let result = update_num_computed_tokens_for_batch_change(
        &UpdateNumComputedTokensForBatchChangeArgs {
            prev_positions: TensorRef::from_slice(&NEXT_PREV_POSITIONS),
            valid_sampled_token_count: TensorRef::from_slice(&valid),
            prev_num_draft_tokens: TensorRef::from_slice(&STEP_DRAFTS[..SPEC_REQS]),
            cpu_num_computed_tokens: TensorRef::from_slice(&NEXT_CPU_COMPUTED),
            stream: Stream::DEFAULT,
        },
        &mut UpdateNumComputedTokensForBatchChangeOutputs {
            num_computed_tokens: TensorMut::from_slice(&mut nct),
            num_accepted_tokens: TensorMut::from_slice(&mut accepted),
        },
    );
    if tally
        .check(
            15,
            "cattn_update_num_computed_tokens_for_batch_change",
            result,
        )
        .is_some()
    {
        print_tensor("num_computed_tokens", &nct, &[next_rows]);
        print_tensor("num_accepted_tokens", &accepted, &[next_rows]);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

const UTILITY_NAMES: [&str; NUM_UTILITIES + 1] = [
    "",
    "get_kv_cache_layout",
    "get_dcp_local_seq_lens",
    "get_pcp_query_restore_idx",
    "fused_pcp_qkv_select",
    "pcp_kv_allgather_and_restore",
    "compute_causal_conv1d_metadata",
    "extend_all_queries_by_1 (N)",
    "make_kv_sharing_fast_prefill_common_attn_metadata",
    "make_local_attention_virtual_batches",
    "mamba_get_block_table_tensor",
    "get_per_layer_parameters",
    "resolve_kv_cache_layout",
    "split_decodes_and_prefills",
    "step inputs (1.2)",
    "speculative decoding (1.2)",
];

/// Says CATTN_TRANSCRIPT_FORCE_HOST asks for the host run (set and neither empty nor "0").
fn host_run_forced() -> bool {
    std::env::var("CATTN_TRANSCRIPT_FORCE_HOST").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn main() -> ExitCode {
    match transcript() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("transcript: {e}");
            ExitCode::from(2)
        }
    }
}

fn transcript() -> Result<bool> {
    let mut tally = Tally::default();
    let count = cuda_device_count();
    let gpus = *count.as_ref().unwrap_or(&0);
    if gpus > 0 && host_run_forced() {
        println!(
            "CATTN_TRANSCRIPT_FORCE_HOST is set: running on the host ({gpus} CUDA device(s) left \
             unused)"
        );
    } else if gpus > 0 {
        println!(
            "libcattn sees {gpus} CUDA device(s), but this transcript was built without CUDA: running \
             on the host"
        );
    } else {
        println!(
            "No CUDA device found: running on the host (this transcript was built without CUDA)"
        );
    }
    let header = std::str::from_utf8(&sys::CATTN_VERSION_STRING[..])
        .unwrap_or_default()
        .trim_end_matches('\0');
    println!(
        "libcattn {} (header {header}) transcript",
        version_string()?
    );
    if version()? != HEADER_VERSION {
        println!(
            "warning: library version {} differs from header version {HEADER_VERSION}",
            version()?
        );
    }
    // Row 0 is the runtime query.
    tally.check(0, "cattn_cuda_device_count", count);
    println!(
        "Batch tensors live in host memory; host mirrors (*_cpu) in host memory.\n\
         get_kv_cache_layout, get_per_layer_parameters and resolve_kv_cache_layout take no tensors\n\
         and the batch split reads host tensors only: they always run on the host."
    );

    let batch = make_batch();
    batch.print();

    transcript_kv_cache_layout(&mut tally);
    transcript_dcp_local_seq_lens(&mut tally, &batch);
    transcript_pcp_query_restore_idx(&mut tally, &batch);
    transcript_fused_pcp_qkv_select(&mut tally)?;
    transcript_pcp_kv_allgather_and_restore(&mut tally)?;
    transcript_causal_conv1d_metadata(&mut tally, &batch);
    transcript_extend_all_queries_by_n(&mut tally, &batch);
    transcript_fast_prefill(&mut tally, &batch);
    transcript_local_attention(&mut tally, &batch)?;
    transcript_mamba_block_table(&mut tally, &batch);
    transcript_per_layer_parameters(&mut tally);
    transcript_kv_cache_layout_resolver(&mut tally);
    transcript_split_and_reorder(&mut tally, &batch);
    transcript_step_inputs(&mut tally)?;
    transcript_spec_decode(&mut tally)?;

    println!("\n== Summary ==");
    let mut ok = true;
    for (u, name) in UTILITY_NAMES.iter().enumerate().skip(1) {
        let verdict = tally.first_bad[u].map_or("CATTN_OK", Status::name);
        if let Some(why) = tally.not_counted[u] {
            println!("  {u:2}. {name:<50} {verdict} ({why})");
        } else {
            println!("  {u:2}. {name:<50} {verdict}");
            if tally.first_bad[u].is_some() {
                ok = false;
            }
        }
    }
    if tally.first_bad[0].is_some() {
        ok = false;
    }
    let any_not_counted = tally.not_counted.iter().any(Option::is_some);
    println!(
        "{}",
        if !ok {
            "Some utilities FAILED."
        } else if any_not_counted {
            "All counted utilities returned CATTN_OK."
        } else {
            "All utilities returned CATTN_OK."
        }
    );
    Ok(ok)
}
