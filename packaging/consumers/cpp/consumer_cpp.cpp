// SPDX-License-Identifier: Apache-2.0
// Out-of-tree consumer (d): C++17 against the installed cattn.hpp, built by CMake through
// find_package(cattn <major>) and cattn::cattn. Checks the packaged library's version, a few
// one-call helpers on SPEC's vectors, an owner, and an error's status and message; exits 1 on
// any mismatch.
#include <cattn.hpp>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("  %-58s %s\n", what, ok ? "ok" : "MISMATCH");
  if (!ok) ++failures;
}

// Whether get_pcp_query_restore_idx accepts a V: index tensors are int32/int64 only.
template <class V, class = void>
struct restore_compiles : std::false_type {};
template <class V>
struct restore_compiles<V, std::void_t<decltype(cattn::get_pcp_query_restore_idx(
                               std::declval<const V&>()))>> : std::true_type {};
static_assert(restore_compiles<std::vector<int32_t>>::value, "int32 index tensors compile");
static_assert(!restore_compiles<std::vector<float>>::value, "float index tensors do not");

}  // namespace

int main() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&cattn_version), &info) && info.dli_fname)
    std::printf("C++ consumer: libcattn loaded from %s\n", info.dli_fname);
  std::printf("  find_package version %s, library %s\n", EXPECTED_VERSION,
              cattn::version_string());
  check(std::string(cattn::version_string()) == EXPECTED_VERSION,
        "package version == library version");

  try {
    // SPEC vectors: PCP restore [0, 8, 20]; DCP all ranks, W = 2, interleave 1.
    const std::vector<int64_t> cu{0, 8, 20};
    const std::vector<int64_t> restore = cattn::get_pcp_query_restore_idx(cu);
    const std::vector<int64_t> want_restore{0, 1, 2, 3, 10, 11, 12, 13, 4, 5,
                                            6, 7, 8, 9, 14, 15, 16, 17, 18, 19};
    check(restore == want_restore, "PCP restore index [0, 8, 20]");
    const int32_t seq[] = {1, 2, 128, 129, 256, 257};
    const auto dcp = cattn::get_dcp_local_seq_lens<int32_t>(seq, 2, cattn::all_ranks);
    check(cattn::to_string(dcp) == "[[1, 0], [1, 1], [64, 64], [65, 64], [128, 128], [129, 128]]",
          "DCP local lengths, W=2 I=1");
    const auto conv = cattn::compute_causal_conv1d_metadata(std::vector<int32_t>{0, 10, 16, 17});
    check(conv.nums == std::vector<int64_t>{2, 1, 1} && conv.batch_ptr.size() == 2048,
          "conv1d metadata [0, 10, 16, 17]");
    cattn::context ctx;
    ctx.set_kv_cache_layout_override(CATTN_KV_CACHE_LAYOUT_HND);
    check(ctx.get_kv_cache_layout() == CATTN_KV_CACHE_LAYOUT_HND, "context override (RAII)");
  } catch (const cattn::error& e) {
    std::printf("  unexpected error: %s\n", e.what());
    ++failures;
  }

  try {
    (void)cattn::get_dcp_local_seq_lens(std::vector<int64_t>{1, 2}, 2, 2);  // rank 2 of 2
    check(false, "dcp_rank 2 of 2 throws cattn::error");
  } catch (const cattn::error& e) {
    check(e.status() == CATTN_INVALID_ARGUMENT && std::strstr(e.message(), "dcp_rank"),
          "dcp_rank 2 of 2 throws cattn::error");
    std::printf("  what(): %s\n", e.what());
  }

  std::printf("C++ consumer: %s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
