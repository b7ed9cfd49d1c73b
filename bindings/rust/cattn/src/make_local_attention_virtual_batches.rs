// SPDX-License-Identifier: Apache-2.0
//! Local-attention virtual batches (vLLM's make_local_attention_virtual_batches),
//! as a plan handle made on the host (with, since 1.1, its size query and a cap on its virtual
//! batches) or (since 1.1) computed on the device.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/make_local_attention_virtual_batches.md` of the libcattn repository; the items here
//! document the Rust side: types, errors, panics and safety.

use std::fmt;
use std::mem::size_of;
use std::ptr::NonNull;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::{Error, Result, Status};
use crate::metadata::{raw_init, CommonAttnMetadata, MetadataScalars};
use crate::one_call::{
    area, batch_scalars, flatten_rows, into_rows, len_i64, reported_len, zeroed,
};
use crate::tensor::{raw_out, IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`make_local_attention_virtual_batches_capturable`], int32/int64 on one CUDA
/// device.
#[derive(Clone, Debug)]
pub struct LocalAttentionCapturableArgs<'a> {
    /// C, `>= 1`.
    pub attn_chunk_size: i64,
    /// `>= 1`, divides `attn_chunk_size`.
    pub block_size: i64,
    /// `[B + 1]`; zero-length requests pad a batch to its capacity.
    pub query_start_loc: TensorRef<'a>,
    /// `[B]`.
    pub seq_lens: TensorRef<'a>,
    /// `[B, cols >= 1]`.
    pub block_table: TensorRef<'a>,
    /// The stream the kernel is enqueued on.
    pub stream: Stream,
}

/// The outputs of [`make_local_attention_virtual_batches_capturable`], int32/int64 on the inputs'
/// device. Their capacity is their length: every per-virtual-batch output has the same one.
#[derive(Debug)]
pub struct LocalAttentionCapturableOutputs<'a> {
    /// `[capacity + 1]`: the virtual batches' cu_seqlens_q; past V it repeats the total.
    pub query_start_loc_out: TensorMut<'a>,
    /// `[capacity]`: their key lengths; 0 past V.
    pub seq_lens_out: TensorMut<'a>,
    /// Optional `[capacity]`: their computed tokens; 0 past V.
    pub num_computed_tokens_out: Option<TensorMut<'a>>,
    /// Optional `[capacity, C / block_size]` of the block table's dtype: the gathered block
    /// table; rows past V are 0.
    pub block_table_out: Option<TensorMut<'a>>,
    /// Optional `[3]`: `{V, max_query_len, max_seq_len}`.
    pub counts: Option<TensorMut<'a>>,
}

/// The sizes of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PlanShape {
    /// V, the number of virtual batches.
    pub virtual_batches: i64,
    /// P, the block-table pages per virtual batch.
    pub pages: i64,
}

