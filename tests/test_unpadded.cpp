// SPDX-License-Identifier: Apache-2.0
// unpadded: the upstream oracle's slices of every per-request and per-token field (libcattn's
// slices where upstream drops positions and seq_lens_cpu_upper_bound), views sharing the
// input's memory, strided and device views, 1.0 structs, errors with nothing written.
#include <gtest/gtest.h>

#include <cstring>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

// The row-major values of a DLTensor view (host, int/uint/bool).
std::vector<int64_t> read(const DLTensor* t) {
  std::vector<int64_t> out;
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  const int bytes = t->dtype.bits / 8;
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, rem = i, compact = 1;
    for (int d = t->ndim - 1; d >= 0; --d) {
      const int64_t idx = rem % t->shape[d];
      rem /= t->shape[d];
      off += idx * (t->strides != nullptr ? t->strides[d] : compact);
      compact *= t->shape[d];
    }
    const char* p = static_cast<const char*>(t->data) + t->byte_offset + off * bytes;
    int64_t v = 0;
    if (bytes == 8) std::memcpy(&v, p, 8);
    else if (bytes == 4) { int32_t w; std::memcpy(&w, p, 4); v = w; }
    else if (bytes == 1) { uint8_t w; std::memcpy(&w, p, 1); v = w; }
    out.push_back(v);
  }
  return out;
}

DLDataType boolean() { return DLDataType{kDLUInt, 8, 1}; }  // torch.bool

}  // namespace

