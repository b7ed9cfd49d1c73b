// SPDX-License-Identifier: Apache-2.0
//! The local-attention plan's size query (`make_local_attention_virtual_batches_size`) against
//! the plans actually made of the same args, and the plan's cap `max_virtual_batches`: what it
//! refuses, in the size query and the create call alike.

mod support;

use std::mem::offset_of;

use cattn::*;
use support::expect_error;

/// One host batch: `[B + 1]` query_start_loc, `[B]` seq_lens and a `[B, cols]` block table.
struct Batch<T> {
    qsl: Vec<T>,
    seq: Vec<T>,
    table: Vec<T>,
    cols: i64,
}

impl<T: IndexElement + TryFrom<i64>> Batch<T> {
    fn new(qsl: &[i64], seq: &[i64], cols: i64) -> Batch<T> {
        let of = |v: &[i64]| -> Vec<T> {
            v.iter()
                .map(|&x| T::try_from(x).ok().expect("the value fits"))
                .collect()
        };
        let rows = seq.len() as i64;
        Batch {
            qsl: of(qsl),
            seq: of(seq),
            table: of(&(0..rows * cols).collect::<Vec<_>>()),
            cols,
        }
    }

    /// The metadata, with `num_actual_tokens` = the last query_start_loc entry (0 when none).
    fn metadata(&self) -> CommonAttnMetadata<'_> {
        let rows = self.seq.len() as i64;
        CommonAttnMetadata {
            query_start_loc_cpu: Some(TensorRef::from_slice(&self.qsl)),
            seq_lens_cpu: Some(TensorRef::from_slice(&self.seq)),
            block_table_tensor: Some(TensorRef::new(&self.table, &[rows, self.cols]).unwrap()),
            num_reqs: rows,
            num_actual_tokens: self.qsl.last().map_or(0, |t| t.to_i64()),
            ..Default::default()
        }
    }
}

/// Makes the size query and the plan of the same args and checks that they agree; the plan is
/// also filled with outputs of exactly the reported sizes. Returns the size.
fn size_matches_plan<T: IndexElement>(args: &LocalAttentionArgs<'_>) -> LocalAttentionPlanSize {
    let size = make_local_attention_virtual_batches_size(args).unwrap();
    let plan = LocalAttentionPlan::with_args(args).unwrap();
    assert_eq!(plan.shape().unwrap(), size.shape());
    assert_eq!(size.pages, args.attn_chunk_size / args.block_size);
    // The plan holds 40 bytes per virtual batch, besides its fixed part.
    assert!(
        size.plan_bytes >= 40 * size.virtual_batches as usize,
        "{size:?}"
    );
    let (v, p) = (size.virtual_batches as usize, size.pages as usize);
    let mut q = vec![T::default(); v + 1];
    let mut s = vec![T::default(); v];
    let mut c = vec![T::default(); v];
    let mut bt = vec![T::default(); v * p];
    let scalars = plan
        .fill(
            args.metadata,
            &mut LocalAttentionOutputs {
                query_start_loc_cpu: TensorMut::from_slice(&mut q),
                seq_lens_cpu: TensorMut::from_slice(&mut s),
                num_computed_tokens_cpu: TensorMut::from_slice(&mut c),
                block_table_tensor: TensorMut::new(&mut bt, &[v as i64, p as i64]).unwrap(),
                query_start_loc: None,
                seq_lens: None,
            },
            Stream::DEFAULT,
        )
        .unwrap();
    assert_eq!(scalars.num_reqs, size.virtual_batches);
    // The same through the `Api` method and the vLLM-named free function.
    let api = Api::linked().unwrap();
    assert_eq!(
        api.make_local_attention_virtual_batches_size(args).unwrap(),
        size
    );
    assert_eq!(
        make_local_attention_virtual_batches_with_args(args)
            .unwrap()
            .shape()
            .unwrap(),
        size.shape()
    );
    size
}

/// query_start_loc, seq_lens, the block table's columns, chunk, block size, the expected V.
type Case = (&'static [i64], &'static [i64], i64, i64, i64, i64);

