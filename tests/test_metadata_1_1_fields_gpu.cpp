// SPDX-License-Identifier: Apache-2.0
// extend_all_queries_by_n's 1.1 metadata fields on the device: the DCP lengths and positions
// computed by kernels from the extended tensors, the host mirrors (upper bound, DCP mirror) on
// the host, all against the upstream oracle's vectors; and the host checks that still guard
// the device call.
#include <gtest/gtest.h>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

TEST(metadata_1_1_fields_gpu, ExtendOracleVectors) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const auto vec = load_vectors("extend_all_queries_by_n_upstream");
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto& e = c["expect"];
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    const int64_t b = static_cast<int64_t>(s.size());
    for (DLDataType t : {i32(), i64()}) {
      HostTensor qsl = HostTensor::of(q, t, {}, 2, 1), seq = HostTensor::of(s, t);
      HostTensor qsl_cpu = HostTensor::of(q, t), seq_cpu = HostTensor::of(s, t);
      HostTensor upper = HostTensor::of(ints(c["seq_lens_cpu_upper_bound"]), t);
      HostTensor dcp({b}, t), dcp_cpu({b}, t);
      HostTensor oq({b + 1}, t), os({b}, t, 2), oq_cpu({b + 1}, t), os_cpu({b}, t);
      HostTensor ou({b}, t), od({b}, t, 3), od_cpu({b}, t);
      HostTensor pos({c["positions_len"].get<int64_t>()}, i64(), 2, 1);
      DeviceTensor qsl_d(qsl), seq_d(seq), dcp_d(dcp), oq_d(oq), os_d(os), od_d(od), pos_d(pos);
      cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT, out = in;
      in.query_start_loc = qsl_d.dl();
      in.query_start_loc_cpu = qsl_cpu.dl();
      in.seq_lens = seq_d.dl();
      in.seq_lens_cpu = seq_cpu.dl();
      in.seq_lens_cpu_upper_bound = upper.dl();
      in.dcp_local_seq_lens = dcp_d.dl();
      in.dcp_local_seq_lens_cpu = dcp_cpu.dl();
      in.num_actual_tokens = c["num_actual_tokens"];
      out.query_start_loc = oq_d.dl();
      out.query_start_loc_cpu = oq_cpu.dl();
      out.seq_lens = os_d.dl();
      out.seq_lens_cpu = os_cpu.dl();
      out.seq_lens_cpu_upper_bound = ou.dl();
      out.dcp_local_seq_lens = od_d.dl();
      out.dcp_local_seq_lens_cpu = od_cpu.dl();
      out.positions = pos_d.dl();
      cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
      a.metadata = &in;
      a.out = &out;
      a.n = c["n"];
      a.dcp_size = c["dcp_size"];
      a.dcp_rank = c["dcp_rank"];
      a.dcp_kv_cache_interleave_size = c["dcp_kv_cache_interleave_size"];
      ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
      CATTN_CUDA_OK(cudaDeviceSynchronize());
      oq_d.download();
      os_d.download();
      od_d.download();
      pos_d.download();
      EXPECT_EQ(oq.values(), ints(e["query_start_loc"]));
      EXPECT_EQ(os.values(), ints(e["seq_lens"]));
      EXPECT_EQ(oq_cpu.values(), ints(e["query_start_loc_cpu"]));
      EXPECT_EQ(os_cpu.values(), ints(e["seq_lens"]));
      EXPECT_EQ(ou.values(), ints(e["seq_lens_cpu_upper_bound"]));
      EXPECT_EQ(od.values(), ints(e["dcp_local_seq_lens"]));
      EXPECT_EQ(od_cpu.values(), ints(e["dcp_local_seq_lens"]));
      EXPECT_EQ(pos.values(), ints(e["positions"]));
    }
  }
#endif
}

TEST(metadata_1_1_fields_gpu, HostChecksStillGuardDeviceCalls) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), seq = HostTensor::of({4, 6}, i32());
  HostTensor oq({3}, i32()), os({2}, i32()), dcp({2}, i32()), od({2}, i32());
  DLTensor qsl_d = fake_cuda(qsl), seq_d = fake_cuda(seq), oq_d = fake_cuda(oq);
  DLTensor os_d = fake_cuda(os), dcp_d = fake_cuda(dcp), od_d = fake_cuda(od);
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT, out = in;
  in.query_start_loc = &qsl_d;
  in.seq_lens = &seq_d;
  in.dcp_local_seq_lens = &dcp_d;
  in.dcp_local_seq_lens_cpu = dcp.dl();
  out.query_start_loc = &oq_d;
  out.seq_lens = &os_d;
  out.dcp_local_seq_lens = &od_d;
  out.dcp_local_seq_lens_cpu = od.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &in;
  a.out = &out;
  a.dcp_size = 2;
  // The host mirror of the DCP lengths needs the host mirror of seq_lens on the CUDA path.
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->seq_lens_cpu is NULL");
  in.dcp_local_seq_lens_cpu = nullptr;
  out.dcp_local_seq_lens_cpu = nullptr;
  out.dcp_local_seq_lens = od.dl();  // a host tensor among device ones
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "different device");
}
