// Nothing lost: every fallible host entry point, called with one invalid argument at a time
// (NULL pointers, small struct sizes, each tensor NULL or malformed, wrong ndim/dtype/shape,
// devices that differ, out-of-range scalars, data the call must refuse), returns the status the
// header documents, names the argument, and writes nothing - no output tensor byte (padding and
// the guard bytes around the elements included), no byte of an output struct or scalar.
//
// Each entry point has a Setup: a valid call (checked to succeed, or for the communicator calls
// to fail only where a CPU-only build or a missing communicator must) that every variant starts
// from. Variants either rebuild inputs before the call is wired or edit the wired call.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
int64_t g_variants = 0;  // variants checked, reported at the end

// Prints how much was swept when the whole binary runs (ctest runs one test per process, where
// the count is that test's share). Reporting only: each variant asserts on its own.
class SweepReport : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_variants > 0)
      std::printf("[ nothing_lost ] %lld invalid-argument variants checked: documented status, "
                  "named argument, nothing written\n", static_cast<long long>(g_variants));
  }
};
const auto* const g_sweep_report = ::testing::AddGlobalTestEnvironment(new SweepReport);

// Whether tensors marked kDLCUDA may reach past validation: only in a CPU-only build, where the
// library refuses them (in a CUDA build they would be launched on).
bool cpu_only_build() {
#if defined(CATTN_TEST_WITH_CUDA)
  return false;
#else
  return true;
#endif
}

// A struct or scalar the library may write, with guard bytes on both sides.
template <class T>
class Guarded {
 public:
  Guarded() : Guarded(T{}) {}
  explicit Guarded(const T& v) : bytes_(sizeof(T) + 2 * kPad, 0xC3) {
    std::memcpy(bytes_.data() + kPad, &v, sizeof v);
  }
  T* get() { return reinterpret_cast<T*>(bytes_.data() + kPad); }
  T* operator->() { return get(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  static constexpr size_t kPad = 16;  // keeps T aligned: vector storage is 16-byte aligned
  std::vector<uint8_t> bytes_;
};

// An output tensor with poison before its first element (byte offset) and after its last.
HostTensor out_tensor(std::vector<int64_t> shape, DLDataType dtype) {
  return HostTensor(std::move(shape), dtype, 1, 2);
}
HostTensor in_tensor(const std::vector<int64_t>& values, DLDataType dtype,
                     std::vector<int64_t> shape = {}) {
  return HostTensor::of(values, dtype, std::move(shape), 1, 1);
}

// A tensor argument of a wired call, as the library names it.
struct Slot {
  std::string name;
  DLTensor* t;
  std::function<void()> nullify;  // empty: NULL is valid for this argument
  bool device_variant = true;     // whether putting it on a GPU alone must be refused
};

// What every Setup shares: the buffers to watch, the wired tensor slots, and scratch storage
// for edited views.
struct Base {
  std::vector<HostTensor*> tensors;                    // every tensor of the call
  std::vector<const std::vector<uint8_t>*> structs;  // guarded structs and scalars
  std::vector<Slot> slots;
  DLTensor alias{};
  int64_t alias_shape[4] = {0, 0, 0, 0};
  std::vector<int64_t> scratch_shape, scratch_strides;

  std::vector<std::vector<uint8_t>> snapshot() const {
    std::vector<std::vector<uint8_t>> s;
    for (const HostTensor* t : tensors) s.push_back(t->bytes());
    for (const auto* b : structs) s.push_back(*b);
    return s;
  }
  DLTensor* slot(const std::string& name) {
    for (Slot& s : slots)
      if (s.name == name) return s.t;
    ADD_FAILURE() << "no slot " << name;
    return &alias;
  }
  // A view of `base`'s memory shifted by `elems` elements with `shape` (1-D or 2-D), for the
  // overlap variants; it stays inside base's buffer, which has 16 spare bytes after its end.
  DLTensor* overlap_view(HostTensor& base, int64_t elems, std::vector<int64_t> shape) {
    alias = *base.dl();
    for (size_t i = 0; i < shape.size(); ++i) alias_shape[i] = shape[i];
    alias.ndim = static_cast<int32_t>(shape.size());
    alias.shape = alias_shape;
    alias.strides = nullptr;
    alias.byte_offset += static_cast<uint64_t>(elems * base.elem());
    return &alias;
  }
};

template <class S>
struct Variant {
  std::string what;
  cattn_status_t code;
  std::string needle;
  std::function<void(S&)> before;  // edits inputs before the call is wired
  std::function<void(S&)> after;   // edits the wired call
};

// The variants every tensor argument gets: NULL (when required), each structural defect the
// DLPack conventions refuse, and a device of its own.
template <class S>
std::vector<Variant<S>> structural() {
  S probe;
  probe.wire();
  std::vector<Variant<S>> v;
  for (size_t i = 0; i < probe.slots.size(); ++i) {
    const Slot& p = probe.slots[i];
    const std::string n = p.name;
    auto at = [i](S& s) { return s.slots[i].t; };
    if (p.nullify)
      v.push_back({n + " NULL", CATTN_INVALID_ARGUMENT, n + " is NULL", nullptr,
                   [i](S& s) { s.slots[i].nullify(); }});
    v.push_back({n + " ndim 9", CATTN_INVALID_ARGUMENT, n + " has an unsupported ndim", nullptr,
                 [at](S& s) { at(s)->ndim = 9; }});
    v.push_back({n + " NULL shape", CATTN_INVALID_ARGUMENT, n + " has a NULL shape", nullptr,
                 [at](S& s) { at(s)->shape = nullptr; }});
    v.push_back({n + " on OpenCL", CATTN_NOT_SUPPORTED, n + " is on an unsupported device", nullptr,
                 [at](S& s) { at(s)->device = {kDLOpenCL, 0}; }});
    v.push_back({n + " device_id -1", CATTN_INVALID_ARGUMENT, n + " has a negative device_id",
                 nullptr, [at](S& s) { at(s)->device.device_id = -1; }});
    v.push_back({n + " 7-bit dtype", CATTN_NOT_SUPPORTED, n + " has an unsupported dtype", nullptr,
                 [at](S& s) { at(s)->dtype.bits = 7; }});
    v.push_back({n + " 2 lanes", CATTN_NOT_SUPPORTED, n + " has an unsupported dtype", nullptr,
                 [at](S& s) { at(s)->dtype.lanes = 2; }});
    v.push_back({n + " negative dim", CATTN_INVALID_ARGUMENT, n + " has a negative dimension",
                 nullptr, [at](S& s) {
                   DLTensor* t = at(s);
                   s.scratch_shape.assign(t->shape, t->shape + t->ndim);
                   s.scratch_shape.back() = -1;
                   t->shape = s.scratch_shape.data();
                 }});
    v.push_back({n + " dims overflowing int64", CATTN_INVALID_ARGUMENT, n + " overflows int64",
                 nullptr, [at](S& s) {
                   DLTensor* t = at(s);
                   s.scratch_shape.assign(static_cast<size_t>(t->ndim), int64_t{1} << 40);
                   if (t->ndim == 1) s.scratch_shape[0] = kI64Max;
                   t->shape = s.scratch_shape.data();
                 }});
    v.push_back({n + " negative stride", CATTN_INVALID_ARGUMENT, n + " has a negative stride",
                 nullptr, [at](S& s) {
                   DLTensor* t = at(s);
                   s.scratch_strides.assign(static_cast<size_t>(t->ndim), 1);
                   s.scratch_strides[0] = -1;
                   t->strides = s.scratch_strides.data();
                 }});
    v.push_back({n + " NULL data", CATTN_INVALID_ARGUMENT, n + " has NULL data", nullptr,
                 [at](S& s) { at(s)->data = nullptr; }});
    v.push_back({n + " byte_offset 2^63", CATTN_INVALID_ARGUMENT,
                 n + " addresses past the end of memory", nullptr,
                 [at](S& s) { at(s)->byte_offset = uint64_t{1} << 63; }});
    if (p.device_variant)
      v.push_back({n + " alone on a GPU", CATTN_INVALID_ARGUMENT, n, nullptr,
                   [at](S& s) { at(s)->device = {kDLCUDA, 0}; }});
  }
  return v;
}

// Runs the valid call, then every variant, each on a fresh Setup.
template <class S>
void sweep(const char* fn, std::vector<Variant<S>> variants, cattn_status_t baseline = CATTN_OK,
           const std::string& baseline_needle = "") {
  {
    S s;
    s.wire();
    const cattn_status_t st = s.call();
    ASSERT_EQ(st, baseline) << "the unchanged call: " << cattn_status_string(st) << " "
                            << cattn_last_error_message();
    if (baseline != CATTN_OK)
      EXPECT_NE(std::string(cattn_last_error_message()).find(baseline_needle), std::string::npos);
  }
  for (const Variant<S>& v : variants) {
    SCOPED_TRACE(std::string(fn) + ": " + v.what);
    S s;
    if (v.before) v.before(s);
    s.wire();
    if (v.after) v.after(s);
    const auto before = s.snapshot();
    const cattn_status_t st = s.call();
    const std::string msg = cattn_last_error_message();
    EXPECT_EQ(st, v.code) << cattn_status_string(st) << ": " << msg;
    EXPECT_NE(msg.find(fn), std::string::npos) << msg;
    EXPECT_NE(msg.find(v.needle), std::string::npos) << "message: " << msg << "\nexpected: " << v.needle;
    const auto after = s.snapshot();
    for (size_t i = 0; i < before.size(); ++i)
      EXPECT_EQ(before[i], after[i]) << (i < s.tensors.size() ? "tensor " : "struct ")
                                     << (i < s.tensors.size() ? i : i - s.tensors.size())
                                     << " was written by a failed call";
    ++g_variants;
  }
}

template <class S>
std::vector<Variant<S>> operator+(std::vector<Variant<S>> a, const std::vector<Variant<S>>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ------------------------------------------------------------------------------------------
// 2. DCP local sequence lengths
struct Dcp : Base {
  HostTensor seq = in_tensor({5, 9, 0}, i32()), out = out_tensor({3, 2}, i64());
  Guarded<cattn_dcp_local_seq_lens_args_t> args{CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT};
  bool null_args = false;
  Dcp() {
    tensors = {&seq, &out};
    structs = {&args.bytes()};
    args->dcp_size = 2;
  }
  void wire() {
    args->seq_lens = seq.dl();
    args->out = out.dl();
    slots = {{"args->seq_lens", seq.dl(), [this] { args->seq_lens = nullptr; }},
             {"args->out", out.dl(), [this] { args->out = nullptr; }}};
  }
  cattn_status_t call() { return cattn_get_dcp_local_seq_lens(null_args ? nullptr : args.get()); }
};

TEST(nothing_lost, GetDcpLocalSeqLens) {
  using V = Variant<Dcp>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Dcp& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr,
       [](Dcp& s) { s.args->struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE - 1; }},
      {"dcp_size 0", I, "args->dcp_size is out of range", nullptr, [](Dcp& s) { s.args->dcp_size = 0; }},
      {"interleave 0", I, "args->dcp_kv_cache_interleave_size is out of range", nullptr,
       [](Dcp& s) { s.args->dcp_kv_cache_interleave_size = 0; }},
      {"size x interleave > INT32_MAX", I, "args->dcp_kv_cache_interleave_size times", nullptr,
       [](Dcp& s) { s.args->dcp_kv_cache_interleave_size = int64_t{1} << 30; }},
      {"rank = size", I, "args->dcp_rank is out of range", nullptr, [](Dcp& s) { s.args->dcp_rank = 2; }},
      {"rank -5", I, "args->dcp_rank is out of range", nullptr, [](Dcp& s) { s.args->dcp_rank = -5; }},
      {"seq_lens 2-D", I, "args->seq_lens has the wrong ndim", [](Dcp& s) { s.seq = in_tensor({5, 9, 0}, i32(), {3, 1}); }, nullptr},
      {"seq_lens float", I, "args->seq_lens has the wrong dtype", nullptr, [](Dcp& s) { s.args->seq_lens = s.seq.dl(); const_cast<DLTensor*>(s.args->seq_lens)->dtype = {kDLFloat, 32, 1}; }},
      {"out uint64", I, "args->out has the wrong dtype", nullptr, [](Dcp& s) { s.args->out->dtype = {kDLUInt, 64, 1}; }},
      {"out 1-D for all ranks", I, "args->out has the wrong ndim", [](Dcp& s) { s.out = out_tensor({3}, i64()); }, nullptr},
      {"out [3, 3]", I, "args->out has the wrong size in dim 1", [](Dcp& s) { s.out = out_tensor({3, 3}, i64()); }, nullptr},
      {"out [3, 1]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 1", [](Dcp& s) { s.out = out_tensor({3, 1}, i64()); }, nullptr},
      {"out [2, 2]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 0", [](Dcp& s) { s.out = out_tensor({2, 2}, i64()); }, nullptr},
      {"out zero stride", I, "args->out is an output with a zero stride", nullptr, [](Dcp& s) {
         s.scratch_strides = {0, 1};
         s.args->out->strides = s.scratch_strides.data();
       }},
      {"out one rank 2-D", I, "args->out has the wrong ndim", nullptr, [](Dcp& s) { s.args->dcp_rank = 1; }},
      {"negative length", I, "args->seq_lens has a length outside", [](Dcp& s) { s.seq = in_tensor({5, -1, 0}, i32()); }, nullptr},
      {"length past INT32_MAX", I, "args->seq_lens has a length outside", [](Dcp& s) { s.seq = in_tensor({5, int64_t{1} << 31, 0}, i64()); }, nullptr},
      {"out overlapping seq_lens", I, "args->out overlaps an input", nullptr, [](Dcp& s) {
         s.args->dcp_rank = 0;
         s.args->out = s.overlap_view(s.seq, 1, {3});
       }},
  };
  if (cpu_only_build())
    v.push_back({"every tensor on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Dcp& s) {
                   s.args->out->device = {kDLCUDA, 0};
                   const_cast<DLTensor*>(s.args->seq_lens)->device = {kDLCUDA, 0};
                 }});
  sweep<Dcp>("cattn_get_dcp_local_seq_lens", structural<Dcp>() + v);
}

