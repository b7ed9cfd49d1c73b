// SPDX-License-Identifier: Apache-2.0
//! Handles: every Drop frees its handle exactly once (observed through a function table whose
//! destroy entries count), handles are shared across threads as the header allows, and tables
//! are validated before use.
//!
//! The communicator cannot be created without GPUs and NCCL, so the counting table also fakes
//! the communicator entries: that exercises the Rust side (Drop, rank/size, the pcp_kv_allgather_and_restore
//! argument plumbing) on any machine.

mod support;

use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

use cattn::*;
use cattn_sys as sys;
use support::{HostInts, Int};

static CONTEXTS_DESTROYED: AtomicUsize = AtomicUsize::new(0);
static PLANS_DESTROYED: AtomicUsize = AtomicUsize::new(0);
static COMMS_DESTROYED: AtomicUsize = AtomicUsize::new(0);
static STEP_PLANS_DESTROYED: AtomicUsize = AtomicUsize::new(0);
// The counting table is used by one test at a time, so that the counts are its own.
static COUNTING: Mutex<()> = Mutex::new(());

unsafe extern "C" fn counting_context_destroy(ctx: *mut sys::cattn_context_t) {
    CONTEXTS_DESTROYED.fetch_add(1, SeqCst);
    // SAFETY: forwarded from the Drop of a context the real library made.
    unsafe { sys::cattn_context_destroy(ctx) }
}

unsafe extern "C" fn counting_plan_destroy(plan: *mut sys::cattn_local_attention_plan_t) {
    PLANS_DESTROYED.fetch_add(1, SeqCst);
    // SAFETY: forwarded from the Drop of a plan the real library made.
    unsafe { sys::cattn_local_attention_plan_destroy(plan) }
}

unsafe extern "C" fn counting_step_plan_destroy(plan: *mut sys::cattn_step_plan_t) {
    STEP_PLANS_DESTROYED.fetch_add(1, SeqCst);
    // SAFETY: forwarded from the Drop of a step plan the real library made.
    unsafe { sys::cattn_step_plan_destroy(plan) }
}

/// What the fake communicator entries hand out as a cattn_comm_t.
struct FakeComm {
    rank: i32,
    size: i32,
}

unsafe extern "C" fn fake_comm_create_borrowed(
    nccl_comm: *mut c_void,
    out: *mut *mut sys::cattn_comm_t,
) -> sys::cattn_status_t {
    if nccl_comm.is_null() || out.is_null() {
        return sys::CATTN_INVALID_ARGUMENT;
    }
    // The fake "NCCL communicator" is a rank number.
    let rank = nccl_comm as usize as i32;
    let comm = Box::new(FakeComm { rank, size: 4 });
    // SAFETY: `out` is the wrapper's valid out-pointer.
    unsafe { *out = Box::into_raw(comm).cast() };
    sys::CATTN_OK
}

unsafe extern "C" fn fake_comm_destroy(comm: *mut sys::cattn_comm_t) {
    COMMS_DESTROYED.fetch_add(1, SeqCst);
    // SAFETY: made by fake_comm_create_borrowed.
    drop(unsafe { Box::from_raw(comm.cast::<FakeComm>()) });
}

unsafe extern "C" fn fake_comm_get_rank(
    comm: *const sys::cattn_comm_t,
    rank: *mut i32,
) -> sys::cattn_status_t {
    // SAFETY: made by fake_comm_create_borrowed; `rank` is the wrapper's out-pointer.
    unsafe { *rank = (*comm.cast::<FakeComm>()).rank };
    sys::CATTN_OK
}

unsafe extern "C" fn fake_comm_get_size(
    comm: *const sys::cattn_comm_t,
    size: *mut i32,
) -> sys::cattn_status_t {
    // SAFETY: as above.
    unsafe { *size = (*comm.cast::<FakeComm>()).size };
    sys::CATTN_OK
}

