// SPDX-License-Identifier: Apache-2.0
// pcp_kv_allgather_and_restore and its communicator, on any machine: argument validation of
// every entry point (a failed call writes nothing), and a clear status where the build, the
// machine or a missing NCCL cannot serve a call. Results on real GPUs are checked in
// test_pcp_kv_allgather_and_restore_gpu.cpp.
//
// Validation happens before any tensor memory is touched, so the tensors here are host buffers
// labelled kDLCUDA: the checks see device tensors and the buffers can still be inspected.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"

#if defined(CATTN_TEST_WITH_CUDA)
#include <dlfcn.h>
#endif

using namespace cattn_test;

namespace {

DLDataType bf16() { return {kDLBfloat, 16, 1}; }

// The library libcattn will try to load (the override the header documents, else the soname).
std::string nccl_library_name() {
  const char* env = std::getenv(CATTN_NCCL_LIBRARY_ENV);
  return env != nullptr && *env != '\0' ? env : "libnccl.so.2";
}

#if defined(CATTN_TEST_WITH_CUDA)
bool nccl_loadable() {
  void* h = dlopen(nccl_library_name().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return false;
  const bool ok = dlsym(h, "ncclGetUniqueId") != nullptr;
  dlclose(h);
  return ok;
}
#endif

// A valid call for a PCP group of unknown size: 3 of 10 rows gathered, 6 restored rows; K and V
// with different head sizes. comm stays NULL unless a test sets it.
struct Call {
  HostTensor key{{10, 2, 4}, bf16()};
  HostTensor value{{10, 2, 3}, bf16()};
  HostTensor idx = HostTensor::of({0, 1, 2, 3, 4, 5}, i64());
  HostTensor key_out{{6, 2, 4}, bf16()};
  HostTensor value_out{{6, 2, 3}, bf16()};
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  std::vector<uint8_t> key_out0, value_out0;

  Call() {
    a.key = cuda(key);
    a.value = cuda(value);
    a.restore_idx = cuda(idx);
    a.key_out = cuda(key_out);
    a.value_out = cuda(value_out);
    a.num_actual_tokens = 3;
    key_out0 = key_out.bytes();
    value_out0 = value_out.bytes();
  }
  static DLTensor* cuda(HostTensor& t, int device = 0) {
    DLTensor* d = t.dl();
    d->device = {kDLCUDA, device};
    return d;
  }
  bool untouched() const { return key_out.bytes() == key_out0 && value_out.bytes() == value_out0; }
};

#define EXPECT_CALL_FAILS(call, code, needle)                                               \
  do {                                                                                      \
    EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&(call).a), code, needle);        \
    EXPECT_TRUE((call).untouched()) << "a failed call wrote an output";                     \
  } while (0)

// A non-NULL handle for builds that can never create one: the CPU-only entry points check the
// pointer and then refuse, without reading it.
cattn_comm_t* fake_comm() {
  static int dummy;
  return reinterpret_cast<cattn_comm_t*>(&dummy);
}

}  // namespace

TEST(pcp_kv_allgather_and_restore, NullArgumentsAndStructSize) {
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(nullptr), CATTN_INVALID_ARGUMENT, "args");
  {
    Call c;
    c.a.struct_size = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE - 1;
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "struct_size");
  }
  const char* names[] = {"args->key", "args->value", "args->restore_idx", "args->key_out",
                         "args->value_out"};
  for (int i = 0; i < 5; ++i) {
    Call c;
    const DLTensor** slots[] = {&c.a.key, &c.a.value, &c.a.restore_idx,
                                const_cast<const DLTensor**>(&c.a.key_out),
                                const_cast<const DLTensor**>(&c.a.value_out)};
    *slots[i] = nullptr;
    SCOPED_TRACE(names[i]);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, names[i]);
  }
  Call c;  // everything valid but the communicator
  EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->comm");
}