// ------------------------------------------------------------------------------------------
// 3. PCP restore index and its size
struct RestoreSize : Base {
  HostTensor cu = in_tensor({0, 4, 6, 7}, i64());
  Guarded<int64_t> size{-7};
  bool null_size = false;
  const DLTensor* cu_p = nullptr;
  RestoreSize() {
    tensors = {&cu};
    structs = {&size.bytes()};
  }
  void wire() {
    cu_p = cu.dl();
    slots = {{"cu_num_tokens", cu.dl(), [this] { cu_p = nullptr; }}};
  }
  cattn_status_t call() {
    return cattn_get_pcp_query_restore_idx_size(cu_p, null_size ? nullptr : size.get());
  }
};

struct Restore : Base {
  HostTensor cu = in_tensor({0, 4, 6, 7}, i64()), out = out_tensor({8}, i32());
  Guarded<cattn_pcp_query_restore_idx_args_t> args{CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT};
  bool null_args = false;
  Restore() {
    tensors = {&cu, &out};
    structs = {&args.bytes()};
  }
  void wire() {
    args->cu_num_tokens = cu.dl();
    args->restore_idx = out.dl();
    slots = {{"args->cu_num_tokens", cu.dl(), [this] { args->cu_num_tokens = nullptr; }},
             {"args->restore_idx", out.dl(), [this] { args->restore_idx = nullptr; }}};
  }
  cattn_status_t call() { return cattn_get_pcp_query_restore_idx(null_args ? nullptr : args.get()); }
};

TEST(nothing_lost, GetPcpQueryRestoreIdx) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<RestoreSize>;
    std::vector<V> v = {
        {"size NULL", I, "size is NULL", [](RestoreSize& s) { s.null_size = true; }, nullptr},
        {"2-D", I, "cu_num_tokens has the wrong ndim", [](RestoreSize& s) { s.cu = in_tensor({0, 4, 6, 7}, i64(), {2, 2}); }, nullptr},
        {"float", I, "cu_num_tokens has the wrong dtype", nullptr, [](RestoreSize& s) { s.slots[0].t->dtype = {kDLFloat, 64, 1}; }},
        {"on a GPU", I, "cu_num_tokens is not host memory", nullptr, [](RestoreSize& s) { s.slots[0].t->device = {kDLCUDA, 0}; }},
        {"decreasing", I, "cu_num_tokens decreases", [](RestoreSize& s) { s.cu = in_tensor({0, 4, 2}, i64()); }, nullptr},
        {"odd length", I, "cu_num_tokens has a request of odd length", [](RestoreSize& s) { s.cu = in_tensor({0, 3}, i32()); }, nullptr},
        {"length past int64", I, "restore index size overflows", [](RestoreSize& s) { s.cu = in_tensor({kI64Min, 0, kI64Max - 1}, i64()); }, nullptr},
    };
    auto st = structural<RestoreSize>();
    st.erase(std::remove_if(st.begin(), st.end(), [](const V& x) { return x.what == "cu_num_tokens alone on a GPU"; }), st.end());
    sweep<RestoreSize>("cattn_get_pcp_query_restore_idx_size", st + v);
  }
  using V = Variant<Restore>;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Restore& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Restore& s) { s.args->struct_size = 8; }},
      {"out 2-D", I, "args->restore_idx has the wrong ndim", [](Restore& s) { s.out = out_tensor({4, 2}, i32()); }, nullptr},
      {"out float", I, "args->restore_idx has the wrong dtype", nullptr, [](Restore& s) { s.args->restore_idx->dtype = {kDLFloat, 32, 1}; }},
      {"out zero stride", I, "args->restore_idx is an output with a zero stride", nullptr, [](Restore& s) {
         s.scratch_strides = {0};
         s.args->restore_idx->strides = s.scratch_strides.data();
       }},
      {"capacity 5 < 6", CATTN_INSUFFICIENT_SIZE, "args->restore_idx is too small", [](Restore& s) { s.out = out_tensor({5}, i32()); }, nullptr},
      {"decreasing", I, "args->cu_num_tokens decreases", [](Restore& s) { s.cu = in_tensor({0, 4, 2}, i64()); }, nullptr},
      {"out overlapping cu_num_tokens", I, "args->restore_idx overlaps an input", nullptr, [](Restore& s) {
         s.cu = in_tensor({0, 2, 4, 4}, i32());
         s.args->cu_num_tokens = s.cu.dl();
         s.args->restore_idx = s.overlap_view(s.cu, 1, {4});
       }},
      {"odd length", I, "odd length", [](Restore& s) { s.cu = in_tensor({0, 4, 9}, i32()); }, nullptr},
  };
  if (cpu_only_build())
    v.push_back({"both on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Restore& s) {
                   s.slots[0].t->device = {kDLCUDA, 0};
                   s.slots[1].t->device = {kDLCUDA, 0};
                 }});
  sweep<Restore>("cattn_get_pcp_query_restore_idx", structural<Restore>() + v);
}

// ------------------------------------------------------------------------------------------
// 4. Fused PCP Q/K/V select
struct Fused : Base {
  HostTensor q{{4, 2, 3}, dtype_bits(16)}, k{{8, 2, 3}, dtype_bits(16)}, v{{8, 2, 2}, dtype_bits(16)};
  HostTensor qsl = in_tensor({0, 2, 4}, i32());
  HostTensor outs[6] = {out_tensor({2, 2, 3}, dtype_bits(16)), out_tensor({2, 2, 3}, dtype_bits(16)),
                        out_tensor({2, 2, 2}, dtype_bits(16)), out_tensor({2, 2, 3}, dtype_bits(16)),
                        out_tensor({8, 2, 3}, dtype_bits(16)), out_tensor({8, 2, 2}, dtype_bits(16))};
  Guarded<cattn_fused_pcp_qkv_select_args_t> args{CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT};
  bool null_args = false;
  Fused() {
    tensors = {&q, &k, &v, &qsl, &outs[0], &outs[1], &outs[2], &outs[3], &outs[4], &outs[5]};
    structs = {&args.bytes()};
    for (HostTensor* t : {&q, &k, &v})
      for (int64_t i = 0; i < t->numel(); ++i) t->set(i, i);
    args->pcp_world_size = 2;
  }
  void wire() {
    cattn_fused_pcp_qkv_select_args_t* a = args.get();
    a->q = q.dl();
    a->k = k.dl();
    a->v = v.dl();
    a->query_start_loc = qsl.dl();
    DLTensor** o[6] = {&a->q_head, &a->k_head, &a->v_head, &a->q_tail, &a->k_tail, &a->v_tail};
    const char* names[6] = {"args->q_head", "args->k_head", "args->v_head", "args->q_tail", "args->k_tail", "args->v_tail"};
    for (int i = 0; i < 6; ++i) *o[i] = outs[i].dl();
    slots = {{"args->q", q.dl(), [a] { a->q = nullptr; }},
             {"args->k", k.dl(), [a] { a->k = nullptr; }},
             {"args->v", v.dl(), [a] { a->v = nullptr; }},
             {"args->query_start_loc", qsl.dl(), [a] { a->query_start_loc = nullptr; }}};
    for (int i = 0; i < 6; ++i) {
      DLTensor** field = o[i];
      slots.push_back({names[i], outs[i].dl(), [field] { *field = nullptr; }});
    }
  }
  cattn_status_t call() { return cattn_fused_pcp_qkv_select(null_args ? nullptr : args.get()); }
};