/// Checks what the wrapper passes for pcp_kv_allgather_and_restore and answers with a size derived from it.
unsafe extern "C" fn fake_workspace_size(
    args: *const sys::cattn_pcp_kv_allgather_and_restore_args_t,
    size: *mut usize,
) -> sys::cattn_status_t {
    // SAFETY: the wrapper's valid pointers.
    let a = unsafe { &*args };
    // SAFETY: the key is a live view for the call.
    let key = unsafe { &*a.key };
    assert_eq!(
        a.struct_size,
        size_of::<sys::cattn_pcp_kv_allgather_and_restore_args_t>()
    );
    assert!(!a.comm.is_null() && !a.value.is_null() && !a.restore_idx.is_null());
    assert!(a.key_out.is_null() && a.workspace.is_null());
    // SAFETY: the fake communicator behind the handle.
    let world = unsafe { (*a.comm.cast::<FakeComm>()).size } as usize;
    // SAFETY: size is the wrapper's out-pointer.
    unsafe { *size = world * a.num_actual_tokens as usize * key.ndim as usize };
    sys::CATTN_OK
}

unsafe extern "C" fn fake_allgather(
    args: *const sys::cattn_pcp_kv_allgather_and_restore_args_t,
) -> sys::cattn_status_t {
    // SAFETY: the wrapper's valid pointer.
    let a = unsafe { &*args };
    if a.key_out.is_null() || a.value_out.is_null() {
        return sys::CATTN_INVALID_ARGUMENT;
    }
    if a.workspace_size != 4096 || a.workspace as usize != 0x1000 {
        return sys::CATTN_INSUFFICIENT_SIZE;
    }
    sys::CATTN_OK
}

/// The linked library's table with counting destroy entries and a fake communicator, leaked so
/// that it lives as long as the handles made through it.
fn counting_api() -> Api<'static> {
    let real = Api::linked().unwrap();
    assert_eq!(real.struct_size(), size_of::<sys::cattn_api_t>());
    // SAFETY: the linked library's table has exactly this size (checked above).
    let mut table: sys::cattn_api_t = unsafe { *real.as_raw() };
    table.context_destroy = Some(counting_context_destroy);
    table.local_attention_plan_destroy = Some(counting_plan_destroy);
    table.step_plan_destroy = Some(counting_step_plan_destroy);
    table.comm_create_borrowed = Some(fake_comm_create_borrowed);
    table.comm_destroy = Some(fake_comm_destroy);
    table.comm_get_rank = Some(fake_comm_get_rank);
    table.comm_get_size = Some(fake_comm_get_size);
    table.pcp_kv_allgather_and_restore_workspace_size = Some(fake_workspace_size);
    table.pcp_kv_allgather_and_restore = Some(fake_allgather);
    let table: &'static sys::cattn_api_t = Box::leak(Box::new(table));
    // SAFETY: every entry behaves as the header says (the real ones) or as the fakes above
    // define, for 'static.
    unsafe { Api::from_raw(table) }.unwrap()
}

fn small_batch() -> (Vec<i32>, Vec<i32>, Vec<i64>) {
    (vec![0, 4, 14, 19], vec![6, 17, 9], (0..27).collect())
}