/// The inputs of a host plan ([`LocalAttentionPlan::with_args`]) and of its size query
/// ([`make_local_attention_virtual_batches_size`]): `cattn_local_attention_args_t` without its
/// `plan` output. [`LocalAttentionArgs::new`] gives `CATTN_LOCAL_ATTENTION_ARGS_INIT`'s cap.
///
/// ```
/// use cattn::{CommonAttnMetadata, LocalAttentionArgs, LocalAttentionPlan, Status, TensorRef};
/// let (qsl, seq) = ([0i32, 4, 14, 19], [6i32, 17, 9]);
/// let table: Vec<i32> = (0..27).collect();
/// let md = CommonAttnMetadata {
///     query_start_loc_cpu: Some(TensorRef::from_slice(&qsl)),
///     seq_lens_cpu: Some(TensorRef::from_slice(&seq)),
///     block_table_tensor: Some(TensorRef::new(&table, &[3, 9])?),
///     num_reqs: 3, num_actual_tokens: 19,
///     ..Default::default()
/// };
/// let args = LocalAttentionArgs::new(&md, 4, 2);
/// assert_eq!(args.max_virtual_batches, None); // the cap 2 * B + cdiv(19, 4) = 11
/// assert_eq!(LocalAttentionPlan::with_args(&args)?.shape()?.virtual_batches, 8);
/// // The batch needs 8 virtual batches: a cap of 7 refuses it.
/// let err = LocalAttentionPlan::with_args(&args.with_max_virtual_batches(7)).unwrap_err();
/// assert_eq!(err.status(), Status::InvalidArgument);
/// assert!(err.message().starts_with("cattn::LocalAttentionPlan::with_args: args.max_virtual_batches "));
/// # Ok::<(), cattn::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LocalAttentionArgs<'a> {
    /// The batch. Read: `query_start_loc_cpu` and `seq_lens_cpu` (host, `[B + 1]` and `[B]`,
    /// B >= 1), the column count of `block_table_tensor` (at least 1) and `num_actual_tokens`.
    pub metadata: &'a CommonAttnMetadata<'a>,
    /// C, `>= 1`.
    pub attn_chunk_size: i64,
    /// `>= 1`, divides `attn_chunk_size`.
    pub block_size: i64,
    /// The most virtual batches the plan may hold (the C field `max_virtual_batches`, since
    /// 1.1), e.g. [`VirtualBatchBound::bound`](crate::VirtualBatchBound::bound) of
    /// [`max_local_attention_virtual_batches`](fn@crate::max_local_attention_virtual_batches)
    /// for the engine's `max_num_seqs` and `max_num_batched_tokens` (`bound_with_empty_rows`
    /// when batches have zero-length padding rows). A batch that needs more is refused with
    /// [`Status::InvalidArgument`], the message naming `args->max_virtual_batches`; a negative
    /// cap is refused the same way.
    ///
    /// `None`, the default, and `Some(0)` pass 0 (`CATTN_LOCAL_ATTENTION_ARGS_INIT`'s value):
    /// the library derives the cap from `num_actual_tokens`, as
    /// `docs/api/make_local_attention_virtual_batches.md` says.
    pub max_virtual_batches: Option<i64>,
}

impl<'a> LocalAttentionArgs<'a> {
    /// The args of a plan of `metadata` with chunk `attn_chunk_size` and `block_size`, and the
    /// default cap (`max_virtual_batches: None`, derived from `num_actual_tokens`).
    pub fn new(
        metadata: &'a CommonAttnMetadata<'a>,
        attn_chunk_size: i64,
        block_size: i64,
    ) -> LocalAttentionArgs<'a> {
        LocalAttentionArgs {
            metadata,
            attn_chunk_size,
            block_size,
            max_virtual_batches: None,
        }
    }

    /// The same args with the cap `max_virtual_batches` set to `cap` (see the field).
    pub fn with_max_virtual_batches(self, cap: i64) -> LocalAttentionArgs<'a> {
        LocalAttentionArgs {
            max_virtual_batches: Some(cap),
            ..self
        }
    }

    /// The C struct, pointing at `metadata` (this struct's metadata as
    /// [`CommonAttnMetadata::to_raw`] gives it), with no plan.
    fn to_raw(
        self,
        metadata: &sys::cattn_common_attn_metadata_t,
    ) -> sys::cattn_local_attention_args_t {
        sys::cattn_local_attention_args_t {
            struct_size: size_of::<sys::cattn_local_attention_args_t>(),
            attn_chunk_size: self.attn_chunk_size,
            block_size: self.block_size,
            metadata,
            plan: std::ptr::null_mut(),
            // 0: CATTN_LOCAL_ATTENTION_ARGS_INIT's value, the cap derived from
            // metadata.num_actual_tokens (see the C header).
            max_virtual_batches: self.max_virtual_batches.unwrap_or(0),
        }
    }
}

/// What [`make_local_attention_virtual_batches_size`] reports: the plan that
/// [`LocalAttentionPlan::with_args`] would make of the same args, counted without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocalAttentionPlanSize {
    /// V, the number of virtual batches: the plan's [`PlanShape::virtual_batches`], the length
    /// of the `[V]` outputs of [`LocalAttentionPlan::fill`] (`[V + 1]` for
    /// `query_start_loc_cpu`).
    pub virtual_batches: i64,
    /// P = `attn_chunk_size / block_size`, the block-table pages per virtual batch (the plan's
    /// [`PlanShape::pages`]).
    pub pages: i64,
    /// The most host memory, in bytes, that making the plan allocates: 40 bytes per virtual
    /// batch plus a fixed part for the handle.
    pub plan_bytes: usize,
}