TEST(nothing_lost, FusedPcpQkvSelect) {
  using V = Variant<Fused>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Fused& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Fused& s) { s.args->struct_size = 16; }},
      {"q 2-D", I, "args->q has the wrong ndim", [](Fused& s) { s.q = HostTensor({4, 6}, dtype_bits(16)); }, nullptr},
      {"q strided last dim", I, "args->q has a non-unit stride in its last dim", [](Fused& s) { s.q = HostTensor({4, 2, 3}, dtype_bits(16), 2); }, nullptr},
      {"k with 3 heads", I, "args->k has the wrong size in dim 1", [](Fused& s) { s.k = HostTensor({8, 3, 3}, dtype_bits(16)); }, nullptr},
      {"query_start_loc empty", I, "args->query_start_loc is empty", [](Fused& s) { s.qsl = in_tensor({}, i32(), {0}); }, nullptr},
      {"query_start_loc float", I, "args->query_start_loc has the wrong dtype", nullptr, [](Fused& s) { s.slots[3].t->dtype = {kDLFloat, 32, 1}; }},
      {"world 0", I, "args->pcp_world_size is out of range", nullptr, [](Fused& s) { s.args->pcp_world_size = 0; }},
      {"rank 2 of 2", I, "args->pcp_rank is out of range", nullptr, [](Fused& s) { s.args->pcp_rank = 2; }},
      {"rank -1", I, "args->pcp_rank is out of range", nullptr, [](Fused& s) { s.args->pcp_rank = -1; }},
      {"world overflowing", I, "overflows int64", nullptr, [](Fused& s) { s.args->pcp_world_size = kI64Max; }},
      {"q_head 1 row", CATTN_INSUFFICIENT_SIZE, "args->q_head has the wrong size in dim 0", [](Fused& s) { s.outs[0] = out_tensor({1, 2, 3}, dtype_bits(16)); }, nullptr},
      {"k_tail 9 rows", I, "args->k_tail has the wrong size in dim 0", [](Fused& s) { s.outs[4] = out_tensor({9, 2, 3}, dtype_bits(16)); }, nullptr},
      {"v_head head size 3", I, "args->v_head has the wrong size in dim 2", [](Fused& s) { s.outs[2] = out_tensor({2, 2, 3}, dtype_bits(16)); }, nullptr},
      {"k_tail int16", I, "args->k_tail has the wrong dtype", nullptr, [](Fused& s) { s.args->k_tail->dtype = {kDLInt, 16, 1}; }},
      {"q_tail strided", I, "args->q_tail is not contiguous", [](Fused& s) { s.outs[3] = HostTensor({2, 2, 3}, dtype_bits(16), 2); }, nullptr},
      {"odd start", I, "args->query_start_loc has an odd entry", [](Fused& s) { s.qsl = in_tensor({0, 1, 4}, i32()); }, nullptr},
      {"negative start", I, "args->query_start_loc has a negative entry", [](Fused& s) { s.qsl = in_tensor({-2, 2, 4}, i32()); }, nullptr},
      {"decreasing", I, "args->query_start_loc decreases", [](Fused& s) { s.qsl = in_tensor({0, 4, 2}, i32()); }, nullptr},
      {"past the queries", I, "args->query_start_loc ends past the queries", [](Fused& s) { s.qsl = in_tensor({0, 2, 6}, i32()); }, nullptr},
      {"k too short", I, "args->k has too few rows for the batch", [](Fused& s) { s.k = HostTensor({6, 2, 3}, dtype_bits(16)); }, nullptr},
  };
  if (cpu_only_build())
    v.push_back({"every tensor on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Fused& s) {
                   for (Slot& x : s.slots) x.t->device = {kDLCUDA, 0};
                 }});
  sweep<Fused>("cattn_fused_pcp_qkv_select", structural<Fused>() + v);
}

// ------------------------------------------------------------------------------------------
// 5. PCP all-gather + restore, and the communicator calls. No communicator exists in these
// tests, so the valid call is one with tensors marked as device memory and a NULL comm; every
// variant breaks something that is checked before the communicator.
struct Allgather : Base {
  HostTensor key{{4, 2}, dtype_bits(16)}, value{{4, 3}, dtype_bits(16)};
  HostTensor idx = in_tensor({0, 1, 2}, i32());
  HostTensor key_out = out_tensor({3, 2}, dtype_bits(16)), value_out = out_tensor({3, 3}, dtype_bits(16));
  Guarded<cattn_pcp_kv_allgather_and_restore_args_t> args{CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT};
  Guarded<size_t> ws{77};
  bool null_args = false, null_size = false, query = false;
  Allgather() {
    tensors = {&key, &value, &idx, &key_out, &value_out};
    structs = {&args.bytes(), &ws.bytes()};
    args->num_actual_tokens = 4;
  }
  void wire() {
    cattn_pcp_kv_allgather_and_restore_args_t* a = args.get();
    a->key = key.dl();
    a->value = value.dl();
    a->restore_idx = idx.dl();
    a->key_out = key_out.dl();
    a->value_out = value_out.dl();
    for (HostTensor* t : tensors) t->dl()->device = {kDLCUDA, 0};  // never launched: comm is NULL
    slots = {{"args->key", key.dl(), [a] { a->key = nullptr; }, false},
             {"args->value", value.dl(), [a] { a->value = nullptr; }, false},
             {"args->restore_idx", idx.dl(), [a] { a->restore_idx = nullptr; }, false},
             {"args->key_out", key_out.dl(), [a] { a->key_out = nullptr; }, false},
             {"args->value_out", value_out.dl(), [a] { a->value_out = nullptr; }, false}};
    for (HostTensor* t : tensors) t->dl()->device = {kDLCUDA, 0};
  }
  cattn_status_t call() {
    if (query)
      return cattn_pcp_kv_allgather_and_restore_workspace_size(null_args ? nullptr : args.get(),
                                                               null_size ? nullptr : ws.get());
    return cattn_pcp_kv_allgather_and_restore(null_args ? nullptr : args.get());
  }
};
struct AllgatherQuery : Allgather {
  AllgatherQuery() { query = true; }
};

TEST(nothing_lost, PcpKvAllgatherAndRestore) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<AllgatherQuery>;
    std::vector<V> v = {
        {"NULL args", I, "args is NULL", [](AllgatherQuery& s) { s.null_args = true; }, nullptr},
        {"small struct_size", I, "args has struct_size too small", nullptr, [](AllgatherQuery& s) { s.args->struct_size = 8; }},
        {"size NULL", I, "size is NULL", [](AllgatherQuery& s) { s.null_size = true; }, nullptr},
        {"key NULL", I, "args->key is NULL", nullptr, [](AllgatherQuery& s) { s.args->key = nullptr; }},
        {"value 7-bit", CATTN_NOT_SUPPORTED, "args->value has an unsupported dtype", nullptr, [](AllgatherQuery& s) { s.slots[1].t->dtype.bits = 7; }},
        {"key 0-D", I, "args->key has no token dimension", nullptr, [](AllgatherQuery& s) { s.slots[0].t->ndim = 0; }},
        {"value rows differ", I, "args->value has the wrong size in dim 0", [](AllgatherQuery& s) { s.value = HostTensor({5, 3}, dtype_bits(16)); }, nullptr},
        {"num_actual_tokens 5", I, "args->num_actual_tokens is out of range", nullptr, [](AllgatherQuery& s) { s.args->num_actual_tokens = 5; }},
        {"num_actual_tokens -1", I, "args->num_actual_tokens is out of range", nullptr, [](AllgatherQuery& s) { s.args->num_actual_tokens = -1; }},
    };
    sweep<AllgatherQuery>("cattn_pcp_kv_allgather_and_restore_workspace_size", v, I, "args->comm is NULL");
  }
  using V = Variant<Allgather>;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Allgather& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Allgather& s) { s.args->struct_size = 8; }},
      {"restore_idx 2-D", I, "args->restore_idx has the wrong ndim", [](Allgather& s) { s.idx = in_tensor({0, 1, 2, 3}, i32(), {2, 2}); }, nullptr},
      {"restore_idx float", I, "args->restore_idx has the wrong dtype", nullptr, [](Allgather& s) { s.slots[2].t->dtype = {kDLFloat, 32, 1}; }},
      {"key_out 2 rows", CATTN_INSUFFICIENT_SIZE, "args->key_out has the wrong size in dim 0", [](Allgather& s) { s.key_out = out_tensor({2, 2}, dtype_bits(16)); }, nullptr},
      {"value_out 4 rows", I, "args->value_out has the wrong size in dim 0", [](Allgather& s) { s.value_out = out_tensor({4, 3}, dtype_bits(16)); }, nullptr},
      {"key_out trailing dim", I, "args->key_out has the wrong size in dim 1", [](Allgather& s) { s.key_out = out_tensor({3, 3}, dtype_bits(16)); }, nullptr},
      {"value_out 1-D", I, "args->value_out has the wrong ndim", [](Allgather& s) { s.value_out = out_tensor({9}, dtype_bits(16)); }, nullptr},
      {"key_out dtype", I, "args->key_out has the wrong dtype", nullptr, [](Allgather& s) { s.slots[3].t->dtype = {kDLInt, 16, 1}; }},
      {"key_out strided", I, "args->key_out is not contiguous", [](Allgather& s) { s.key_out = HostTensor({3, 2}, dtype_bits(16), 2); }, nullptr},
      {"value on another GPU", I, "args->value is on a different device", nullptr, [](Allgather& s) { s.slots[1].t->device = {kDLCUDA, 1}; }},
      {"host tensors", CATTN_NOT_SUPPORTED, "args->key is host memory", nullptr, [](Allgather& s) {
         for (Slot& x : s.slots) x.t->device = {kDLCPU, 0};
       }},
  };
  sweep<Allgather>("cattn_pcp_kv_allgather_and_restore", v, I, "args->comm is NULL");
}

