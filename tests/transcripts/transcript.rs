// SPDX-License-Identifier: Apache-2.0
//! transcript.rs - a test transcript: the batch of the C transcript (transcript.c, next to this
//! file) through the safe Rust API. It runs every libcattn utility (1-13) on one small,
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

const NUM_UTILITIES: usize = 13;

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