impl LocalAttentionPlanSize {
    /// The [`PlanShape`] of the plan these sizes describe.
    pub fn shape(&self) -> PlanShape {
        PlanShape {
            virtual_batches: self.virtual_batches,
            pages: self.pages,
        }
    }
}

/// The tensors [`LocalAttentionPlan::fill`] writes, each int32 or int64.
#[derive(Debug)]
pub struct LocalAttentionOutputs<'a> {
    /// `[V + 1]` host.
    pub query_start_loc_cpu: TensorMut<'a>,
    /// `[V]` host.
    pub seq_lens_cpu: TensorMut<'a>,
    /// `[V]` host.
    pub num_computed_tokens_cpu: TensorMut<'a>,
    /// `[V, P]` on the block table's device, of its dtype: the gathered block table.
    pub block_table_tensor: TensorMut<'a>,
    /// Optional `[V + 1]` device copy of `query_start_loc_cpu`.
    pub query_start_loc: Option<TensorMut<'a>>,
    /// Optional `[V]` device copy of `seq_lens_cpu`.
    pub seq_lens: Option<TensorMut<'a>>,
}

/// The split of a batch into attention-chunk-local virtual batches (vLLM's returned metadata
/// plus its make_block_table closure). Immutable; destroyed when dropped.
///
/// ```
/// use cattn::{CommonAttnMetadata, LocalAttentionOutputs, LocalAttentionPlan, Stream,
///             TensorMut, TensorRef};
/// let (qsl, seq) = ([0i32, 4, 14, 19], [6i32, 17, 9]);
/// let table: Vec<i32> = (0..27).collect();
/// let md = CommonAttnMetadata {
///     query_start_loc_cpu: Some(TensorRef::from_slice(&qsl)),
///     seq_lens_cpu: Some(TensorRef::from_slice(&seq)),
///     block_table_tensor: Some(TensorRef::new(&table, &[3, 9])?),
///     num_reqs: 3, num_actual_tokens: 19,
///     ..Default::default()
/// };
/// let plan = LocalAttentionPlan::new(&md, 4, 2)?;
/// let shape = plan.shape()?;
/// assert_eq!((shape.virtual_batches, shape.pages), (8, 2));
/// let (mut q, mut s, mut c, mut bt) = ([0i32; 9], [0i32; 8], [0i32; 8], [0i32; 16]);
/// let scalars = plan.fill(&md, &mut LocalAttentionOutputs {
///     query_start_loc_cpu: TensorMut::from_slice(&mut q),
///     seq_lens_cpu: TensorMut::from_slice(&mut s),
///     num_computed_tokens_cpu: TensorMut::from_slice(&mut c),
///     block_table_tensor: TensorMut::new(&mut bt, &[8, 2])?,
///     query_start_loc: None,
///     seq_lens: None,
/// }, Stream::DEFAULT)?;
/// assert_eq!(q, [0, 2, 4, 5, 9, 13, 14, 18, 19]);
/// assert_eq!(s, [4, 2, 4, 4, 4, 1, 4, 1]);
/// assert_eq!(scalars.num_reqs, 8);
/// # Ok::<(), cattn::Error>(())
/// ```
pub struct LocalAttentionPlan<'l> {
    raw: NonNull<sys::cattn_local_attention_plan_t>,
    api: Api<'l>,
}

// SAFETY: a plan is immutable after creation and not tied to a thread (cattn.h: "the plan may
// be used by many threads at once"); Drop destroys it with exclusive access.
unsafe impl Send for LocalAttentionPlan<'_> {}
// SAFETY: every call a shared &LocalAttentionPlan allows (get_shape, fill, make_block_table)
// only reads the plan, which the header allows from many threads at once.
unsafe impl Sync for LocalAttentionPlan<'_> {}