TEST(nothing_lost, CommunicatorCalls) {
  auto expect = [](cattn_status_t st, cattn_status_t code, const char* fn, const char* needle) {
    const std::string msg = cattn_last_error_message();
    EXPECT_EQ(st, code) << fn << ": " << msg;
    EXPECT_NE(msg.find(fn), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    ++g_variants;
  };
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  Guarded<cattn_comm_unique_id_t> id;
  Guarded<cattn_comm_t*> out;
  Guarded<int32_t> value{-5};
  const auto id0 = id.bytes(), out0 = out.bytes(), value0 = value.bytes();
  expect(cattn_comm_get_unique_id(nullptr), I, "cattn_comm_get_unique_id", "id is NULL");
  expect(cattn_comm_create(nullptr, 1, 0, 0, out.get()), I, "cattn_comm_create", "id is NULL");
  expect(cattn_comm_create(id.get(), 1, 0, 0, nullptr), I, "cattn_comm_create", "out is NULL");
  expect(cattn_comm_create(id.get(), 0, 0, 0, out.get()), I, "cattn_comm_create", "nranks is out of range");
  expect(cattn_comm_create(id.get(), 2, 2, 0, out.get()), I, "cattn_comm_create", "rank is out of range");
  expect(cattn_comm_create(id.get(), 2, -1, 0, out.get()), I, "cattn_comm_create", "rank is out of range");
  expect(cattn_comm_create(id.get(), 2, 1, -1, out.get()), I, "cattn_comm_create", "cuda_device is negative");
  int token = 0;  // stands for an ncclComm_t; never reached past the NULL checks
  expect(cattn_comm_create_borrowed(nullptr, out.get()), I, "cattn_comm_create_borrowed", "nccl_comm is NULL");
  expect(cattn_comm_create_borrowed(&token, nullptr), I, "cattn_comm_create_borrowed", "out is NULL");
  expect(cattn_comm_get_rank(nullptr, value.get()), I, "cattn_comm_get_rank", "comm is NULL");
  expect(cattn_comm_get_size(nullptr, value.get()), I, "cattn_comm_get_size", "comm is NULL");
  if (cpu_only_build()) {
    // Well-formed calls that a CPU-only build cannot serve; the handle is never looked at.
    auto* fake = reinterpret_cast<cattn_comm_t*>(&token);
    expect(cattn_comm_get_unique_id(id.get()), CATTN_NOT_SUPPORTED, "cattn_comm_get_unique_id", "CPU-only");
    expect(cattn_comm_create(id.get(), 2, 1, 0, out.get()), CATTN_NOT_SUPPORTED, "cattn_comm_create", "CPU-only");
    expect(cattn_comm_create_borrowed(&token, out.get()), CATTN_NOT_SUPPORTED, "cattn_comm_create_borrowed", "CPU-only");
    expect(cattn_comm_get_rank(fake, nullptr), I, "cattn_comm_get_rank", "rank is NULL");
    expect(cattn_comm_get_size(fake, nullptr), I, "cattn_comm_get_size", "size is NULL");
    expect(cattn_comm_get_rank(fake, value.get()), CATTN_NOT_SUPPORTED, "cattn_comm_get_rank", "CPU-only");
    expect(cattn_comm_get_size(fake, value.get()), CATTN_NOT_SUPPORTED, "cattn_comm_get_size", "CPU-only");
    cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
    HostTensor key({4, 2}, dtype_bits(16)), val({4, 2}, dtype_bits(16));
    a.key = key.dl();
    a.value = val.dl();
    a.comm = fake;
    Guarded<size_t> ws{9};
    const auto ws0 = ws.bytes();
    expect(cattn_pcp_kv_allgather_and_restore_workspace_size(&a, ws.get()), CATTN_NOT_SUPPORTED,
           "cattn_pcp_kv_allgather_and_restore_workspace_size", "CPU-only");
    EXPECT_EQ(ws.bytes(), ws0);
  }
  cattn_comm_destroy(nullptr);
  EXPECT_EQ(id.bytes(), id0);
  EXPECT_EQ(out.bytes(), out0);
  EXPECT_EQ(value.bytes(), value0);
}

// ------------------------------------------------------------------------------------------
// 6. Causal-conv1d metadata and its size
struct ConvSize : Base {
  HostTensor q = in_tensor({0, 5, 5, 20}, i32());
  Guarded<int64_t> tot{-3}, cap{-4};
  int64_t block_m = 4;
  const DLTensor* q_p = nullptr;
  ConvSize() {
    tensors = {&q};
    structs = {&tot.bytes(), &cap.bytes()};
  }
  void wire() {
    q_p = q.dl();
    slots = {{"query_start_loc_cpu", q.dl(), [this] { q_p = nullptr; }}};
  }
  cattn_status_t call() {
    return cattn_compute_causal_conv1d_metadata_size(q_p, block_m, tot.get(), cap.get());
  }
};

struct Conv : Base {
  HostTensor q = in_tensor({0, 5, 5, 20}, i32());
  HostTensor outs[5] = {out_tensor({3}, i32()), out_tensor({6}, i64()), out_tensor({6}, i32()),
                        out_tensor({10}, i64()), out_tensor({10}, i32())};
  Guarded<cattn_causal_conv1d_metadata_args_t> args{CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT};
  bool null_args = false;
  Conv() {
    tensors = {&q, &outs[0], &outs[1], &outs[2], &outs[3], &outs[4]};
    structs = {&args.bytes()};
    args->block_m = 4;
    args->tot = -9;
  }
  void wire() {
    cattn_causal_conv1d_metadata_args_t* a = args.get();
    a->query_start_loc_cpu = q.dl();
    DLTensor** o[5] = {&a->nums, &a->mlist, &a->offsetlist, &a->batch_ptr, &a->token_chunk_offset_ptr};
    const char* names[5] = {"args->nums", "args->mlist", "args->offsetlist", "args->batch_ptr", "args->token_chunk_offset_ptr"};
    slots = {{"args->query_start_loc_cpu", q.dl(), [a] { a->query_start_loc_cpu = nullptr; }, false}};
    for (int i = 0; i < 5; ++i) {
      *o[i] = outs[i].dl();
      slots.push_back({names[i], outs[i].dl(), nullptr});  // every output is optional
    }
  }
  cattn_status_t call() { return cattn_compute_causal_conv1d_metadata(null_args ? nullptr : args.get()); }
};

TEST(nothing_lost, ComputeCausalConv1dMetadata) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<ConvSize>;
    std::vector<V> v = {
        {"2-D", I, "query_start_loc_cpu has the wrong ndim", [](ConvSize& s) { s.q = in_tensor({0, 5, 5, 20}, i32(), {2, 2}); }, nullptr},
        {"float", I, "query_start_loc_cpu has the wrong dtype", nullptr, [](ConvSize& s) { s.slots[0].t->dtype = {kDLFloat, 32, 1}; }},
        {"on a GPU", I, "query_start_loc_cpu is not host memory", nullptr, [](ConvSize& s) { s.slots[0].t->device = {kDLCUDA, 0}; }},
        {"block_m 0", I, "block_m is out of range", [](ConvSize& s) { s.block_m = 0; }, nullptr},
        {"block_m -3", I, "block_m is out of range", [](ConvSize& s) { s.block_m = -3; }, nullptr},
        {"decreasing", I, "query_start_loc_cpu decreases", [](ConvSize& s) { s.q = in_tensor({0, 5, 4}, i32()); }, nullptr},
        {"length past int64", I, "overflows int64", [](ConvSize& s) { s.q = in_tensor({kI64Min, kI64Max}, i64()); }, nullptr},
        {"programs past int64", I, "the number of programs overflows int64", [](ConvSize& s) {
           s.q = in_tensor({-kI64Max, 0, kI64Max}, i64());
           s.block_m = 1;
         }, nullptr},
        {"capacity past int64", I, "needs too many programs", [](ConvSize& s) {
           s.q = in_tensor({0, kI64Max}, i64());
           s.block_m = 1;
         }, nullptr},
    };
    auto st = structural<ConvSize>();
    st.erase(std::remove_if(st.begin(), st.end(), [](const V& x) { return x.what == "query_start_loc_cpu alone on a GPU"; }), st.end());
    sweep<ConvSize>("cattn_compute_causal_conv1d_metadata_size", st + v);
  }
  using V = Variant<Conv>;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Conv& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Conv& s) { s.args->struct_size = 8; }},
      {"query_start_loc_cpu on a GPU", I, "args->query_start_loc_cpu is not host memory", nullptr, [](Conv& s) { s.slots[0].t->device = {kDLCUDA, 0}; }},
      {"block_m 0", I, "block_m is out of range", nullptr, [](Conv& s) { s.args->block_m = 0; }},
      {"nums [2]", CATTN_INSUFFICIENT_SIZE, "args->nums has the wrong size in dim 0", [](Conv& s) { s.outs[0] = out_tensor({2}, i32()); }, nullptr},
      {"nums [4]", I, "args->nums has the wrong size in dim 0", [](Conv& s) { s.outs[0] = out_tensor({4}, i32()); }, nullptr},
      {"mlist [5]", CATTN_INSUFFICIENT_SIZE, "args->mlist is too small", [](Conv& s) { s.outs[1] = out_tensor({5}, i64()); }, nullptr},
      {"token_chunk_offset_ptr [5]", CATTN_INSUFFICIENT_SIZE, "args->token_chunk_offset_ptr is too small", [](Conv& s) { s.outs[4] = out_tensor({5}, i32()); }, nullptr},
      {"offsetlist 2-D", I, "args->offsetlist has the wrong ndim", [](Conv& s) { s.outs[2] = out_tensor({3, 2}, i32()); }, nullptr},
      {"batch_ptr float", I, "args->batch_ptr has the wrong dtype", nullptr, [](Conv& s) { s.slots[4].t->dtype = {kDLFloat, 64, 1}; }},
      {"mlist zero stride", I, "args->mlist is an output with a zero stride", nullptr, [](Conv& s) {
         s.scratch_strides = {0};
         s.slots[2].t->strides = s.scratch_strides.data();
       }},
      {"decreasing", I, "args->query_start_loc_cpu decreases", [](Conv& s) { s.q = in_tensor({0, 5, 4, 20}, i32()); }, nullptr},
      {"mlist overlapping query_start_loc_cpu", I, "args->mlist overlaps an input", nullptr, [](Conv& s) {
         s.args->mlist = s.overlap_view(s.q, 2, {6});
       }},
      {"batch_ptr overlapping nums", I, "args->batch_ptr overlaps another output", nullptr, [](Conv& s) {
         s.args->batch_ptr = s.overlap_view(s.outs[0], 1, {6});
       }},
      {"programs past 2^62 (the size query refuses them too)", I, "needs too many programs", [](Conv& s) {
         s.q = in_tensor({0, kI64Max}, i64());
       }, [](Conv& s) {
         s.args->block_m = 1;
         s.args->nums = s.args->mlist = s.args->offsetlist = s.args->batch_ptr = s.args->token_chunk_offset_ptr = nullptr;
       }},
      {"nums value past int32", I, "args->nums cannot hold a result value", [](Conv& s) {
         s.q = in_tensor({0, int64_t{1} << 35}, i64());
         s.outs[0] = out_tensor({1}, i32());
       }, [](Conv& s) {
         s.args->block_m = 1;
         s.args->mlist = s.args->offsetlist = s.args->batch_ptr = s.args->token_chunk_offset_ptr = nullptr;
       }},
  };
  if (cpu_only_build())
    v.push_back({"every output on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Conv& s) {
                   for (size_t i = 1; i < s.slots.size(); ++i) s.slots[i].t->device = {kDLCUDA, 0};
                 }});
  sweep<Conv>("cattn_compute_causal_conv1d_metadata", structural<Conv>() + v);
}