TEST(unpadded, OracleVectors) {
  const auto vec = load_vectors("unpadded");
  ASSERT_GT(vec["cases"].size(), 20u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto& in = c["input"];
    const auto& e = c["expect"];
    for (int64_t step : {1, 2}) {
      const int64_t b = static_cast<int64_t>(ints(in["seq_lens"]).size());
      HostTensor qsl = HostTensor::of(ints(in["query_start_loc"]), i32(), {}, step);
      HostTensor qsl_cpu = HostTensor::of(ints(in["query_start_loc"]), i64(), {}, step);
      HostTensor seq = HostTensor::of(ints(in["seq_lens"]), i32(), {}, step);
      HostTensor table = HostTensor::of(ints(in["block_table_tensor"]), i32(),
                                        {b, c["block_table_cols"].get<int64_t>()}, step);
      HostTensor slots = HostTensor::of(ints(in["slot_mapping"]), i64(), {}, step);
      HostTensor positions = HostTensor::of(ints(in["positions"]), i64(), {}, step);
      HostTensor prefilling = HostTensor::of(ints(in["is_prefilling"]), boolean(), {}, step);
      HostTensor causal = HostTensor::of(ints(in["causal"]), boolean(), {}, step);
      HostTensor dcp = HostTensor::of(ints(in["dcp_local_seq_lens"]), i32(), {}, step);
      HostTensor dcp_cpu = HostTensor::of(ints(in["dcp_local_seq_lens_cpu"]), i32(), {}, step);
      HostTensor enc = HostTensor::of(ints(in["encoder_seq_lens"]), i32(), {}, step);
      HostTensor enc_cpu = HostTensor::of(ints(in["encoder_seq_lens_cpu"]), i32(), {}, step);
      HostTensor upper = HostTensor::of(ints(in["seq_lens_cpu_upper_bound"]), i64(), {}, step);
      DLTensor logits{};
      cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
      md.query_start_loc = qsl.dl();
      md.query_start_loc_cpu = qsl_cpu.dl();
      md.seq_lens = seq.dl();
      md.block_table_tensor = table.dl();
      md.slot_mapping = slots.dl();
      md.logits_indices_padded = &logits;
      md.num_reqs = b;
      md.num_actual_tokens = in["num_actual_tokens"];
      md.max_query_len = in["max_query_len"];
      md.max_seq_len = in["max_seq_len"];
      md.num_logits_indices = 1;
      md.causal = 0;
      md.positions = positions.dl();
      md.is_prefilling = prefilling.dl();
      md.causal_per_req = causal.dl();
      md.dcp_local_seq_lens = dcp.dl();
      md.dcp_local_seq_lens_cpu = dcp_cpu.dl();
      md.encoder_seq_lens = enc.dl();
      md.encoder_seq_lens_cpu = enc_cpu.dl();
      md.seq_lens_cpu_upper_bound = upper.dl();
      md.max_logits_per_req = 5;
      cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
      out.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE + 16;  // a newer caller's: kept
      cattn_unpadded_storage_t storage;
      storage.struct_size = CATTN_UNPADDED_STORAGE_SIZE;
      cattn_unpadded_args_t a = CATTN_UNPADDED_ARGS_INIT;
      a.metadata = &md;
      a.out = &out;
      a.storage = &storage;
      a.num_actual_tokens = c["num_actual_tokens"];
      a.num_actual_reqs = c["num_actual_reqs"];
      ASSERT_CATTN_OK(cattn_unpadded(&a));
      EXPECT_EQ(out.struct_size, CATTN_COMMON_ATTN_METADATA_SIZE + 16);
      EXPECT_EQ(read(out.query_start_loc), ints(e["query_start_loc"]));
      EXPECT_EQ(read(out.query_start_loc_cpu), ints(e["query_start_loc_cpu"]));
      EXPECT_EQ(read(out.seq_lens), ints(e["seq_lens"]));
      EXPECT_EQ(read(out.block_table_tensor), ints(e["block_table_tensor"]));
      EXPECT_EQ(read(out.slot_mapping), ints(e["slot_mapping"]));
      EXPECT_EQ(read(out.positions), ints(e["positions"]));
      EXPECT_EQ(read(out.is_prefilling), ints(e["is_prefilling"]));
      EXPECT_EQ(read(out.causal_per_req), ints(e["causal"]));
      EXPECT_EQ(read(out.dcp_local_seq_lens), ints(e["dcp_local_seq_lens"]));
      EXPECT_EQ(read(out.dcp_local_seq_lens_cpu), ints(e["dcp_local_seq_lens_cpu"]));
      EXPECT_EQ(read(out.encoder_seq_lens), ints(e["encoder_seq_lens"]));
      EXPECT_EQ(read(out.encoder_seq_lens_cpu), ints(e["encoder_seq_lens_cpu"]));
      EXPECT_EQ(read(out.seq_lens_cpu_upper_bound), ints(e["seq_lens_cpu_upper_bound"]));
      EXPECT_EQ(out.seq_lens_cpu, nullptr);
      EXPECT_EQ(out.num_computed_tokens_cpu, nullptr);
      EXPECT_EQ(out.logits_indices_padded, &logits);
      EXPECT_EQ(out.num_reqs, e["num_reqs"].get<int64_t>());
      EXPECT_EQ(out.num_actual_tokens, e["num_actual_tokens"].get<int64_t>());
      EXPECT_EQ(out.max_query_len, e["max_query_len"].get<int64_t>());
      EXPECT_EQ(out.max_seq_len, e["max_seq_len"].get<int64_t>());
      EXPECT_EQ(out.num_logits_indices, e["num_logits_indices"].get<int64_t>());
      EXPECT_EQ(out.max_logits_per_req, e["max_logits_per_req"].get<int64_t>());
      EXPECT_EQ(out.causal, 0);
      // Views of the input's memory, not copies.
      EXPECT_EQ(out.seq_lens->data, seq.dl()->data);
      EXPECT_EQ(out.seq_lens->byte_offset, seq.dl()->byte_offset);
    }
  }
}