fn batches<T: IndexElement + TryFrom<i64>>() {
    let cases: &[Case] = &[
        // The C transcript's batch (tests/transcripts/transcript.c): 2 + 3 + 3 virtual batches.
        (&[0, 4, 14, 19], &[6, 17, 9], 9, 4, 2, 8),
        // One decode: one virtual batch.
        (&[0, 1], &[10], 4, 4, 2, 1),
        // One long prefill from scratch: cdiv(33, 8) = 5 chunks.
        (&[0, 33], &[33], 9, 8, 4, 5),
        // Zero-length (padding) rows: each still one virtual batch, of query length 0.
        (&[0, 3, 3, 3], &[5, 0, 0], 3, 4, 2, 4),
        // Only padding rows: no tokens at all.
        (&[0, 0, 0], &[0, 0], 2, 4, 4, 2),
    ];
    for &(qsl, seq, cols, chunk, block, v) in cases {
        let batch = Batch::<T>::new(qsl, seq, cols);
        let md = batch.metadata();
        let args = LocalAttentionArgs::new(&md, chunk, block);
        let size = size_matches_plan::<T>(&args);
        assert_eq!(size.virtual_batches, v, "{qsl:?} {seq:?}");
        // A cap of exactly V keeps the batch, and the sizes do not depend on the cap.
        assert_eq!(
            size_matches_plan::<T>(&args.with_max_virtual_batches(v)),
            size
        );
    }
}

#[test]
fn the_size_query_reports_the_plan_of_each_batch() {
    batches::<i32>();
    batches::<i64>();
}

#[test]
fn plan_bytes_grow_by_40_per_virtual_batch() {
    let one = Batch::<i64>::new(&[0, 1], &[10], 4);
    let eight = Batch::<i64>::new(&[0, 4, 14, 19], &[6, 17, 9], 4);
    let (md1, md8) = (one.metadata(), eight.metadata());
    let b1 = make_local_attention_virtual_batches_size(&LocalAttentionArgs::new(&md1, 4, 2))
        .unwrap()
        .plan_bytes;
    let b8 = make_local_attention_virtual_batches_size(&LocalAttentionArgs::new(&md8, 4, 2))
        .unwrap()
        .plan_bytes;
    assert_eq!(b8 - b1, 7 * 40);
}

#[test]
fn the_empty_batch_is_refused_by_both() {
    let batch = Batch::<i32>::new(&[0], &[], 3);
    let md = batch.metadata();
    let args = LocalAttentionArgs::new(&md, 4, 2);
    let needle = "args.metadata.seq_lens_cpu describes an empty batch";
    let e = expect_error(
        make_local_attention_virtual_batches_size(&args),
        Status::InvalidArgument,
        needle,
    );
    assert!(
        e.message()
            .starts_with("cattn::make_local_attention_virtual_batches_size: "),
        "{e}"
    );
    let e = expect_error(
        LocalAttentionPlan::with_args(&args),
        Status::InvalidArgument,
        needle,
    );
    assert!(
        e.message()
            .starts_with("cattn::LocalAttentionPlan::with_args: "),
        "{e}"
    );
}