// ------------------------------------------------------------------------------------------
// 7. Extend queries
struct Extend : Base {
  HostTensor qsl = in_tensor({0, 3, 7}, i64()), seq = in_tensor({5, 9}, i32());
  HostTensor qsl_cpu = in_tensor({0, 3, 7}, i32()), seq_cpu = in_tensor({5, 9}, i64());
  HostTensor slot_map = in_tensor({1, 2, 3, 4}, i64());
  HostTensor o_qsl = out_tensor({3}, i64()), o_seq = out_tensor({2}, i64());
  HostTensor o_qsl_cpu = out_tensor({3}, i32()), o_seq_cpu = out_tensor({2}, i64());
  Guarded<cattn_common_attn_metadata_t> in{CATTN_COMMON_ATTN_METADATA_INIT}, out{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_extend_all_queries_by_n_args_t> args{CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT};
  bool null_args = false;
  Extend() {
    tensors = {&qsl, &seq, &qsl_cpu, &seq_cpu, &slot_map, &o_qsl, &o_seq, &o_qsl_cpu, &o_seq_cpu};
    structs = {&in.bytes(), &out.bytes(), &args.bytes()};
    in->num_reqs = 2;
    in->num_actual_tokens = 7;
    in->max_query_len = 4;
    in->max_seq_len = 9;
    args->n = 2;
  }
  void wire() {
    in->query_start_loc = qsl.dl();
    in->seq_lens = seq.dl();
    in->query_start_loc_cpu = qsl_cpu.dl();
    in->seq_lens_cpu = seq_cpu.dl();
    out->query_start_loc = o_qsl.dl();
    out->seq_lens = o_seq.dl();
    out->query_start_loc_cpu = o_qsl_cpu.dl();
    out->seq_lens_cpu = o_seq_cpu.dl();
    args->metadata = in.get();
    args->out = out.get();
    args->new_slot_mapping = slot_map.dl();
    cattn_common_attn_metadata_t* i = in.get();
    cattn_common_attn_metadata_t* o = out.get();
    cattn_extend_all_queries_by_n_args_t* a = args.get();
    // Mirrors come in pairs, so a NULL one is an error only on one side (tested below).
    slots = {{"args->metadata->query_start_loc", qsl.dl(), [i] { i->query_start_loc = nullptr; }},
             {"args->metadata->seq_lens", seq.dl(), [i] { i->seq_lens = nullptr; }},
             {"args->metadata->query_start_loc_cpu", qsl_cpu.dl(), nullptr, false},
             {"args->metadata->seq_lens_cpu", seq_cpu.dl(), nullptr, false},
             {"args->new_slot_mapping", slot_map.dl(), nullptr},
             {"args->out->query_start_loc", o_qsl.dl(), [o] { o->query_start_loc = nullptr; }},
             {"args->out->seq_lens", o_seq.dl(), [o] { o->seq_lens = nullptr; }},
             {"args->out->query_start_loc_cpu", o_qsl_cpu.dl(), [o] { o->query_start_loc_cpu = nullptr; }, false},
             {"args->out->seq_lens_cpu", o_seq_cpu.dl(), [o] { o->seq_lens_cpu = nullptr; }, false}};
    (void)a;
  }
  cattn_status_t call() { return cattn_extend_all_queries_by_n(null_args ? nullptr : args.get()); }
};

TEST(nothing_lost, ExtendAllQueriesByN) {
  using V = Variant<Extend>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Extend& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Extend& s) { s.args->struct_size = 8; }},
      {"NULL metadata", I, "args->metadata is NULL", nullptr, [](Extend& s) { s.args->metadata = nullptr; }},
      {"metadata struct_size", I, "args->metadata has struct_size too small", nullptr, [](Extend& s) { s.in->struct_size = 64; }},
      {"NULL out", I, "args->out is NULL", nullptr, [](Extend& s) { s.args->out = nullptr; }},
      {"out struct_size", I, "args->out has struct_size too small", nullptr, [](Extend& s) { s.out->struct_size = 0; }},
      {"n -1", I, "args->n is negative", nullptr, [](Extend& s) { s.args->n = -1; }},
      {"seq_lens 2-D", I, "args->metadata->seq_lens has the wrong ndim", [](Extend& s) { s.seq = in_tensor({5, 9}, i32(), {1, 2}); }, nullptr},
      {"query_start_loc of 4", I, "args->metadata->query_start_loc has the wrong size in dim 0", [](Extend& s) { s.qsl = in_tensor({0, 3, 7, 9}, i64()); }, nullptr},
      {"query_start_loc float", I, "args->metadata->query_start_loc has the wrong dtype", nullptr, [](Extend& s) { s.in->query_start_loc->dtype = {kDLFloat, 64, 1}; }},
      {"out seq_lens [1]", CATTN_INSUFFICIENT_SIZE, "args->out->seq_lens has the wrong size", [](Extend& s) { s.o_seq = out_tensor({1}, i64()); }, nullptr},
      {"out seq_lens [3]", I, "args->out->seq_lens has the wrong size", [](Extend& s) { s.o_seq = out_tensor({3}, i64()); }, nullptr},
      {"out query_start_loc zero stride", I, "args->out->query_start_loc is an output with a zero stride", nullptr, [](Extend& s) {
         s.scratch_strides = {0};
         s.out->query_start_loc->strides = s.scratch_strides.data();
       }},
      {"mirror output missing", I, "args->out->query_start_loc_cpu is NULL", nullptr, [](Extend& s) { s.out->query_start_loc_cpu = nullptr; }},
      {"mirror output without input", I, "args->out->seq_lens_cpu is set without a source", nullptr, [](Extend& s) { s.in->seq_lens_cpu = nullptr; }},
      {"mirror of 3", I, "args->metadata->seq_lens_cpu has the wrong size", [](Extend& s) { s.seq_cpu = in_tensor({5, 9, 1}, i64()); }, nullptr},
      {"mirror on a GPU", I, "args->metadata->query_start_loc_cpu is not host memory", nullptr, [](Extend& s) { s.in->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
      {"mirror output on a GPU", I, "args->out->seq_lens_cpu is not host memory", nullptr, [](Extend& s) { s.out->seq_lens_cpu->device = {kDLCUDA, 0}; }},
      {"slot mapping 2-D", I, "args->new_slot_mapping has the wrong ndim", [](Extend& s) { s.slot_map = in_tensor({1, 2, 3, 4}, i64(), {2, 2}); }, nullptr},
      {"out seq_lens overlapping seq_lens", I, "args->out->seq_lens overlaps an input", nullptr, [](Extend& s) { s.out->seq_lens = s.overlap_view(s.seq, 1, {2}); }},
      {"out query_start_loc overlapping seq_lens_cpu", I, "args->out->query_start_loc overlaps an input", nullptr, [](Extend& s) {
         s.out->query_start_loc = s.overlap_view(s.seq_cpu, 0, {3});
         s.out->query_start_loc->dtype = i64();
       }},
      {"num_actual_tokens overflowing", I, "num_actual_tokens + n * B overflows int64", nullptr, [](Extend& s) { s.in->num_actual_tokens = kI64Max; }},
      {"max_query_len overflowing", I, "max_query_len + n overflows int64", nullptr, [](Extend& s) { s.in->max_query_len = kI64Max - 1; }},
      {"max_seq_len overflowing", I, "max_seq_len + n overflows int64", nullptr, [](Extend& s) { s.in->max_seq_len = kI64Max; }},
      {"n x B overflowing", I, "n * B overflows int64", nullptr, [](Extend& s) { s.args->n = kI64Max; }},
      {"seq_lens value overflowing", I, "args->metadata->seq_lens gives a result that overflows int64", [](Extend& s) {
         s.seq = in_tensor({5, kI64Max - 1}, i64());
         s.seq_cpu = in_tensor({5, kI64Max - 1}, i64());
       }, nullptr},
      {"value past an int32 output", I, "args->out->query_start_loc_cpu cannot hold a result value", [](Extend& s) {
         s.qsl = in_tensor({0, 3, std::numeric_limits<int32_t>::max()}, i64());
         s.qsl_cpu = in_tensor({0, 3, std::numeric_limits<int32_t>::max()}, i64());
       }, nullptr},
      {"mirror disagreeing", I, "args->metadata->seq_lens_cpu disagrees with its device tensor", [](Extend& s) { s.seq_cpu = in_tensor({5, 8}, i64()); }, nullptr},
      {"out seq_lens over out query_start_loc", I, "args->out->seq_lens overlaps another output", nullptr, [](Extend& s) {
         s.out->seq_lens = s.overlap_view(s.o_qsl, 1, {2});
         s.out->seq_lens->dtype = i64();
       }},
  };
  if (cpu_only_build())
    v.push_back({"main tensors on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Extend& s) {
                   for (const char* n : {"args->metadata->query_start_loc", "args->metadata->seq_lens", "args->new_slot_mapping",
                                         "args->out->query_start_loc", "args->out->seq_lens"})
                     s.slot(n)->device = {kDLCUDA, 0};
                 }});
  sweep<Extend>("cattn_extend_all_queries_by_n", structural<Extend>() + v);
}