TEST(pcp_kv_allgather_and_restore, ShapeAndDtypeErrors) {
  {
    Call c;
    HostTensor scalar({}, bf16());
    c.a.key = Call::cuda(scalar);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->key has no token dimension");
  }
  {
    Call c;
    HostTensor scalar({}, bf16());
    c.a.value = Call::cuda(scalar);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->value has no token dimension");
  }
  {
    Call c;
    HostTensor v({9, 2, 3}, bf16());  // one row fewer than key
    c.a.value = Call::cuda(v);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->value has the wrong size in dim 0");
  }
  for (int64_t n : {int64_t{-1}, int64_t{11}, INT64_MIN}) {
    Call c;
    c.a.num_actual_tokens = n;
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT,
                      n < 0 ? "args->num_actual_tokens is negative"
                            : "args->num_actual_tokens is out of range");
  }
  {
    Call c;
    HostTensor idx2({2, 3}, i64());
    c.a.restore_idx = Call::cuda(idx2);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->restore_idx has the wrong ndim");
  }
  {
    Call c;
    HostTensor idxf({6}, f32());
    c.a.restore_idx = Call::cuda(idxf);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->restore_idx has the wrong dtype");
  }
  {
    Call c;
    HostTensor o({6, 2, 4}, dtype_bits(16));  // uint16, not bf16
    c.a.key_out = Call::cuda(o);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->key_out has the wrong dtype");
  }
  {
    Call c;
    HostTensor o({6, 8}, bf16());
    c.a.key_out = Call::cuda(o);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->key_out has the wrong ndim");
  }
  {
    Call c;
    HostTensor o({6, 2, 5}, bf16());
    c.a.key_out = Call::cuda(o);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->key_out has the wrong size in dim 2");
  }
  {
    Call c;
    HostTensor o({6, 2, 4}, bf16());  // value's head size is 3
    c.a.value_out = Call::cuda(o);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->value_out has the wrong size in dim 2");
  }
  {
    Call c;
    HostTensor o({5, 2, 4}, bf16());
    c.a.key_out = Call::cuda(o);
    EXPECT_CALL_FAILS(c, CATTN_INSUFFICIENT_SIZE, "args->key_out has the wrong size in dim 0");
  }
  {
    Call c;
    HostTensor o({7, 2, 3}, bf16());
    c.a.value_out = Call::cuda(o);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->value_out has the wrong size in dim 0");
  }
  {
    Call c;
    HostTensor o({6, 2, 4}, bf16(), 2);  // strided
    c.a.key_out = Call::cuda(o);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->key_out is not contiguous");
  }
  {
    Call c;
    HostTensor k({10, 2, 4}, bf16());
    DLTensor* d = Call::cuda(k);
    d->dtype.lanes = 2;
    c.a.key = d;
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT,
                      "args->key has the wrong dtype (got bfloat16x2, expected one lane)");
  }
}

TEST(pcp_kv_allgather_and_restore, AcceptsEveryLayoutOfTheInputsAndEmptyShapes) {
  // Strided inputs, fp8 and 8-byte elements, int32 index, M = 0, n = 0, 1-D and empty rows all
  // pass validation and stop only at the (NULL) communicator.
  {
    Call c;
    HostTensor k({10, 2, 4}, bf16(), 3, 1), idx = HostTensor::of({5, 0}, i32(), {}, 2);
    HostTensor ko({2, 2, 4}, bf16()), vo({2, 2, 3}, bf16());
    c.a.key = Call::cuda(k);
    c.a.restore_idx = Call::cuda(idx);
    c.a.key_out = Call::cuda(ko);
    c.a.value_out = Call::cuda(vo);
    EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&c.a), CATTN_INVALID_ARGUMENT,
                       "args->comm");
  }
  {
    Call c;
    HostTensor k({4}, dtype_bits(8)), v({4, 0}, dtype_bits(64)), idx({0}, i32());
    HostTensor ko({0}, dtype_bits(8)), vo({0, 0}, dtype_bits(64));
    c.a.key = Call::cuda(k);
    c.a.value = Call::cuda(v);
    c.a.restore_idx = Call::cuda(idx);
    c.a.key_out = Call::cuda(ko);
    c.a.value_out = Call::cuda(vo);
    c.a.num_actual_tokens = 0;
    EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&c.a), CATTN_INVALID_ARGUMENT,
                       "args->comm");
  }
}

TEST(pcp_kv_allgather_and_restore, DeviceErrors) {
  {
    Call c;  // every tensor on the host: NCCL gathers device memory only
    c.a.key = c.key.dl();
    c.a.value = c.value.dl();
    c.a.restore_idx = c.idx.dl();
    c.a.key_out = c.key_out.dl();
    c.a.value_out = c.value_out.dl();
    EXPECT_CALL_FAILS(c, CATTN_NOT_SUPPORTED, "args->key is host memory");
  }
  {
    Call c;
    c.a.restore_idx = c.idx.dl();  // a host index with device K/V
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->restore_idx is on a different device");
  }
  {
    Call c;
    c.a.value_out = Call::cuda(c.value_out, 1);
    EXPECT_CALL_FAILS(c, CATTN_INVALID_ARGUMENT, "args->value_out is on a different device");
  }
}

TEST(pcp_kv_allgather_and_restore, CpuOnlyBuildRefusesPlainly) {
#if defined(CATTN_TEST_WITH_CUDA)
  GTEST_SKIP() << "CUDA build: covered by the GPU tests";
#else
  Call c;
  c.a.comm = fake_comm();
  EXPECT_CALL_FAILS(c, CATTN_NOT_SUPPORTED, "CPU-only");
  size_t ws = 99;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&c.a, &ws),
                     CATTN_NOT_SUPPORTED, "CPU-only");
  EXPECT_EQ(ws, 99u);
