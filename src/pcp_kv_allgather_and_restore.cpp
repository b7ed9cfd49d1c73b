// Utility 5: PCP all-gather + restore (vLLM pcp_kv_allgather_and_restore). The ABI is fixed
// now so engines can compile against it; the NCCL implementation arrives in a later release.
// Until then both calls validate nothing beyond their pointers and say so plainly.
#include "common/error.h"

namespace {
[[noreturn]] void not_yet(const char* fn) {
  cattn::fail(CATTN_NOT_IMPLEMENTED, fn,
              "the NCCL all-gather + restore is not implemented in libcattn " CATTN_VERSION_STRING
              "; it is declared so that engines can build against the final ABI");
}
}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore_workspace_size(
    const cattn_pcp_kv_allgather_and_restore_args_t* args, size_t* size) {
  constexpr const char* fn = "cattn_pcp_kv_allgather_and_restore_workspace_size";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args, sizeof(cattn_pcp_kv_allgather_and_restore_args_t));
    if (size == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "size", "is NULL", "NULL", "a pointer");
    not_yet(fn);
  });
}

CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore(
    const cattn_pcp_kv_allgather_and_restore_args_t* args) {
  constexpr const char* fn = "cattn_pcp_kv_allgather_and_restore";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args, sizeof(cattn_pcp_kv_allgather_and_restore_args_t));
    not_yet(fn);
  });
}

}  // extern "C"