TEST(unpadded, OneZeroStructsAndDeviceViews) {
  HostTensor qsl = HostTensor::of({0, 2, 5, 5}, i32());
  HostTensor seq = HostTensor::of({4, 6, 0}, i32());
  DLTensor dev_qsl = *qsl.dl(), dev_seq = *seq.dl();
  dev_qsl.device = dev_seq.device = {kDLCUDA, 1};  // never dereferenced: views only
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE_1_0;
  md.query_start_loc = &dev_qsl;
  md.seq_lens = &dev_seq;
  md.positions = reinterpret_cast<DLTensor*>(0x1);  // past a 1.0 struct: never read
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE_1_0;
  out.positions = reinterpret_cast<DLTensor*>(0x2);  // past a 1.0 struct: never written
  cattn_unpadded_storage_t storage;
  storage.struct_size = CATTN_UNPADDED_STORAGE_SIZE;
  cattn_unpadded_args_t a = CATTN_UNPADDED_ARGS_INIT;
  a.metadata = &md;
  a.out = &out;
  a.storage = &storage;
  a.num_actual_reqs = 2;
  a.num_actual_tokens = 5;
  ASSERT_CATTN_OK(cattn_unpadded(&a));
  EXPECT_EQ(out.query_start_loc->shape[0], 3);
  EXPECT_EQ(out.query_start_loc->device.device_type, kDLCUDA);
  EXPECT_EQ(out.query_start_loc->device.device_id, 1);
  EXPECT_EQ(out.seq_lens->shape[0], 2);
  EXPECT_EQ(out.positions, reinterpret_cast<DLTensor*>(0x2));
  EXPECT_EQ(out.num_reqs, 2);
  EXPECT_EQ(qsl.dl()->shape[0], 4);  // the input's shapes are untouched
}

TEST(unpadded, Errors) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32());
  HostTensor seq = HostTensor::of({4, 6}, i32());
  HostTensor slots = HostTensor::of({1, 2, 3, 4, 5}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl.dl();
  md.seq_lens = seq.dl();
  md.slot_mapping = slots.dl();
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  const cattn_common_attn_metadata_t out_before = out;
  cattn_unpadded_storage_t storage;
  std::memset(&storage, 0x5A, sizeof storage);
  storage.struct_size = CATTN_UNPADDED_STORAGE_SIZE;
  cattn_unpadded_storage_t storage_before = storage;
  cattn_unpadded_args_t a = CATTN_UNPADDED_ARGS_INIT;
  a.metadata = &md;
  a.out = &out;
  a.storage = &storage;
  a.num_actual_reqs = 2;
  a.num_actual_tokens = 5;
  auto expect_untouched = [&] {
    EXPECT_EQ(std::memcmp(&out, &out_before, sizeof out), 0) << "out written";
    EXPECT_EQ(std::memcmp(&storage, &storage_before, sizeof storage), 0) << "storage written";
  };
  EXPECT_CATTN_ERROR(cattn_unpadded(nullptr), CATTN_INVALID_ARGUMENT, "args");
  a.storage = nullptr;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT, "args->storage");
  a.storage = &storage;
  storage.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT, "args->storage has struct_size");
  storage.struct_size = CATTN_UNPADDED_STORAGE_SIZE;
  a.out = &md;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps an input (got memory shared with args->metadata");
  a.out = &out;
  a.num_actual_reqs = 3;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc is shorter");
  a.num_actual_reqs = -1;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT, "args->num_actual_reqs");
  a.num_actual_reqs = INT64_MAX;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT, "num_actual_reqs + 1");
  a.num_actual_reqs = 2;
  a.num_actual_tokens = 6;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->slot_mapping is shorter");
  a.num_actual_tokens = -2;
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT, "args->num_actual_tokens");
  a.num_actual_tokens = 5;
  HostTensor scalar = HostTensor::of({3}, i32(), {1, 1, 1, 1, 1});
  md.positions = scalar.dl();
  EXPECT_CATTN_ERROR(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT, "args->metadata->positions");
  md.positions = nullptr;
  expect_untouched();
  ASSERT_CATTN_OK(cattn_unpadded(&a));
}