/// The virtual batches of chunked local attention for one host batch, owned
/// ([`local_attention_virtual_batches`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LocalAttentionBatches<T> {
    /// `[V + 1]`: the virtual batches' cumulative query lengths.
    pub query_start_loc: Vec<T>,
    /// `[V]`: their key lengths.
    pub seq_lens: Vec<T>,
    /// `[V]`: their computed (context) tokens.
    pub num_computed_tokens: Vec<T>,
    /// `V` rows of `P` pages: the gathered block table.
    pub block_table: Vec<Vec<T>>,
    /// The virtual batches' scalars: `num_reqs` = V, the batch's `num_actual_tokens`, their
    /// `max_query_len` and `max_seq_len`, `causal`.
    pub scalars: MetadataScalars,
}

/// The virtual batches of chunked local attention for a host batch, in one call: the plan
/// ([`LocalAttentionPlan::new`]), its shape, outputs of that shape, the fill, the plan dropped.
/// The parameters come in `cattn_local_attention_args_t`'s order: the sizes, then the batch.
/// `query_start_loc` is `[B + 1]` and `seq_lens` `[B]`; `block_table` has B rows of one length
/// (at least 1), all of one element type, which the outputs have too. `block_size >= 1`
/// divides `attn_chunk_size`. `num_actual_tokens` is taken as `query_start_loc[B]`.
///
/// ```
/// let table: Vec<Vec<i32>> = (0..3).map(|r| (9 * r..9 * r + 9).collect()).collect();
/// let v = cattn::local_attention_virtual_batches(4, 2, &[0, 4, 14, 19], &[6, 17, 9], &table)?;
/// assert_eq!(v.query_start_loc, [0, 2, 4, 5, 9, 13, 14, 18, 19]);
/// assert_eq!(v.seq_lens, [4, 2, 4, 4, 4, 1, 4, 1]);
/// assert_eq!(v.block_table[0], [0, 1]);
/// assert_eq!(v.scalars.num_reqs, 8);
/// // Ragged rows are refused before the library is called.
/// let err = cattn::local_attention_virtual_batches(4, 2, &[0, 1], &[1], &[vec![0], vec![]])
///     .unwrap_err();
/// assert!(err.message().starts_with(
///     "cattn::local_attention_virtual_batches: block_table[1] is not as long as the first row"));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn local_attention_virtual_batches<T: IndexElement, R: AsRef<[T]>>(
    attn_chunk_size: i64,
    block_size: i64,
    query_start_loc: &[T],
    seq_lens: &[T],
    block_table: &[R],
) -> Result<LocalAttentionBatches<T>> {
    Api::linked()?.local_attention_virtual_batches(
        attn_chunk_size,
        block_size,
        query_start_loc,
        seq_lens,
        block_table,
    )
}

/// Plans the virtual batches of chunked local attention; the same as
/// [`LocalAttentionPlan::new`], under vLLM's name.
pub fn make_local_attention_virtual_batches(
    metadata: &CommonAttnMetadata<'_>,
    attn_chunk_size: i64,
    block_size: i64,
) -> Result<LocalAttentionPlan<'static>> {
    LocalAttentionPlan::new(metadata, attn_chunk_size, block_size)
}

/// Plans the virtual batches of chunked local attention from [`LocalAttentionArgs`], the cap
/// `max_virtual_batches` included; the same as [`LocalAttentionPlan::with_args`], under vLLM's
/// name. Since 1.1 (the cap).
pub fn make_local_attention_virtual_batches_with_args(
    args: &LocalAttentionArgs<'_>,
) -> Result<LocalAttentionPlan<'static>> {
    LocalAttentionPlan::with_args(args)
}