#[test]
fn the_cap_refuses_a_batch_that_needs_more_virtual_batches() {
    // 8 virtual batches (2 + 3 + 3).
    let batch = Batch::<i32>::new(&[0, 4, 14, 19], &[6, 17, 9], 9);
    let md = batch.metadata();
    let args = LocalAttentionArgs::new(&md, 4, 2);
    assert_eq!(args.max_virtual_batches, None);

    let capped = args.with_max_virtual_batches(7);
    assert_eq!(capped.max_virtual_batches, Some(7));
    let needle = "args.max_virtual_batches caps the virtual batches below what the batch needs \
                  (got 8 virtual batches against a cap of 7";
    let e = expect_error(
        make_local_attention_virtual_batches_size(&capped),
        Status::InvalidArgument,
        needle,
    );
    assert!(
        e.message()
            .starts_with("cattn::make_local_attention_virtual_batches_size: "),
        "{e}"
    );
    let e = expect_error(
        LocalAttentionPlan::with_args(&capped),
        Status::InvalidArgument,
        needle,
    );
    assert!(
        e.message()
            .starts_with("cattn::LocalAttentionPlan::with_args: "),
        "{e}"
    );
    // The field set directly, through the Api method, is the same cap.
    let direct = LocalAttentionArgs {
        max_virtual_batches: Some(1),
        ..args
    };
    expect_error(
        Api::linked()
            .unwrap()
            .make_local_attention_virtual_batches_with_args(&direct),
        Status::InvalidArgument,
        "cattn::make_local_attention_virtual_batches_with_args: args.max_virtual_batches caps the virtual batches",
    );

    // A negative cap is refused by both.
    let negative = args.with_max_virtual_batches(-1);
    for e in [
        make_local_attention_virtual_batches_size(&negative).map(|_| ()),
        LocalAttentionPlan::with_args(&negative).map(|_| ()),
    ] {
        expect_error(
            e,
            Status::InvalidArgument,
            "args.max_virtual_batches is negative (got -1",
        );
    }

    // Without a cap (None, or Some(0): C's 0), the library derives 2 * B + cdiv(tokens, C)
    // from num_actual_tokens: 6 with no tokens, too few for this batch, and the refusal names
    // that field instead.
    let no_tokens = CommonAttnMetadata {
        num_actual_tokens: 0,
        ..md.clone()
    };
    for args in [
        LocalAttentionArgs::new(&no_tokens, 4, 2),
        LocalAttentionArgs::new(&no_tokens, 4, 2).with_max_virtual_batches(0),
    ] {
        let needle = "args.metadata.num_actual_tokens caps the virtual batches below what the \
                      batch needs (got 8 virtual batches against a cap of 6";
        expect_error(
            make_local_attention_virtual_batches_size(&args),
            Status::InvalidArgument,
            needle,
        );
        expect_error(
            LocalAttentionPlan::with_args(&args),
            Status::InvalidArgument,
            needle,
        );
    }
    // A given cap replaces the derived one: 8 keeps the batch whatever num_actual_tokens says.
    let enough = LocalAttentionArgs::new(&no_tokens, 4, 2).with_max_virtual_batches(8);
    assert_eq!(
        make_local_attention_virtual_batches_size(&enough)
            .unwrap()
            .virtual_batches,
        8
    );
    assert_eq!(
        LocalAttentionPlan::with_args(&enough)
            .unwrap()
            .shape()
            .unwrap()
            .virtual_batches,
        8
    );
    // The old constructor is the default cap.
    expect_error(
        LocalAttentionPlan::new(&no_tokens, 4, 2),
        Status::InvalidArgument,
        "cattn::LocalAttentionPlan::new: metadata.num_actual_tokens caps the virtual batches",
    );
}

#[test]
fn a_table_without_the_size_entry_says_so() {
    let real = Api::linked().unwrap();
    // SAFETY: the linked table is valid.
    let mut old: sys::cattn_api_t = unsafe { *real.as_raw() };
    old.struct_size = offset_of!(sys::cattn_api_t, make_local_attention_virtual_batches_size);
    // SAFETY: a prefix of a valid table; the wrapper must not read past struct_size.
    let api = unsafe { Api::from_raw(&old) }.unwrap();
    let batch = Batch::<i32>::new(&[0, 1], &[10], 4);
    let md = batch.metadata();
    let args = LocalAttentionArgs::new(&md, 4, 2);
    expect_error(
        api.make_local_attention_virtual_batches_size(&args),
        Status::NotSupported,
        "predates its `make_local_attention_virtual_batches_size` entry",
    );
    // The 1.0 create call is still there.
    let plan = api
        .make_local_attention_virtual_batches_with_args(&args)
        .unwrap();
    assert_eq!(plan.shape().unwrap().virtual_batches, 1);
}