#endif
}

TEST(pcp_kv_allgather_and_restore, WorkspaceSizeErrors) {
  Call c;
  size_t ws = 77;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(nullptr, &ws),
                     CATTN_INVALID_ARGUMENT, "args");
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&c.a, nullptr),
                     CATTN_INVALID_ARGUMENT, "size");
  c.a.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&c.a, &ws),
                     CATTN_INVALID_ARGUMENT, "struct_size");
  c.a.struct_size = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE;
  c.a.key = nullptr;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&c.a, &ws),
                     CATTN_INVALID_ARGUMENT, "args->key");
  c.a.key = Call::cuda(c.key);
  HostTensor v({11, 2, 3}, bf16());
  c.a.value = Call::cuda(v);
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&c.a, &ws),
                     CATTN_INVALID_ARGUMENT, "args->value has the wrong size in dim 0");
  c.a.value = Call::cuda(c.value);
  c.a.num_actual_tokens = 12;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&c.a, &ws),
                     CATTN_INVALID_ARGUMENT, "args->num_actual_tokens");
  c.a.num_actual_tokens = 3;
  // The outputs, index and workspace are not read by the query.
  c.a.key_out = nullptr;
  c.a.restore_idx = nullptr;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&c.a, &ws),
                     CATTN_INVALID_ARGUMENT, "args->comm");
  EXPECT_EQ(ws, 77u) << "a failed query wrote its result";
}

TEST(pcp_kv_allgather_and_restore, CommArgumentErrors) {
  cattn_comm_unique_id_t id{};
  cattn_comm_t* const sentinel = reinterpret_cast<cattn_comm_t*>(uintptr_t{0x1234});
  cattn_comm_t* out = sentinel;
  EXPECT_CATTN_ERROR(cattn_comm_get_unique_id(nullptr), CATTN_INVALID_ARGUMENT, "id");
  EXPECT_CATTN_ERROR(cattn_comm_create(nullptr, 1, 0, 0, &out), CATTN_INVALID_ARGUMENT, "id");
  EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, 0, nullptr), CATTN_INVALID_ARGUMENT, "out");
  EXPECT_CATTN_ERROR(cattn_comm_create(&id, 0, 0, 0, &out), CATTN_INVALID_ARGUMENT,
                     "nranks is out of range");
  EXPECT_CATTN_ERROR(cattn_comm_create(&id, 2, -1, 0, &out), CATTN_INVALID_ARGUMENT,
                     "rank is out of range");
  EXPECT_CATTN_ERROR(cattn_comm_create(&id, 2, 2, 0, &out), CATTN_INVALID_ARGUMENT,
                     "rank is out of range (got 2, expected [0, 2))");
  EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, -1, &out), CATTN_INVALID_ARGUMENT,
                     "cuda_device is negative");
  EXPECT_CATTN_ERROR(cattn_comm_create_borrowed(nullptr, &out), CATTN_INVALID_ARGUMENT,
                     "nccl_comm");
  int not_a_comm = 0;
  EXPECT_CATTN_ERROR(cattn_comm_create_borrowed(&not_a_comm, nullptr), CATTN_INVALID_ARGUMENT,
                     "out");
  EXPECT_EQ(out, sentinel) << "a failed create wrote its output";

  int32_t v = -7;
  EXPECT_CATTN_ERROR(cattn_comm_get_rank(nullptr, &v), CATTN_INVALID_ARGUMENT, "comm");
  EXPECT_CATTN_ERROR(cattn_comm_get_rank(fake_comm(), nullptr), CATTN_INVALID_ARGUMENT, "rank");
  EXPECT_CATTN_ERROR(cattn_comm_get_size(nullptr, &v), CATTN_INVALID_ARGUMENT, "comm");
  EXPECT_CATTN_ERROR(cattn_comm_get_size(fake_comm(), nullptr), CATTN_INVALID_ARGUMENT, "size");
  EXPECT_EQ(v, -7);
  cattn_comm_destroy(nullptr);  // a no-op
#if !defined(CATTN_TEST_WITH_CUDA)
  EXPECT_CATTN_ERROR(cattn_comm_get_rank(fake_comm(), &v), CATTN_NOT_SUPPORTED, "CPU-only");
  EXPECT_CATTN_ERROR(cattn_comm_get_size(fake_comm(), &v), CATTN_NOT_SUPPORTED, "CPU-only");
  EXPECT_CATTN_ERROR(cattn_comm_create_borrowed(&not_a_comm, &out), CATTN_NOT_SUPPORTED,
                     "CPU-only");
  EXPECT_EQ(v, -7);
  EXPECT_EQ(out, sentinel);
#endif
}