/// Reports, without allocating, the plan that [`LocalAttentionPlan::with_args`] would make of
/// the same `args` (`cattn_make_local_attention_virtual_batches_size`): its virtual batches V,
/// its pages per virtual batch P and the most host memory making it allocates. It makes every
/// check the create call makes, the cap `args.max_virtual_batches` included, and fails where
/// that fails, with the same status and message (naming this function).
///
/// Errors: [`Status::InvalidArgument`] as for [`LocalAttentionPlan::with_args`]: chunk/block
/// sizes, missing or non-host mirrors, shapes, an empty batch, a negative cap, more virtual
/// batches than the cap. [`Status::NotSupported`] from a library whose function table predates
/// the entry. Since 1.1.
///
/// ```
/// use cattn::{make_local_attention_virtual_batches_size, CommonAttnMetadata,
///             LocalAttentionArgs, LocalAttentionPlan, TensorRef};
/// let (qsl, seq) = ([0i32, 4, 14, 19], [6i32, 17, 9]);
/// let table: Vec<i32> = (0..27).collect();
/// let md = CommonAttnMetadata {
///     query_start_loc_cpu: Some(TensorRef::from_slice(&qsl)),
///     seq_lens_cpu: Some(TensorRef::from_slice(&seq)),
///     block_table_tensor: Some(TensorRef::new(&table, &[3, 9])?),
///     num_reqs: 3, num_actual_tokens: 19,
///     ..Default::default()
/// };
/// let args = LocalAttentionArgs::new(&md, 4, 2);
/// let size = make_local_attention_virtual_batches_size(&args)?;
/// assert_eq!((size.virtual_batches, size.pages), (8, 2));
/// assert!(size.plan_bytes >= 40 * 8);
/// assert_eq!(LocalAttentionPlan::with_args(&args)?.shape()?, size.shape());
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn make_local_attention_virtual_batches_size(
    args: &LocalAttentionArgs<'_>,
) -> Result<LocalAttentionPlanSize> {
    Api::linked()?.make_local_attention_virtual_batches_size(args)
}

/// Computes the local-attention virtual batches on the device from the device
/// `query_start_loc` and `seq_lens` - cu_seqlens_q, key lengths, computed tokens, the gathered
/// block table and the counts - so that a captured CUDA graph computes them afresh on every
/// replay (the [`LocalAttentionPlan`] calls replay the values planned at capture). The values
/// equal the plan's for every batch the host accepts.
///
/// The capacity is the outputs' length: `min(2 * max_num_reqs + cdiv(max_num_tokens, C),
/// max_num_tokens + max_num_reqs)` holds every batch of at most `max_num_reqs` requests
/// (padding rows included) and `max_num_tokens` tokens. A batch of more virtual batches than
/// the capacity writes the first ones and reports its V in `counts`.
///
/// One kernel on `args.stream`: no host sync, no allocation, capturable. The data cannot be
/// checked on the device: a decreasing `query_start_loc` entry counts as an empty request, a
/// seq_len shorter than its query is taken as the query's length, and an int32 output keeps
/// the low 32 bits.
///
/// Errors: [`Status::InvalidArgument`] for host tensors (the host has
/// [`LocalAttentionPlan`]), chunk/block sizes, shapes, dtypes, tensors on different devices,
/// outputs of different capacities, overlaps; [`Status::NotSupported`] in a CPU-only build or
/// without a usable device; [`Status::CudaError`]. Since 1.1.
///
/// ```
/// use cattn::{make_local_attention_virtual_batches_capturable, LocalAttentionCapturableArgs,
///             LocalAttentionCapturableOutputs, Status, Stream, TensorMut, TensorRef};
/// // Host tensors are refused: the host has LocalAttentionPlan.
/// let (qsl, seq) = ([0i32, 4, 14, 19], [6i32, 17, 9]);
/// let table: Vec<i32> = (0..27).collect();
/// let (mut q, mut s) = ([0i32; 9], [0i32; 8]);
/// let err = make_local_attention_virtual_batches_capturable(&LocalAttentionCapturableArgs {
///     attn_chunk_size: 4,
///     block_size: 2,
///     query_start_loc: TensorRef::from_slice(&qsl),
///     seq_lens: TensorRef::from_slice(&seq),
///     block_table: TensorRef::new(&table, &[3, 9])?,
///     stream: Stream::DEFAULT,
/// }, &mut LocalAttentionCapturableOutputs {
///     query_start_loc_out: TensorMut::from_slice(&mut q),
///     seq_lens_out: TensorMut::from_slice(&mut s),
///     num_computed_tokens_out: None,
///     block_table_out: None,
///     counts: None,
/// }).unwrap_err();
/// assert_eq!(err.status(), Status::InvalidArgument);
/// assert!(err.message().contains("args.query_start_loc is not device memory"));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn make_local_attention_virtual_batches_capturable(
    args: &LocalAttentionCapturableArgs<'_>,
    out: &mut LocalAttentionCapturableOutputs<'_>,
) -> Result<()> {
    Api::linked()?.make_local_attention_virtual_batches_capturable(args, out)
}