#[test]
fn every_drop_destroys_its_handle_once() {
    let _serial = COUNTING.lock().unwrap();
    let api = counting_api();

    let before = CONTEXTS_DESTROYED.load(SeqCst);
    for i in 0..1000 {
        let ctx = api.context_create().unwrap();
        if i % 2 == 0 {
            ctx.set_kv_cache_layout_override(Some(KvCacheLayout::Hnd))
                .unwrap();
        }
    }
    assert_eq!(CONTEXTS_DESTROYED.load(SeqCst) - before, 1000);

    let (q, s, table) = small_batch();
    let md = CommonAttnMetadata {
        query_start_loc_cpu: Some(TensorRef::from_slice(&q)),
        seq_lens_cpu: Some(TensorRef::from_slice(&s)),
        block_table_tensor: Some(TensorRef::new(&table, &[3, 9]).unwrap()),
        num_reqs: 3,
        num_actual_tokens: 19,
        ..Default::default()
    };
    let before = PLANS_DESTROYED.load(SeqCst);
    let plans: Vec<_> = (0..100)
        .map(|_| api.make_local_attention_virtual_batches(&md, 4, 2).unwrap())
        .collect();
    assert_eq!(PLANS_DESTROYED.load(SeqCst), before, "no plan freed early");
    drop(plans);
    assert_eq!(PLANS_DESTROYED.load(SeqCst) - before, 100);
    // A failed creation makes no handle, so nothing is destroyed.
    assert!(api.make_local_attention_virtual_batches(&md, 4, 3).is_err());
    assert_eq!(PLANS_DESTROYED.load(SeqCst) - before, 100);

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
    let before = STEP_PLANS_DESTROYED.load(SeqCst);
    let plans: Vec<_> = (0..100)
        .map(|_| api.step_plan_create(&desc).unwrap())
        .collect();
    assert_eq!(
        STEP_PLANS_DESTROYED.load(SeqCst),
        before,
        "no plan freed early"
    );
    assert!(plans.iter().all(|p| p.api().same_library(api)));
    drop(plans);
    assert_eq!(STEP_PLANS_DESTROYED.load(SeqCst) - before, 100);
    // A refused desc makes no plan, so nothing is destroyed.
    let bad = StepPlanDesc {
        max_num_reqs: 0,
        ..desc
    };
    assert!(api.step_plan_create(&bad).is_err());
    assert_eq!(STEP_PLANS_DESTROYED.load(SeqCst) - before, 100);

    let before = COMMS_DESTROYED.load(SeqCst);
    for rank in 1..=50usize {
        // SAFETY: the fake entries accept any non-NULL pointer.
        let comm = unsafe { api.comm_create_borrowed(rank as *mut c_void) }.unwrap();
        assert_eq!(comm.rank().unwrap(), rank as i32);
        assert_eq!(comm.size().unwrap(), 4);
    }
    assert_eq!(COMMS_DESTROYED.load(SeqCst) - before, 50);
    // SAFETY: NULL is rejected.
    assert!(unsafe { api.comm_create_borrowed(std::ptr::null_mut()) }.is_err());
    assert_eq!(COMMS_DESTROYED.load(SeqCst) - before, 50);

    // Moving a handle to another thread and dropping it there frees it once, too.
    let ctx = api.context_create().unwrap();
    let before = CONTEXTS_DESTROYED.load(SeqCst);
    std::thread::spawn(move || drop(ctx)).join().unwrap();
    assert_eq!(CONTEXTS_DESTROYED.load(SeqCst) - before, 1);
}

#[test]
fn utility_5_passes_its_arguments_through() {
    let _serial = COUNTING.lock().unwrap();
    let api = counting_api();
    // SAFETY: the fake entries accept any non-NULL pointer.
    let mut comm = unsafe { api.comm_create_borrowed(2 as *mut c_void) }.unwrap();
    let key = [0u16; 24];
    let value = [0u8; 8];
    let idx = [0i64, 1];
    let args = PcpKvAllgatherArgs {
        key: TensorRef::new(&key, &[4, 2, 3]).unwrap(),
        value: TensorRef::new(&value, &[4, 2]).unwrap(),
        num_actual_tokens: 3,
        restore_idx: TensorRef::from_slice(&idx),
        stream: Stream::DEFAULT,
    };
    // W * n * key.ndim, as the fake computes it.
    assert_eq!(
        api.pcp_kv_allgather_and_restore_workspace_size(&comm, &args)
            .unwrap(),
        4 * 3 * 3
    );
    let (mut ko, mut vo) = ([0u16; 12], [0u8; 4]);
    let mut out = PcpKvAllgatherOutputs {
        key_out: TensorMut::new(&mut ko, &[2, 2, 3]).unwrap(),
        value_out: TensorMut::new(&mut vo, &[2, 2]).unwrap(),
        // SAFETY: the fake never dereferences it.
        workspace: unsafe { Workspace::from_raw(0x1000 as *mut c_void, 4096) },
    };
    api.pcp_kv_allgather_and_restore(&mut comm, &args, &mut out)
        .unwrap();
    out.workspace = Workspace::none();
    assert_eq!(
        api.pcp_kv_allgather_and_restore(&mut comm, &args, &mut out)
            .unwrap_err()
            .status(),
        Status::InsufficientSize
    );
    // The linked library refuses a communicator made through another table.
    let linked = Api::linked().unwrap();
    let e = linked
        .pcp_kv_allgather_and_restore_workspace_size(&comm, &args)
        .unwrap_err();
    assert!(e.message().contains("another libcattn"), "{e}");
}