TEST(pcp_kv_allgather_and_restore, UniqueIdAndCreateStatusOnThisMachine) {
  cattn_comm_unique_id_t id{}, id2{};
  cattn_comm_t* out = nullptr;
#if !defined(CATTN_TEST_WITH_CUDA)
  EXPECT_CATTN_ERROR(cattn_comm_get_unique_id(&id), CATTN_NOT_SUPPORTED, "CPU-only");
  EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, 0, &out), CATTN_NOT_SUPPORTED, "CPU-only");
#else
  if (!nccl_loadable()) {
    EXPECT_CATTN_ERROR(cattn_comm_get_unique_id(&id), CATTN_NOT_SUPPORTED, "libnccl.so.2");
    EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, 0, &out), CATTN_NOT_SUPPORTED,
                       "libnccl.so.2");
  } else {
    // Needs no GPU: NCCL's bootstrap only picks a network interface and a port.
    ASSERT_CATTN_OK(cattn_comm_get_unique_id(&id));
    ASSERT_CATTN_OK(cattn_comm_get_unique_id(&id2));
    const cattn_comm_unique_id_t zero{};
    EXPECT_NE(std::memcmp(id.bytes, zero.bytes, sizeof id.bytes), 0);
    EXPECT_NE(std::memcmp(id.bytes, id2.bytes, sizeof id.bytes), 0) << "two ids are equal";
    int32_t gpus = 0;
    ASSERT_CATTN_OK(cattn_cuda_device_count(&gpus));
    if (gpus == 0) {
      EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, 0, &out), CATTN_NOT_SUPPORTED,
                         "no usable CUDA device");
    } else {
      EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, gpus, &out), CATTN_INVALID_ARGUMENT,
                         "cuda_device is not a visible device");
    }
  }
#endif
  EXPECT_EQ(out, nullptr);
}

// Run by CTest with CATTN_NCCL_LIBRARY naming a library that does not exist (see
// tests/CMakeLists.txt): the NCCL calls say what is missing, the rest of libcattn still works.
TEST(pcp_kv_allgather_and_restore_no_nccl, ClearStatusWhenNcclIsAbsent) {
  const char* env = std::getenv(CATTN_NCCL_LIBRARY_ENV);
  if (env == nullptr || *env == '\0')
    GTEST_SKIP() << "runs only with " CATTN_NCCL_LIBRARY_ENV " set (CTest test "
                    "pcp_kv_allgather_and_restore_without_nccl)";
  cattn_comm_unique_id_t id{};
  cattn_comm_t* out = nullptr;
  int not_a_comm = 0;
#if defined(CATTN_TEST_WITH_CUDA)
  ASSERT_FALSE(nccl_loadable()) << env << " can be loaded; this test needs a missing library";
  for (int attempt = 0; attempt < 2; ++attempt) {  // the outcome of loading is kept
    EXPECT_CATTN_ERROR(cattn_comm_get_unique_id(&id), CATTN_NOT_SUPPORTED, "libnccl.so.2");
    EXPECT_CATTN_ERROR(cattn_comm_get_unique_id(&id), CATTN_NOT_SUPPORTED, env);
    // dlerror()'s text for a missing file.
    EXPECT_CATTN_ERROR(cattn_comm_get_unique_id(&id), CATTN_NOT_SUPPORTED,
                       "cannot open shared object file");
    EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, 0, &out), CATTN_NOT_SUPPORTED, env);
    // NCCL is loaded before the borrowed pointer is used, so a bogus one is never read.
    EXPECT_CATTN_ERROR(cattn_comm_create_borrowed(&not_a_comm, &out), CATTN_NOT_SUPPORTED, env);
  }
#else
  EXPECT_CATTN_ERROR(cattn_comm_get_unique_id(&id), CATTN_NOT_SUPPORTED, "CPU-only");
  EXPECT_CATTN_ERROR(cattn_comm_create_borrowed(&not_a_comm, &out), CATTN_NOT_SUPPORTED,
                     "CPU-only");
#endif
  EXPECT_EQ(out, nullptr);
  // Everything that does not need NCCL works as before.
  HostTensor cu = HostTensor::of({0, 4, 6}, i32());
  int64_t size = -1;
  EXPECT_CATTN_OK(cattn_get_pcp_query_restore_idx_size(cu.dl(), &size));
  EXPECT_EQ(size, 6);
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): PCP all-gather + restore, and the
// communicator calls. No communicator exists in these tests, so the valid call is one with tensors
// marked as device memory and a NULL comm; every variant breaks something that is checked before
// the communicator.

namespace {
using namespace cattn_test::refused_untouched;

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

TEST(refused_untouched, PcpKvAllgatherAndRestore) {
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
        {"num_actual_tokens -1", I, "args->num_actual_tokens is negative", nullptr, [](AllgatherQuery& s) { s.args->num_actual_tokens = -1; }},
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

TEST(refused_untouched, CommunicatorCalls) {
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

}  // namespace