impl LocalAttentionPlan<'static> {
    /// Plans the virtual batches of chunked local attention (host work). Reads
    /// `metadata.query_start_loc_cpu` and `seq_lens_cpu` (host, `[B + 1]` and `[B]`), the
    /// column count of `block_table_tensor` and `num_actual_tokens`. `block_size >= 1` must
    /// divide `attn_chunk_size`.
    pub fn new(
        metadata: &CommonAttnMetadata<'_>,
        attn_chunk_size: i64,
        block_size: i64,
    ) -> Result<LocalAttentionPlan<'static>> {
        Api::linked()?
            .make_local_attention_virtual_batches(metadata, attn_chunk_size, block_size)
            .map_err(|e| e.in_terms_of("LocalAttentionPlan::new"))
    }

    /// Plans the virtual batches of chunked local attention (host work) from
    /// [`LocalAttentionArgs`]: [`new`](Self::new) with the cap `args.max_virtual_batches`,
    /// which refuses a batch that needs more virtual batches ([`Status::InvalidArgument`],
    /// naming `args->max_virtual_batches`). [`make_local_attention_virtual_batches_size`]
    /// reports the plan's sizes first, without allocating. Since 1.1 (the cap).
    pub fn with_args(args: &LocalAttentionArgs<'_>) -> Result<LocalAttentionPlan<'static>> {
        Api::linked()?
            .make_local_attention_virtual_batches_with_args(args)
            .map_err(|e| e.in_terms_of("LocalAttentionPlan::with_args"))
    }
}

impl<'l> LocalAttentionPlan<'l> {
    /// The plan's sizes.
    pub fn shape(&self) -> Result<PlanShape> {
        let f = entry!(self.api, local_attention_plan_get_shape)?;
        let (mut virtual_batches, mut pages) = (0i64, 0i64);
        // SAFETY: the plan is alive and both out-pointers are valid.
        self.api
            .check(unsafe { f(self.raw.as_ptr(), &mut virtual_batches, &mut pages) })?;
        Ok(PlanShape {
            virtual_batches,
            pages,
        })
    }

    /// Writes the virtual batches' metadata: the tensors of `out` and, returned, the scalars
    /// (`num_reqs` = V, the planned `num_actual_tokens`, `max_query_len`, `max_seq_len`,
    /// `causal`). `metadata` is the batch the plan was made from; its `block_table_tensor` is
    /// gathered.
    pub fn fill(
        &self,
        metadata: &CommonAttnMetadata<'_>,
        out: &mut LocalAttentionOutputs<'_>,
        stream: Stream,
    ) -> Result<MetadataScalars> {
        self.fill_with_upper_bound(metadata, out, None, stream)
            .map_err(|e| e.in_terms_of("LocalAttentionPlan::fill"))
    }

    /// [`fill`](Self::fill) that also writes, when given, the 1.1 `seq_lens_cpu_upper_bound`
    /// of the virtual batches: a host `[V]` int32/int64 tensor that receives their key lengths
    /// (exact, so their own upper bound; vLLM copies the input's `[B]` one, mis-shaped for the
    /// virtual batches). A wrongly sized one is refused before anything is written. Since 1.1.
    pub fn fill_with_upper_bound(
        &self,
        metadata: &CommonAttnMetadata<'_>,
        out: &mut LocalAttentionOutputs<'_>,
        seq_lens_cpu_upper_bound: Option<&mut TensorMut<'_>>,
        stream: Stream,
    ) -> Result<MetadataScalars> {
        let input = metadata.to_raw();
        let mut out_md = raw_init();
        out_md.seq_lens_cpu_upper_bound = raw_out(seq_lens_cpu_upper_bound);
        out_md.query_start_loc_cpu = out.query_start_loc_cpu.as_raw();
        out_md.seq_lens_cpu = out.seq_lens_cpu.as_raw();
        out_md.num_computed_tokens_cpu = out.num_computed_tokens_cpu.as_raw();
        out_md.block_table_tensor = out.block_table_tensor.as_raw();
        out_md.query_start_loc = raw_out(out.query_start_loc.as_mut());
        out_md.seq_lens = raw_out(out.seq_lens.as_mut());
        let raw = sys::cattn_local_attention_fill_args_t {
            struct_size: size_of::<sys::cattn_local_attention_fill_args_t>(),
            metadata: &input,
            out: &mut out_md,
            stream: stream.as_raw(),
        };
        let f = entry!(self.api, local_attention_plan_fill)?;
        // SAFETY: the plan, the metadata, the output struct and every view they point to live
        // through the call; the output tensors are borrowed mutably.
        self.api.check_in(
            unsafe { f(self.raw.as_ptr(), &raw) },
            "LocalAttentionPlan::fill_with_upper_bound",
        )?;
        Ok(MetadataScalars::of(&out_md))
    }