#[test]
fn handles_of_another_library_are_refused() {
    let _serial = COUNTING.lock().unwrap();
    let api = counting_api();
    let ctx = api.context_create().unwrap();
    let e = get_kv_cache_layout(Some(&ctx), &KvCacheLayoutArgs::default()).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .contains("cattn::get_kv_cache_layout: ctx was made by another libcattn"),
        "{e}"
    );
    // Its own table takes it.
    assert_eq!(
        api.get_kv_cache_layout(Some(&ctx), &KvCacheLayoutArgs::default())
            .unwrap(),
        KvCacheLayout::Nhd
    );
}

#[test]
fn tables_are_validated() {
    let real = Api::linked().unwrap();
    // SAFETY: the linked table is valid.
    let table: sys::cattn_api_t = unsafe { *real.as_raw() };

    // SAFETY: NULL is accepted and refused.
    let e = unsafe { Api::from_raw(std::ptr::null()) }.unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);

    let mut other_major = table;
    other_major.abi_major += 1;
    // SAFETY: a valid table apart from the version it claims.
    let e = unsafe { Api::from_raw(&other_major) }.unwrap_err();
    assert!(e.message().contains("ABI major"), "{e}");

    let mut tiny = table;
    tiny.struct_size = offset_of!(sys::cattn_api_t, infer_global_hyperparameters);
    // SAFETY: a prefix of a valid table.
    let e = unsafe { Api::from_raw(&tiny) }.unwrap_err();
    assert!(e.message().contains("fewer than"), "{e}");

    // A table that predates the NCCL entries (as 0.1 development builds had): those calls fail
    // cleanly, the others work.
    let mut old = table;
    old.struct_size = offset_of!(sys::cattn_api_t, comm_get_unique_id);
    // SAFETY: a prefix of a valid table; the wrapper must not read past struct_size.
    let api = unsafe { Api::from_raw(&old) }.unwrap();
    let e = api.comm_get_unique_id().unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(
        e.message()
            .contains("predates its `comm_get_unique_id` entry"),
        "{e}"
    );
    assert!(api.is_valid_kv_cache_layout("HND").unwrap());

    // A 1.1 table from before the device calls and the step plan: those calls fail cleanly.
    let mut pre_step = table;
    pre_step.struct_size = offset_of!(sys::cattn_api_t, compute_causal_conv1d_metadata_capturable);
    // SAFETY: a prefix of a valid table; the wrapper must not read past struct_size.
    let api = unsafe { Api::from_raw(&pre_step) }.unwrap();
    let desc = StepPlanDesc {
        products: StepProducts::CAUSAL_CONV1D_METADATA,
        max_num_reqs: 1,
        max_num_blocks_per_req: 1,
        ..Default::default()
    };
    let e = api.step_plan_create(&desc).unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(
        e.message()
            .contains("predates its `step_plan_create` entry"),
        "{e}"
    );
    let qsl = [0i32, 4];
    let e = api
        .compute_causal_conv1d_metadata_capturable(
            &TensorRef::from_slice(&qsl),
            8,
            &mut CausalConv1dCapturableOutputs::default(),
            Stream::DEFAULT,
        )
        .unwrap_err();
    assert!(
        e.message()
            .contains("predates its `compute_causal_conv1d_metadata_capturable` entry"),
        "{e}"
    );
    assert!(api.is_valid_kv_cache_layout("HND").unwrap());

    // A 1.2 table from before the size query: it, and the step-input helpers that size their
    // results with it, fail cleanly; the tensor calls work.
    let mut pre_size = table;
    pre_size.struct_size = offset_of!(sys::cattn_api_t, step_inputs_size);
    // SAFETY: a prefix of a valid table; the wrapper must not read past struct_size.
    let api = unsafe { Api::from_raw(&pre_size) }.unwrap();
    let e = api
        .step_inputs_size(&StepInputsSizeArgs::default())
        .unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(
        e.message()
            .contains("predates its `step_inputs_size` entry"),
        "{e}"
    );
    let e = api
        .prepare_pos_seq_lens_host(&[1i32], &[0], &[0], None)
        .unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(api.query_lens(&[0i32, 2]).is_ok());

    let mut hole = table;
    hole.get_per_layer_parameters = None;
    // SAFETY: a valid table with one entry missing.
    let api = unsafe { Api::from_raw(&hole) }.unwrap();
    let e = api.get_per_layer_parameters(&[]).unwrap_err();
    assert!(
        e.message().contains("no `get_per_layer_parameters` entry"),
        "{e}"
    );
}