// ------------------------------------------------------------------------------------------
// 8. KV-sharing fast prefill
struct FastPrefill : Base {
  HostTensor qsl = in_tensor({0, 3, 7, 12}, i64()), logits = in_tensor({2, 6, 11, 0}, i32());
  HostTensor o_qsl = out_tensor({4}, i32()), o_qsl_cpu = out_tensor({4}, i64()), max_total = out_tensor({2}, i64());
  Guarded<cattn_common_attn_metadata_t> in{CATTN_COMMON_ATTN_METADATA_INIT}, out{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_fast_prefill_metadata_args_t> args{CATTN_FAST_PREFILL_METADATA_ARGS_INIT};
  bool null_args = false;
  FastPrefill() {
    tensors = {&qsl, &logits, &o_qsl, &o_qsl_cpu, &max_total};
    structs = {&in.bytes(), &out.bytes(), &args.bytes()};
    in->num_reqs = 3;
    in->max_query_len = 5;
    in->num_logits_indices = 3;
    args->passthrough = 9;
  }
  void wire() {
    in->query_start_loc = qsl.dl();
    in->logits_indices_padded = logits.dl();
    out->query_start_loc = o_qsl.dl();
    out->query_start_loc_cpu = o_qsl_cpu.dl();
    args->metadata = in.get();
    args->out = out.get();
    args->decode_max_and_total = max_total.dl();
    cattn_common_attn_metadata_t* i = in.get();
    cattn_common_attn_metadata_t* o = out.get();
    slots = {{"args->metadata->logits_indices_padded", logits.dl(), [i] { i->logits_indices_padded = nullptr; }},
             {"args->metadata->query_start_loc", qsl.dl(), [i] { i->query_start_loc = nullptr; }},
             {"args->out->query_start_loc", o_qsl.dl(), [o] { o->query_start_loc = nullptr; }},
             {"args->out->query_start_loc_cpu", o_qsl_cpu.dl(), nullptr, false},
             {"args->decode_max_and_total", max_total.dl(), nullptr}};
  }
  cattn_status_t call() {
    return cattn_make_kv_sharing_fast_prefill_common_attn_metadata(null_args ? nullptr : args.get());
  }
};

TEST(nothing_lost, MakeKvSharingFastPrefillCommonAttnMetadata) {
  using V = Variant<FastPrefill>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](FastPrefill& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](FastPrefill& s) { s.args->struct_size = 8; }},
      {"NULL metadata", I, "args->metadata is NULL", nullptr, [](FastPrefill& s) { s.args->metadata = nullptr; }},
      {"metadata struct_size", I, "args->metadata has struct_size too small", nullptr, [](FastPrefill& s) { s.in->struct_size = 8; }},
      {"NULL out", I, "args->out is NULL", nullptr, [](FastPrefill& s) { s.args->out = nullptr; }},
      {"out struct_size", I, "args->out has struct_size too small", nullptr, [](FastPrefill& s) { s.out->struct_size = 8; }},
      {"count -1", I, "args->metadata->num_logits_indices is out of range", nullptr, [](FastPrefill& s) { s.in->num_logits_indices = -1; }},
      {"count 5", I, "args->metadata->num_logits_indices is out of range", nullptr, [](FastPrefill& s) { s.in->num_logits_indices = 5; }},
      {"num_reqs 0", I, "args->metadata->num_reqs is not positive", nullptr, [](FastPrefill& s) { s.in->num_reqs = 0; }},
      {"num_reqs 4", I, "args->metadata->query_start_loc has the wrong size", nullptr, [](FastPrefill& s) { s.in->num_reqs = 4; }},
      {"num_reqs INT64_MAX", I, "num_reqs + 1 overflows int64", nullptr, [](FastPrefill& s) { s.in->num_reqs = kI64Max; }},
      {"logits 2-D", I, "args->metadata->logits_indices_padded has the wrong ndim", [](FastPrefill& s) { s.logits = in_tensor({2, 6, 11, 0}, i32(), {2, 2}); }, nullptr},
      {"out query_start_loc [3]", CATTN_INSUFFICIENT_SIZE, "args->out->query_start_loc has the wrong size", [](FastPrefill& s) { s.o_qsl = out_tensor({3}, i32()); }, nullptr},
      {"out query_start_loc [5]", I, "args->out->query_start_loc has the wrong size", [](FastPrefill& s) { s.o_qsl = out_tensor({5}, i32()); }, nullptr},
      {"mirror on a GPU", I, "args->out->query_start_loc_cpu is not host memory", nullptr, [](FastPrefill& s) { s.out->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
      {"decode_max_and_total [1]", CATTN_INSUFFICIENT_SIZE, "args->decode_max_and_total has the wrong size", [](FastPrefill& s) { s.max_total = out_tensor({1}, i64()); }, nullptr},
      {"decode_max_and_total [3]", I, "args->decode_max_and_total has the wrong size", [](FastPrefill& s) { s.max_total = out_tensor({3}, i64()); }, nullptr},
      {"decode_max_and_total uint8", I, "args->decode_max_and_total has the wrong dtype", nullptr, [](FastPrefill& s) { s.args->decode_max_and_total->dtype = {kDLUInt, 64, 1}; }},
      {"out overlapping query_start_loc", I, "args->out->query_start_loc overlaps an input", nullptr, [](FastPrefill& s) {
         s.out->query_start_loc = s.overlap_view(s.qsl, 1, {4});
       }},
      {"decreasing", I, "args->metadata->query_start_loc decreases", [](FastPrefill& s) { s.qsl = in_tensor({0, 3, 2, 12}, i64()); }, nullptr},
      {"index past the last request", I, "args->metadata->logits_indices_padded holds an index past the last request", [](FastPrefill& s) { s.logits = in_tensor({2, 12, 11, 0}, i32()); }, nullptr},
      {"device tensors without decode_max_and_total", I, "args->decode_max_and_total is NULL", nullptr, [](FastPrefill& s) {
         s.args->decode_max_and_total = nullptr;
         for (const char* n : {"args->metadata->logits_indices_padded", "args->metadata->query_start_loc", "args->out->query_start_loc"})
           s.slot(n)->device = {kDLCUDA, 0};
       }},
      {"device tensors with a host mirror", I, "args->out->query_start_loc_cpu is set with CUDA tensors", nullptr, [](FastPrefill& s) {
         for (const char* n : {"args->metadata->logits_indices_padded", "args->metadata->query_start_loc", "args->out->query_start_loc",
                               "args->decode_max_and_total"})
           s.slot(n)->device = {kDLCUDA, 0};
       }},
  };
  if (cpu_only_build())
    v.push_back({"device tensors", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](FastPrefill& s) {
                   s.out->query_start_loc_cpu = nullptr;
                   for (const char* n : {"args->metadata->logits_indices_padded", "args->metadata->query_start_loc",
                                         "args->out->query_start_loc", "args->decode_max_and_total"})
                     s.slot(n)->device = {kDLCUDA, 0};
                 }});
  sweep<FastPrefill>("cattn_make_kv_sharing_fast_prefill_common_attn_metadata", structural<FastPrefill>() + v);
}

// ------------------------------------------------------------------------------------------
// 9. Local-attention virtual batches: the plan, its shape, fill, make_block_table
struct LocalMake : Base {
  HostTensor qsl = in_tensor({0, 3, 10}, i32()), seq = in_tensor({7, 12}, i64());
  HostTensor table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i32(), {2, 4});
  Guarded<cattn_common_attn_metadata_t> md{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_local_attention_args_t> args{CATTN_LOCAL_ATTENTION_ARGS_INIT};
  bool null_args = false;
  LocalMake() {
    tensors = {&qsl, &seq, &table};
    structs = {&md.bytes(), &args.bytes()};
    args->attn_chunk_size = 4;
    args->block_size = 2;
    md->num_actual_tokens = 10;
  }
  void wire() {
    md->query_start_loc_cpu = qsl.dl();
    md->seq_lens_cpu = seq.dl();
    md->block_table_tensor = table.dl();
    args->metadata = md.get();
    cattn_common_attn_metadata_t* m = md.get();
    slots = {{"args->metadata->query_start_loc_cpu", qsl.dl(), [m] { m->query_start_loc_cpu = nullptr; }, false},
             {"args->metadata->seq_lens_cpu", seq.dl(), [m] { m->seq_lens_cpu = nullptr; }, false},
             {"args->metadata->block_table_tensor", table.dl(), [m] { m->block_table_tensor = nullptr; }, false}};
  }
  cattn_status_t call() {
    const cattn_status_t s = cattn_make_local_attention_virtual_batches(null_args ? nullptr : args.get());
    if (s == CATTN_OK) cattn_local_attention_plan_destroy(args->plan);
    return s;
  }
};

// A plan of the batch above (3 virtual batches of 2 pages) for the calls that use one.
struct PlanHolder {
  cattn_local_attention_plan_t* plan = nullptr;
  PlanHolder() {
    LocalMake m;
    m.wire();
    EXPECT_CATTN_OK(cattn_make_local_attention_virtual_batches(m.args.get()));
    plan = m.args->plan;
  }
  ~PlanHolder() { cattn_local_attention_plan_destroy(plan); }
};

struct LocalShape : Base {
  PlanHolder holder;
  Guarded<int64_t> v{-1}, p{-1};
  bool null_plan = false;
  LocalShape() { structs = {&v.bytes(), &p.bytes()}; }
  void wire() {}
  cattn_status_t call() {
    return cattn_local_attention_plan_get_shape(null_plan ? nullptr : holder.plan, v.get(), p.get());
  }
};

struct LocalFill : Base {
  PlanHolder holder;
  HostTensor table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i32(), {2, 4}), slots_in = in_tensor({4, 5}, i64());
  HostTensor o_qsl_cpu = out_tensor({4}, i64()), o_seq_cpu = out_tensor({3}, i32()), o_comp = out_tensor({3}, i64());
  HostTensor o_table = out_tensor({3, 2}, i32()), o_qsl = out_tensor({4}, i32()), o_seq = out_tensor({3}, i64());
  Guarded<cattn_common_attn_metadata_t> md{CATTN_COMMON_ATTN_METADATA_INIT}, out{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_local_attention_fill_args_t> args{CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT};
  bool null_args = false, null_plan = false;
  LocalFill() {
    tensors = {&table, &slots_in, &o_qsl_cpu, &o_seq_cpu, &o_comp, &o_table, &o_qsl, &o_seq};
    structs = {&md.bytes(), &out.bytes(), &args.bytes()};
  }
  void wire() {
    md->block_table_tensor = table.dl();
    md->slot_mapping = slots_in.dl();
    out->query_start_loc_cpu = o_qsl_cpu.dl();
    out->seq_lens_cpu = o_seq_cpu.dl();
    out->num_computed_tokens_cpu = o_comp.dl();
    out->block_table_tensor = o_table.dl();
    out->query_start_loc = o_qsl.dl();
    out->seq_lens = o_seq.dl();
    args->metadata = md.get();
    args->out = out.get();
    cattn_common_attn_metadata_t* m = md.get();
    cattn_common_attn_metadata_t* o = out.get();
    slots = {{"args->metadata->block_table_tensor", table.dl(), [m] { m->block_table_tensor = nullptr; }},
             {"args->metadata->slot_mapping", slots_in.dl(), nullptr},
             {"args->out->query_start_loc_cpu", o_qsl_cpu.dl(), [o] { o->query_start_loc_cpu = nullptr; }, false},
             {"args->out->seq_lens_cpu", o_seq_cpu.dl(), [o] { o->seq_lens_cpu = nullptr; }, false},
             {"args->out->num_computed_tokens_cpu", o_comp.dl(), [o] { o->num_computed_tokens_cpu = nullptr; }, false},
             {"args->out->block_table_tensor", o_table.dl(), [o] { o->block_table_tensor = nullptr; }},
             {"args->out->query_start_loc", o_qsl.dl(), nullptr},
             {"args->out->seq_lens", o_seq.dl(), nullptr}};
  }
  cattn_status_t call() {
    return cattn_local_attention_plan_fill(null_plan ? nullptr : holder.plan, null_args ? nullptr : args.get());
  }
};

struct LocalGather : Base {
  PlanHolder holder;
  HostTensor table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i64(), {2, 4}), out = out_tensor({3, 2}, i64());
  const DLTensor* table_p = nullptr;
  DLTensor* out_p = nullptr;
  bool null_plan = false;
  LocalGather() { tensors = {&table, &out}; }
  void wire() {
    table_p = table.dl();
    out_p = out.dl();
    slots = {{"block_table", table.dl(), [this] { table_p = nullptr; }},
             {"out", out.dl(), [this] { out_p = nullptr; }}};
  }
  cattn_status_t call() {
    return cattn_local_attention_plan_make_block_table(null_plan ? nullptr : holder.plan, table_p, out_p, nullptr);
  }
};