    /// Gathers a (new) block table into the virtual batches' table, vLLM's make_block_table:
    /// `block_table` is `[B, >= cols]`, `out` `[V, P]` of the same device and dtype.
    pub fn make_block_table(
        &self,
        block_table: &TensorRef<'_>,
        out: &mut TensorMut<'_>,
        stream: Stream,
    ) -> Result<()> {
        let f = entry!(self.api, local_attention_plan_make_block_table)?;
        // SAFETY: the plan and both views live through the call; `out` is borrowed mutably.
        self.api.check_in(
            unsafe {
                f(
                    self.raw.as_ptr(),
                    block_table.as_raw(),
                    out.as_raw(),
                    stream.as_raw(),
                )
            },
            "LocalAttentionPlan::make_block_table",
        )
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> *const sys::cattn_local_attention_plan_t {
        self.raw.as_ptr()
    }

    /// The library the plan belongs to.
    pub fn api(&self) -> Api<'l> {
        self.api
    }
}

impl<'l> Api<'l> {
    /// [`local_attention_virtual_batches`] in this library.
    pub fn local_attention_virtual_batches<T: IndexElement, R: AsRef<[T]>>(
        self,
        attn_chunk_size: i64,
        block_size: i64,
        query_start_loc: &[T],
        seq_lens: &[T],
        block_table: &[R],
    ) -> Result<LocalAttentionBatches<T>> {
        const FUNCTION: &str = "local_attention_virtual_batches";
        let (table, cols) = flatten_rows(FUNCTION, "block_table", block_table)?;
        let md = CommonAttnMetadata {
            query_start_loc_cpu: Some(TensorRef::from_slice(query_start_loc)),
            seq_lens_cpu: Some(TensorRef::from_slice(seq_lens)),
            block_table_tensor: Some(TensorRef::new(
                &table,
                &[len_i64(block_table.len()), len_i64(cols)],
            )?),
            num_reqs: len_i64(seq_lens.len()),
            num_actual_tokens: batch_scalars(query_start_loc, None).num_actual_tokens,
            ..Default::default()
        };
        let plan = self
            .make_local_attention_virtual_batches(&md, attn_chunk_size, block_size)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        let shape = plan.shape()?;
        let v = reported_len(FUNCTION, "a virtual-batch count", shape.virtual_batches)?;
        let p = reported_len(FUNCTION, "a page count", shape.pages)?;
        let mut qsl = zeroed(FUNCTION, v + 1)?;
        let mut seq = zeroed(FUNCTION, v)?;
        let mut computed = zeroed(FUNCTION, v)?;
        let mut pages = zeroed(FUNCTION, area(FUNCTION, "the block table", v, p)?)?;
        let scalars = plan
            .fill(
                &md,
                &mut LocalAttentionOutputs {
                    query_start_loc_cpu: TensorMut::from_slice(&mut qsl),
                    seq_lens_cpu: TensorMut::from_slice(&mut seq),
                    num_computed_tokens_cpu: TensorMut::from_slice(&mut computed),
                    block_table_tensor: TensorMut::new(&mut pages, &[len_i64(v), len_i64(p)])?,
                    query_start_loc: None,
                    seq_lens: None,
                },
                Stream::DEFAULT,
            )
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(LocalAttentionBatches {
            query_start_loc: qsl,
            seq_lens: seq,
            num_computed_tokens: computed,
            block_table: into_rows(&pages, v, p),
            scalars,
        })
    }