/// A table that has step_plan_create but not step_plan_get_shape (cut between them): the plan
/// is made, its shape cannot be read, and the half-made StepPlan still destroys it.
#[test]
fn a_step_plan_whose_shape_cannot_be_read_is_destroyed() {
    let _serial = COUNTING.lock().unwrap();
    let counting = counting_api();
    // SAFETY: the counting table is valid and leaked ('static).
    let mut table: sys::cattn_api_t = unsafe { *counting.as_raw() };
    table.struct_size = offset_of!(sys::cattn_api_t, step_plan_get_shape);
    let table: &'static sys::cattn_api_t = Box::leak(Box::new(table));
    // SAFETY: a prefix of a valid table, for 'static.
    let api = unsafe { Api::from_raw(table) }.unwrap();
    let desc = StepPlanDesc {
        products: StepProducts::EXTEND_QUERIES,
        max_num_reqs: 1,
        max_num_blocks_per_req: 1,
        ..Default::default()
    };
    let before = STEP_PLANS_DESTROYED.load(SeqCst);
    let e = api.step_plan_create(&desc).unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(
        e.message()
            .contains("predates its `step_plan_get_shape` entry"),
        "{e}"
    );
    assert_eq!(STEP_PLANS_DESTROYED.load(SeqCst) - before, 1);
}

#[test]
fn send_and_sync_where_the_header_allows() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Api<'static>>();
    send_sync::<Context<'static>>();
    send_sync::<LocalAttentionPlan<'static>>();
    send_sync::<StepPlan<'static>>();
    send_sync::<Comm<'static>>();
    send_sync::<TensorRef<'static>>();
    send_sync::<Stream>();
    send_sync::<Error>();
    send_sync::<dynamic::Library>();
    send::<TensorMut<'static>>();
    send::<Workspace<'static>>();
}

/// One context shared by threads that set its override and resolve with it at once.
#[test]
fn a_context_is_shared_across_threads() {
    let ctx = Context::new().unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let ctx = &ctx;
            scope.spawn(move || {
                for i in 0..500 {
                    if t == 0 {
                        let layout = [KvCacheLayout::Nhd, KvCacheLayout::Hnd][i % 2];
                        ctx.set_kv_cache_layout_override(Some(layout)).unwrap();
                    } else {
                        // Either value, never an error: the override is published atomically.
                        get_kv_cache_layout(Some(ctx), &KvCacheLayoutArgs::default()).unwrap();
                    }
                }
            });
        }
    });
    ctx.set_kv_cache_layout_override(None).unwrap();
    let args = KvCacheLayoutArgs {
        connector: Some(KvCacheLayout::Hnd),
        ..Default::default()
    };
    assert_eq!(
        get_kv_cache_layout(Some(&ctx), &args).unwrap(),
        KvCacheLayout::Hnd
    );
}

/// One plan filled by several threads at once, each into its own outputs.
#[test]
fn a_plan_is_shared_across_threads() {
    let (q, s, table) = small_batch();
    let md = CommonAttnMetadata {
        query_start_loc_cpu: Some(TensorRef::from_slice(&q)),
        seq_lens_cpu: Some(TensorRef::from_slice(&s)),
        block_table_tensor: Some(TensorRef::new(&table, &[3, 9]).unwrap()),
        num_reqs: 3,
        num_actual_tokens: 19,
        ..Default::default()
    };
    let plan = make_local_attention_virtual_batches(&md, 4, 2).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..200 {
                    let mut bt = HostInts::new(&[8, 2], Int::I64, 1);
                    plan.make_block_table(
                        md.block_table_tensor.as_ref().unwrap(),
                        &mut bt.view_mut(),
                        Stream::DEFAULT,
                    )
                    .unwrap();
                    assert_eq!(
                        bt.values(),
                        [0, 1, 2, 3, 11, 12, 13, 14, 15, 16, 17, 17, 20, 21, 22, 23]
                    );
                }
            });
        }
    });
}
