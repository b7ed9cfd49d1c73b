// SPDX-License-Identifier: Apache-2.0
// Fuzz target for cattn_max_local_attention_virtual_batches: chunk sizes, request and token
// limits anywhere in int64 (the limits and their neighbours included), struct sizes; every
// outcome predicted and both bounds compared with 128-bit arithmetic.
#include <limits>

#include "fuzz_support.h"

using namespace cattn_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const char* fn = "cattn_max_local_attention_virtual_batches";
  using i128 = __int128;
  const int64_t chunk = pick_scalar(fdp, 1, 8192), seqs = pick_value(fdp, 1024),
                tokens = pick_value(fdp, 1 << 20);
  const size_t struct_size = pick_struct_size(fdp, CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE);
  Struct<cattn_max_local_attention_virtual_batches_args_t> args(
      CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT, struct_size);
  args.get()->attn_chunk_size = chunk;
  args.get()->max_num_seqs = seqs;
  args.get()->max_num_batched_tokens = tokens;
  args.get()->bound = args.get()->bound_with_empty_rows = -9;
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const std::vector<uint8_t> before = args.snapshot();
  const bool ok = !null_args && struct_size >= CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE &&
                  chunk >= 1 && seqs >= 0 && tokens >= 0;
  const cattn_status_t s = cattn_max_local_attention_virtual_batches(null_args ? nullptr : args.get());
  check_status_valid(s);
  check_failure_message(s, fn);
  FZ_CHECK((s == CATTN_OK) == ok, std::string(fn) + " returned " + cattn_status_string(s));
  if (!ok) {
    FZ_CHECK(args.unchanged(before), "a failure wrote the args struct");
    return 0;
  }
  const i128 spans = 2 * i128{seqs} + (i128{tokens} + chunk - 1) / chunk;
  const i128 cap_max = std::numeric_limits<int64_t>::max();
  const i128 bound = spans < tokens ? spans : tokens;
  i128 padded = spans < i128{tokens} + seqs ? spans : i128{tokens} + seqs;
  if (padded > cap_max) padded = cap_max;
  cattn_max_local_attention_virtual_batches_args_t want = args.value();
  want.bound = static_cast<int64_t>(bound);
  want.bound_with_empty_rows = static_cast<int64_t>(padded);
  FZ_CHECK(args.equals(before, want), "the bounds differ from the definition");
  return 0;
}