    /// [`LocalAttentionPlan::new`] in this library.
    pub fn make_local_attention_virtual_batches(
        self,
        metadata: &CommonAttnMetadata<'_>,
        attn_chunk_size: i64,
        block_size: i64,
    ) -> Result<LocalAttentionPlan<'l>> {
        self.make_local_attention_virtual_batches_with_args(&LocalAttentionArgs::new(
            metadata,
            attn_chunk_size,
            block_size,
        ))
        .map_err(|e| e.in_terms_of("make_local_attention_virtual_batches"))
    }

    /// [`LocalAttentionPlan::with_args`] in this library.
    pub fn make_local_attention_virtual_batches_with_args(
        self,
        args: &LocalAttentionArgs<'_>,
    ) -> Result<LocalAttentionPlan<'l>> {
        let input = args.metadata.to_raw();
        let mut raw = args.to_raw(&input);
        let f = entry!(self, make_local_attention_virtual_batches)?;
        // SAFETY: the metadata and its views live through the call; the library reads them
        // and writes only raw.plan.
        self.check_in(
            unsafe { f(&mut raw) },
            "make_local_attention_virtual_batches_with_args",
        )?;
        let raw = NonNull::new(raw.plan).ok_or_else(|| {
            Error::new(
                Status::Internal,
                "cattn: cattn_make_local_attention_virtual_batches returned CATTN_OK and no plan",
            )
        })?;
        Ok(LocalAttentionPlan { raw, api: self })
    }

    /// [`make_local_attention_virtual_batches_size`] in this library.
    pub fn make_local_attention_virtual_batches_size(
        self,
        args: &LocalAttentionArgs<'_>,
    ) -> Result<LocalAttentionPlanSize> {
        let input = args.metadata.to_raw();
        let raw = args.to_raw(&input);
        let f = entry!(self, make_local_attention_virtual_batches_size)?;
        let (mut virtual_batches, mut pages, mut plan_bytes) = (0i64, 0i64, 0usize);
        // SAFETY: the args, the metadata and its views live through the call, which only reads
        // them (args.plan is ignored); the three out-pointers are valid.
        self.check_in(
            unsafe { f(&raw, &mut virtual_batches, &mut pages, &mut plan_bytes) },
            "make_local_attention_virtual_batches_size",
        )?;
        Ok(LocalAttentionPlanSize {
            virtual_batches,
            pages,
            plan_bytes,
        })
    }
}

impl Api<'_> {
    /// [`make_local_attention_virtual_batches_capturable`] in this library.
    pub fn make_local_attention_virtual_batches_capturable(
        self,
        args: &LocalAttentionCapturableArgs<'_>,
        out: &mut LocalAttentionCapturableOutputs<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_local_attention_capturable_args_t {
            struct_size: size_of::<sys::cattn_local_attention_capturable_args_t>(),
            attn_chunk_size: args.attn_chunk_size,
            block_size: args.block_size,
            query_start_loc: args.query_start_loc.as_raw(),
            seq_lens: args.seq_lens.as_raw(),
            block_table: args.block_table.as_raw(),
            query_start_loc_out: out.query_start_loc_out.as_raw(),
            seq_lens_out: out.seq_lens_out.as_raw(),
            num_computed_tokens_out: raw_out(out.num_computed_tokens_out.as_mut()),
            block_table_out: raw_out(out.block_table_out.as_mut()),
            counts: raw_out(out.counts.as_mut()),
            stream: args.stream.as_raw(),
        };
        let f = entry!(self, make_local_attention_virtual_batches_capturable)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably, and their
        // device memory is vouched for by whoever made the views (from_raw_parts).
        self.check_in(
            unsafe { f(&raw) },
            "make_local_attention_virtual_batches_capturable",
        )
    }
}

impl Drop for LocalAttentionPlan<'_> {
    fn drop(&mut self) {
        // A table without the destroy entry cannot have made the plan.
        if let Ok(destroy) = entry!(self.api, local_attention_plan_destroy) {
            // SAFETY: the plan came from this library and is destroyed once, with exclusive
            // access.
            unsafe { destroy(self.raw.as_ptr()) }
        }
    }
}

impl fmt::Debug for LocalAttentionPlan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalAttentionPlan")
            .field("raw", &self.raw)
            .finish()
    }
}