TEST(nothing_lost, MakeLocalAttentionVirtualBatches) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<LocalMake>;
    std::vector<V> v = {
        {"NULL args", I, "args is NULL", [](LocalMake& s) { s.null_args = true; }, nullptr},
        {"small struct_size", I, "args has struct_size too small", nullptr, [](LocalMake& s) { s.args->struct_size = 8; }},
        {"chunk 0", I, "args->attn_chunk_size is not positive", nullptr, [](LocalMake& s) { s.args->attn_chunk_size = 0; }},
        {"block 0", I, "args->block_size is not positive", nullptr, [](LocalMake& s) { s.args->block_size = 0; }},
        {"block 3", I, "args->block_size does not divide args->attn_chunk_size", nullptr, [](LocalMake& s) { s.args->block_size = 3; }},
        {"NULL metadata", I, "args->metadata is NULL", nullptr, [](LocalMake& s) { s.args->metadata = nullptr; }},
        {"metadata struct_size", I, "args->metadata has struct_size too small", nullptr, [](LocalMake& s) { s.md->struct_size = 8; }},
        {"query_start_loc_cpu on a GPU", I, "args->metadata->query_start_loc_cpu is not host memory", nullptr, [](LocalMake& s) { s.md->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
        {"seq_lens_cpu on a GPU", I, "args->metadata->seq_lens_cpu is not host memory", nullptr, [](LocalMake& s) { s.md->seq_lens_cpu->device = {kDLCUDA, 0}; }},
        {"seq_lens_cpu float", I, "args->metadata->seq_lens_cpu has the wrong dtype", nullptr, [](LocalMake& s) { s.md->seq_lens_cpu->dtype = {kDLFloat, 64, 1}; }},
        {"empty batch", I, "args->metadata->seq_lens_cpu describes an empty batch", [](LocalMake& s) {
           s.seq = in_tensor({}, i64(), {0});
           s.qsl = in_tensor({0}, i32());
           s.table = in_tensor({}, i32(), {0, 4});
         }, nullptr},
        {"query_start_loc_cpu of 4", I, "args->metadata->query_start_loc_cpu has the wrong size", [](LocalMake& s) { s.qsl = in_tensor({0, 3, 10, 11}, i32()); }, nullptr},
        {"table 1-D", I, "args->metadata->block_table_tensor has the wrong ndim", [](LocalMake& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i32()); }, nullptr},
        {"table of 3 rows", I, "args->metadata->block_table_tensor has the wrong size in dim 0", [](LocalMake& s) { s.table = in_tensor({1, 2, 3}, i32(), {3, 1}); }, nullptr},
        {"table without columns", I, "args->metadata->block_table_tensor has no columns", [](LocalMake& s) { s.table = in_tensor({}, i32(), {2, 0}); }, nullptr},
        {"decreasing", I, "args->metadata->query_start_loc_cpu decreases", [](LocalMake& s) { s.qsl = in_tensor({0, 3, 2}, i32()); }, nullptr},
        {"query length past int64", I, "args->metadata->query_start_loc_cpu has a query length that overflows int64", [](LocalMake& s) {
           s.qsl = in_tensor({kI64Min, 0, kI64Max}, i64());
         }, nullptr},
        {"sequence shorter than its query", I, "args->metadata->seq_lens_cpu is shorter than the query", [](LocalMake& s) { s.seq = in_tensor({2, 12}, i64()); }, nullptr},
    };
    sweep<LocalMake>("cattn_make_local_attention_virtual_batches", structural<LocalMake>() + v);
  }
  {
    using V = Variant<LocalShape>;
    sweep<LocalShape>("cattn_local_attention_plan_get_shape",
                      {{"NULL plan", I, "plan is NULL", [](LocalShape& s) { s.null_plan = true; }, nullptr}});
  }
  {
    using V = Variant<LocalFill>;
    std::vector<V> v = {
        {"NULL plan", I, "plan is NULL", [](LocalFill& s) { s.null_plan = true; }, nullptr},
        {"NULL args", I, "args is NULL", [](LocalFill& s) { s.null_args = true; }, nullptr},
        {"small struct_size", I, "args has struct_size too small", nullptr, [](LocalFill& s) { s.args->struct_size = 8; }},
        {"NULL metadata", I, "args->metadata is NULL", nullptr, [](LocalFill& s) { s.args->metadata = nullptr; }},
        {"NULL out", I, "args->out is NULL", nullptr, [](LocalFill& s) { s.args->out = nullptr; }},
        {"out struct_size", I, "args->out has struct_size too small", nullptr, [](LocalFill& s) { s.out->struct_size = 8; }},
        {"table of 3 rows", I, "args->metadata->block_table_tensor has the wrong size in dim 0", [](LocalFill& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, i32(), {3, 4}); }, nullptr},
        {"table narrower than planned", I, "args->metadata->block_table_tensor has fewer columns than the plan's", [](LocalFill& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6}, i32(), {2, 3}); }, nullptr},
        {"gathered table int64", I, "args->out->block_table_tensor has the wrong dtype", nullptr, [](LocalFill& s) { s.out->block_table_tensor->dtype = i64(); }},
        {"gathered table [2, 2]", CATTN_INSUFFICIENT_SIZE, "args->out->block_table_tensor has the wrong size in dim 0", [](LocalFill& s) { s.o_table = out_tensor({2, 2}, i32()); }, nullptr},
        {"gathered table [3, 3]", I, "args->out->block_table_tensor has the wrong size in dim 1", [](LocalFill& s) { s.o_table = out_tensor({3, 3}, i32()); }, nullptr},
        {"gathered table zero stride", I, "args->out->block_table_tensor is an output with a zero stride", nullptr, [](LocalFill& s) {
           s.scratch_strides = {0, 1};
           s.out->block_table_tensor->strides = s.scratch_strides.data();
         }},
        {"query_start_loc_cpu [3]", CATTN_INSUFFICIENT_SIZE, "args->out->query_start_loc_cpu has the wrong size", [](LocalFill& s) { s.o_qsl_cpu = out_tensor({3}, i64()); }, nullptr},
        {"query_start_loc_cpu on a GPU", I, "args->out->query_start_loc_cpu is not host memory", nullptr, [](LocalFill& s) { s.out->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
        {"seq_lens copy [4]", I, "args->out->seq_lens has the wrong size", [](LocalFill& s) { s.o_seq = out_tensor({4}, i64()); }, nullptr},
        {"num_computed_tokens_cpu float", I, "args->out->num_computed_tokens_cpu has the wrong dtype", nullptr, [](LocalFill& s) { s.out->num_computed_tokens_cpu->dtype = {kDLFloat, 64, 1}; }},
        {"output overlapping the table", I, "overlaps an input", nullptr, [](LocalFill& s) {
           s.out->seq_lens = s.overlap_view(s.table, 2, {3});
         }},
    };
    if (cpu_only_build())
      v.push_back({"device tables", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](LocalFill& s) {
                     for (const char* n : {"args->metadata->block_table_tensor", "args->metadata->slot_mapping",
                                           "args->out->block_table_tensor", "args->out->query_start_loc", "args->out->seq_lens"})
                       s.slot(n)->device = {kDLCUDA, 0};
                   }});
    sweep<LocalFill>("cattn_local_attention_plan_fill", structural<LocalFill>() + v);
  }
  using V = Variant<LocalGather>;
  std::vector<V> v = {
      {"NULL plan", I, "plan is NULL", [](LocalGather& s) { s.null_plan = true; }, nullptr},
      {"table of 1 row", I, "block_table has the wrong size in dim 0", [](LocalGather& s) { s.table = in_tensor({1, 2, 3, 4}, i64(), {1, 4}); }, nullptr},
      {"table narrower than planned", I, "block_table has fewer columns than the plan's", [](LocalGather& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6}, i64(), {2, 3}); }, nullptr},
      {"out int32", I, "out has the wrong dtype", nullptr, [](LocalGather& s) { s.out_p->dtype = i32(); }},
      {"out [2, 2]", CATTN_INSUFFICIENT_SIZE, "out has the wrong size in dim 0", [](LocalGather& s) { s.out = out_tensor({2, 2}, i64()); }, nullptr},
      {"out [3, 3]", I, "out has the wrong size in dim 1", [](LocalGather& s) { s.out = out_tensor({3, 3}, i64()); }, nullptr},
      {"out overlapping the table", I, "out overlaps an input", nullptr, [](LocalGather& s) { s.out_p = s.overlap_view(s.table, 1, {3, 2}); }},
  };
  if (cpu_only_build())
    v.push_back({"both on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](LocalGather& s) {
                   s.slots[0].t->device = s.slots[1].t->device = {kDLCUDA, 0};
                 }});
  sweep<LocalGather>("cattn_local_attention_plan_make_block_table", structural<LocalGather>() + v);
}

// ------------------------------------------------------------------------------------------
// 10. Mamba block table
struct Mamba : Base {
  HostTensor bt = in_tensor({10, 11, 12, 13, 20, 21, 22, int64_t{1} << 40}, i64(), {2, 4});
  HostTensor seq = in_tensor({5, 0}, i32()), out = out_tensor({2, 2}, i32());
  Guarded<cattn_mamba_block_table_args_t> args{CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT};
  bool null_args = false;
  Mamba() {
    tensors = {&bt, &seq, &out};
    structs = {&args.bytes()};
    args->block_size = 2;
    args->num_speculative_blocks = 1;
    args->mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  }
  void wire() {
    args->block_table = bt.dl();
    args->seq_lens = seq.dl();
    args->out = out.dl();
    cattn_mamba_block_table_args_t* a = args.get();
    slots = {{"args->block_table", bt.dl(), [a] { a->block_table = nullptr; }},
             {"args->seq_lens", seq.dl(), [a] { a->seq_lens = nullptr; }},
             {"args->out", out.dl(), [a] { a->out = nullptr; }}};
  }
  cattn_status_t call() { return cattn_mamba_get_block_table_tensor(null_args ? nullptr : args.get()); }
};

TEST(nothing_lost, MambaGetBlockTableTensor) {
  using V = Variant<Mamba>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Mamba& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Mamba& s) { s.args->struct_size = 8; }},
      {"mode 3", I, "args->mamba_cache_mode is not a cache mode", nullptr, [](Mamba& s) { s.args->mamba_cache_mode = 3; }},
      {"reserved0", I, "args->reserved0 is not zero", nullptr, [](Mamba& s) { s.args->reserved0 = 1; }},
      {"block_table 1-D", I, "args->block_table has the wrong ndim", [](Mamba& s) { s.bt = in_tensor({10, 11}, i64()); }, nullptr},
      {"seq_lens 2-D", I, "args->seq_lens has the wrong ndim", [](Mamba& s) { s.seq = in_tensor({5, 0}, i32(), {2, 1}); }, nullptr},
      {"seq_lens of 3", I, "args->seq_lens has the wrong size in dim 0", [](Mamba& s) { s.seq = in_tensor({5, 0, 1}, i32()); }, nullptr},
      {"out [2, 3]", I, "args->out has the wrong size in dim 1", [](Mamba& s) { s.out = out_tensor({2, 3}, i32()); }, nullptr},
      {"out [2, 1]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 1", [](Mamba& s) { s.out = out_tensor({2, 1}, i32()); }, nullptr},
      {"out [1, 2]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 0", [](Mamba& s) { s.out = out_tensor({1, 2}, i32()); }, nullptr},
      {"out float", I, "args->out has the wrong dtype", nullptr, [](Mamba& s) { s.args->out->dtype = {kDLFloat, 32, 1}; }},
      {"out zero stride", I, "args->out is an output with a zero stride", nullptr, [](Mamba& s) {
         s.scratch_strides = {0, 1};
         s.args->out->strides = s.scratch_strides.data();
       }},
      {"block_size 0", I, "args->block_size is out of range", nullptr, [](Mamba& s) { s.args->block_size = 0; }},
      {"speculative -1", I, "args->num_speculative_blocks is out of range", nullptr, [](Mamba& s) { s.args->num_speculative_blocks = -1; }},
      {"speculative INT64_MAX", I, "1 + args->num_speculative_blocks overflows int64", nullptr, [](Mamba& s) { s.args->num_speculative_blocks = kI64Max; }},
      {"column past the row", I, "args->seq_lens selects block-table columns past the end of a row", [](Mamba& s) { s.seq = in_tensor({9, 0}, i32()); }, nullptr},
      {"value past int32", I, "args->out cannot hold a result value", [](Mamba& s) { s.seq = in_tensor({5, 5}, i32()); }, nullptr},
      {"out overlapping block_table", I, "args->out overlaps an input", nullptr, [](Mamba& s) { s.args->out = s.overlap_view(s.bt, 1, {2, 2}); }},
      {"copy: out [2, 5]", I, "args->out has the wrong size in dim 1", [](Mamba& s) { s.out = out_tensor({2, 5}, i64()); }, [](Mamba& s) {
         s.args->mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
       }},
      {"copy: value past int32", I, "args->out cannot hold a result value", [](Mamba& s) { s.out = out_tensor({2, 4}, i32()); }, [](Mamba& s) {
         s.args->mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_NONE;
       }},
  };
  if (cpu_only_build())
    v.push_back({"every tensor on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Mamba& s) {
                   for (Slot& x : s.slots) x.t->device = {kDLCUDA, 0};
                 }});
  sweep<Mamba>("cattn_mamba_get_block_table_tensor", structural<Mamba>() + v);
}

// An empty table may declare ~2^63 rows of no columns (valid DLPack, no element): the copy
// modes must finish at once rather than walk the rows.
TEST(nothing_lost, MambaCopyOfAnEmptyTableWithHugeRowCountReturnsAtOnce) {
  int64_t shape[2] = {kI64Max, 0};
  DLTensor bt{nullptr, {kDLCPU, 0}, 2, i64(), shape, nullptr, 0};
  DLTensor out{nullptr, {kDLCPU, 0}, 2, i32(), shape, nullptr, 0};
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = &bt;
  a.out = &out;
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// ------------------------------------------------------------------------------------------
// 11. Per-layer parameters and global hyperparameters
struct Layers : Base {
  Guarded<cattn_attention_layer_desc_t[2]> in;
  Guarded<cattn_per_layer_parameters_t[2]> out;
  size_t count = 2;
  bool null_in = false, null_out = false;
  Layers() {
    structs = {&in.bytes(), &out.bytes()};
    for (int i = 0; i < 2; ++i) {
      (*in.get())[i] = CATTN_ATTENTION_LAYER_DESC_INIT;
      (*out.get())[i] = CATTN_PER_LAYER_PARAMETERS_INIT;
    }
    (*in.get())[1].has_sliding_window = 1;
  }
  void wire() {}
  cattn_status_t call() {
    return cattn_get_per_layer_parameters(null_in ? nullptr : *in.get(), count, null_out ? nullptr : *out.get());
  }
};
struct Global : Base {
  Guarded<cattn_per_layer_parameters_t[2]> in;
  Guarded<cattn_global_hyperparameters_t> out{CATTN_GLOBAL_HYPERPARAMETERS_INIT};
  size_t count = 2;
  bool null_in = false, null_out = false;
  Global() {
    structs = {&in.bytes(), &out.bytes()};
    for (int i = 0; i < 2; ++i) (*in.get())[i] = CATTN_PER_LAYER_PARAMETERS_INIT;
  }
  void wire() {}
  cattn_status_t call() {
    return cattn_infer_global_hyperparameters(null_in ? nullptr : *in.get(), count, null_out ? nullptr : out.get());
  }
};

TEST(nothing_lost, GetPerLayerParameters) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<Layers>;
    auto in = [](Layers& s, int i) -> cattn_attention_layer_desc_t& { return (*s.in.get())[i]; };
    sweep<Layers>("cattn_get_per_layer_parameters", {
        {"layers NULL", I, "layers is NULL", [](Layers& s) { s.null_in = true; }, nullptr},
        {"out NULL", I, "out is NULL", [](Layers& s) { s.null_out = true; }, nullptr},
        {"layers[0] struct_size small", I, "layers[0].struct_size is too small", [in](Layers& s) { in(s, 0).struct_size = 8; }, nullptr},
        {"layers[1] struct_size differs", I, "layers[1].struct_size differs from element 0's", [in](Layers& s) { in(s, 1).struct_size += 8; }, nullptr},
        {"out[0] struct_size small", I, "out[0].struct_size is too small", [](Layers& s) { (*s.out.get())[0].struct_size = 0; }, nullptr},
        {"out[1] struct_size differs", I, "out[1].struct_size differs from element 0's", [](Layers& s) { (*s.out.get())[1].struct_size = 1; }, nullptr},
        {"has_sinks 2", I, "layers[1].has_sinks is not a boolean", [in](Layers& s) { in(s, 1).has_sinks = 2; }, nullptr},
        {"has_sliding_window -1", I, "layers[0].has_sliding_window is not a boolean", [in](Layers& s) { in(s, 0).has_sliding_window = -1; }, nullptr},
        {"has_logits_soft_cap 7", I, "layers[1].has_logits_soft_cap is not a boolean", [in](Layers& s) { in(s, 1).has_logits_soft_cap = 7; }, nullptr},
        {"reserved0", I, "layers[0].reserved0 is not zero", [in](Layers& s) { in(s, 0).reserved0 = 3; }, nullptr},
        {"count past memory", I, "layers addresses past the end of memory", [](Layers& s) { s.count = SIZE_MAX; }, nullptr},
    });
  }
  using V = Variant<Global>;
  auto in = [](Global& s, int i) -> cattn_per_layer_parameters_t& { return (*s.in.get())[i]; };
  sweep<Global>("cattn_infer_global_hyperparameters", {
      {"out NULL", I, "out is NULL", [](Global& s) { s.null_out = true; }, nullptr},
      {"out struct_size small", I, "out has struct_size too small", [](Global& s) { s.out->struct_size = 16; }, nullptr},
      {"no layers", I, "num_layers is zero", [](Global& s) { s.count = 0; }, nullptr},
      {"params NULL", I, "params is NULL", [](Global& s) { s.null_in = true; }, nullptr},
      {"params[0] struct_size small", I, "params[0].struct_size is too small", [in](Global& s) { in(s, 0).struct_size = 9; }, nullptr},
      {"params[1] struct_size differs", I, "params[1].struct_size differs from element 0's", [in](Global& s) { in(s, 1).struct_size = 4096; }, nullptr},
      {"has_logits_soft_cap 2", I, "params[1].has_logits_soft_cap is not a boolean", [in](Global& s) { in(s, 1).has_logits_soft_cap = 2; }, nullptr},
      {"has_sinks -1", I, "params[0].has_sinks is not a boolean", [in](Global& s) { in(s, 0).has_sinks = -1; }, nullptr},
      {"count past memory", I, "params addresses past the end of memory", [](Global& s) { s.count = SIZE_MAX / 2; }, nullptr},
  });
}

// ------------------------------------------------------------------------------------------
// 1. KV-cache layout, the context, and the runtime calls
TEST(nothing_lost, KvCacheLayoutContextAndRuntime) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  auto check = [](cattn_status_t st, cattn_status_t code, const char* fn, const std::string& needle) {
    const std::string msg = cattn_last_error_message();
    EXPECT_EQ(st, code) << fn << ": " << msg;
    EXPECT_NE(msg.find(fn), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg << "\nexpected: " << needle;
    ++g_variants;
  };
  check(cattn_cuda_device_count(nullptr), I, "cattn_cuda_device_count", "count is NULL");
  check(cattn_context_create(nullptr), I, "cattn_context_create", "out is NULL");
  Guarded<int32_t> valid{-3};
  const auto valid0 = valid.bytes();
  check(cattn_is_valid_kv_cache_layout(nullptr, valid.get()), I, "cattn_is_valid_kv_cache_layout", "value is NULL");
  check(cattn_is_valid_kv_cache_layout("NHD", nullptr), I, "cattn_is_valid_kv_cache_layout", "valid is NULL");
  EXPECT_EQ(valid.bytes(), valid0);

  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_HND));
  check(cattn_context_set_kv_cache_layout_override(nullptr, CATTN_KV_CACHE_LAYOUT_NHD), I,
        "cattn_context_set_kv_cache_layout_override", "ctx is NULL");
  // Out-of-range layouts as a C caller could pass them (3 is inside the enum's value range).
  check(cattn_context_set_kv_cache_layout_override(ctx, static_cast<cattn_kv_cache_layout_t>(3)), I,
        "cattn_context_set_kv_cache_layout_override", "layout is not a layout (got 3,");

  using Args = cattn_kv_cache_layout_args_t;
  struct Case {
    const char* what;
    cattn_status_t code;
    std::string needle;
    std::function<void(Args&)> edit;
    bool null_args = false;
    const cattn_context_t* context = nullptr;
  };
  setenv(CATTN_KV_CACHE_LAYOUT_ENV, "Hnd", 1);
  const std::vector<Case> cases = {
      {"NULL args", I, "args is NULL", nullptr, true},
      {"small struct_size", I, "args has struct_size too small", [](Args& a) { a.struct_size = 4; }},
      {"connector 3", I, "args->connector_layout is not a layout (got 3,", [](Args& a) {
         const int bad = 3;
         std::memcpy(&a.connector_layout, &bad, sizeof bad);
       }},
      {"connector -1", I, "args->connector_layout is not a layout (got -1,", [](Args& a) {
         const int bad = -1;
         std::memcpy(&a.connector_layout, &bad, sizeof bad);
       }},
      {"mask bit 8", I, "args->supported_mask has bits that name no layout", [](Args& a) { a.supported_mask = 1u << 8; }},
      {"env_value lowercase", I, "args->env_value is not a valid KV-cache layout", [](Args& a) { a.env_value = "nhd"; }},
      {"environment invalid", I, "CATTN_KV_CACHE_LAYOUT is not a valid KV-cache layout", [](Args& a) { a.read_environment = 1; }},
      {"resolved layout unsupported", CATTN_NOT_SUPPORTED, "the resolved layout is not supported", [](Args& a) {
         a.supported_mask = CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_NHD);
       }, false, ctx},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Guarded<Args> a{CATTN_KV_CACHE_LAYOUT_ARGS_INIT};
    if (c.edit) c.edit(*a.get());
    const auto before = a.bytes();
    check(cattn_get_kv_cache_layout(c.context, c.null_args ? nullptr : a.get()), c.code, "cattn_get_kv_cache_layout", c.needle);
    EXPECT_EQ(a.bytes(), before) << "a failed call wrote args";
  }
  unsetenv(CATTN_KV_CACHE_LAYOUT_ENV);
  // The rejected override left the previous one in place.
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx, &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND);
  cattn_context_destroy(ctx);
  // The calls that cannot fail.
  EXPECT_EQ(cattn_get_api(CATTN_VERSION_MAJOR + 1), nullptr);
  EXPECT_STREQ(cattn_status_string(static_cast<cattn_status_t>(15)), "CATTN_UNKNOWN_STATUS");
  EXPECT_EQ(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_UNSET), nullptr);
  cattn_context_destroy(nullptr);
  cattn_local_attention_plan_destroy(nullptr);
  cattn_comm_destroy(nullptr);
}


}  // namespace
