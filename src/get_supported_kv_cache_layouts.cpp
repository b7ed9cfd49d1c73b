// SPDX-License-Identifier: Apache-2.0
// get_supported_kv_cache_layouts: one worker's backends' layout preferences combined into one
// list, most preferred first (identical lists kept, otherwise first-entry votes over the
// intersection, ties in vLLM's iteration order).
#include <cstdint>
#include <string>

#include "common/error.h"
#include "common/kv_cache_layout.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"

namespace {

namespace kl = cattn::kv_layout;
constexpr const char* kFn = "cattn_get_supported_kv_cache_layouts";

// The preference when no backend declares a set (vLLM's _DEFAULT_LAYOUT_PREFERENCE).
constexpr int kDefault[CATTN_KV_CACHE_LAYOUT_COUNT] = {
    CATTN_KV_CACHE_LAYOUT_LBNHC, CATTN_KV_CACHE_LAYOUT_LBHNC, CATTN_KV_CACHE_LAYOUT_BLNHC,
    CATTN_KV_CACHE_LAYOUT_BLHNC, CATTN_KV_CACHE_LAYOUT_BHLNC, CATTN_KV_CACHE_LAYOUT_LHBNC};

// The declared lists as the message shows them: [['LBHNC', 'BLHNC'], ['LBNHC']]. Reads at
// most `total` values whatever the counts say by now, and is cut at kMaxMessagePart bytes.
std::string describe(const int64_t* counts, int64_t num_backends, const int* values,
                     int64_t total) {
  std::string s = "[";
  int64_t at = 0;
  bool first = true;
  for (int64_t b = 0; b < num_backends && s.size() < cattn::kMaxMessagePart; ++b) {
    const int64_t c = counts[b];
    if (c < 0) continue;
    s += first ? "[" : ", [";
    first = false;
    for (int64_t i = 0; i < c && at < total && s.size() < cattn::kMaxMessagePart; ++i, ++at) {
      const kl::Layout* l = kl::find(values[at]);
      s += std::string(i ? ", '" : "'") + (l ? l->name : "?") + "'";
    }
    s += "]";
  }
  return s + "]";
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_get_supported_kv_cache_layouts(
    cattn_get_supported_kv_cache_layouts_args_t* args) {
  return cattn::guarded(kFn, [&] {
    cattn::require_struct(kFn, "args", args);
    const int64_t n = args->num_backends;
    if (n < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn, "args->num_backends", "is negative",
                      std::to_string(n), ">= 0");
    const int64_t* counts = args->backend_counts;
    if (n > 0 && counts == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn, "args->backend_counts", "is NULL", "NULL",
                      "an array of " + std::to_string(n) + " counts");
    const int* values = reinterpret_cast<const int*>(args->layouts);
    // One pass: each count and each value is read once (promise 5) and values are read as
    // ints (promise 6). Per list it takes the set of layouts as bits, the first entry's vote,
    // and whether the list equals the first declared list.
    uint32_t common = 0x3fu << 1;  // bits 1..6
    int64_t votes[CATTN_KV_CACHE_LAYOUT_COUNT + 1] = {};
    bool all_equal = true, any_empty = false;
    int64_t declared = 0, first_at = -1, first_count = 0, total = 0;
    for (int64_t b = 0; b < n; ++b) {
      const int64_t c = counts[b];
      if (c < CATTN_KV_CACHE_LAYOUTS_NONE)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn,
                        ("args->backend_counts[" + std::to_string(b) + "]").c_str(),
                        "is negative", std::to_string(c), ">= 0 or CATTN_KV_CACHE_LAYOUTS_NONE");
      if (c == CATTN_KV_CACHE_LAYOUTS_NONE) continue;
      const int64_t at = total;
      total = cattn::checked_add(kFn, "the sum of args->backend_counts", total, c);
      if (static_cast<uint64_t>(total) > SIZE_MAX / sizeof(int))
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn, "args->backend_counts",
                        "sum to more than the address space holds", std::to_string(total),
                        "an array that fits");
      if (c > 0 && values == nullptr)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn, "args->layouts", "is NULL", "NULL",
                        "an array of the declared layouts");
      uint32_t set = 0;
      int head = 0;
      for (int64_t i = 0; i < c; ++i) {
        const int v = values[at + i];
        if (i == 0) head = v;
        if (kl::find(v) == nullptr)
          cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn,
                          ("args->layouts[" + std::to_string(at + i) + "]").c_str(),
                          "is not a KV-cache layout", std::to_string(v),
                          "one of the six layouts (1..6)");
        set |= 1u << v;
      }
      if (first_at < 0) {
        first_at = at;
        first_count = c;
      } else if (c != first_count) {
        all_equal = false;
      } else {
        for (int64_t i = 0; i < c && all_equal; ++i)
          all_equal = values[at + i] == values[first_at + i];
      }
      if (c == 0) {
        any_empty = true;
      } else {
        ++votes[head];
      }
      common &= set;
      ++declared;
    }

    // The answer, into a local array first: nothing is written before every check passed.
    int answer[CATTN_KV_CACHE_LAYOUT_COUNT];
    const int* src = answer;
    int64_t len = 0;
    if (declared == 0) {
      src = kDefault;
      len = CATTN_KV_CACHE_LAYOUT_COUNT;
    } else if (all_equal) {
      src = values + first_at;  // the first list as given, duplicates included
      len = first_count;
    } else {
      if (any_empty)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn, "args->backend_counts",
                        "has an empty declared list among lists that differ",
                        describe(counts, n, values, total), "a first layout in every declared list");
      // The intersection in iteration order, then a stable insertion sort by votes,
      // descending, so that ties keep the iteration order.
      for (const kl::Layout& l : kl::kLayouts)
        if (common & (1u << l.value)) answer[len++] = l.value;
      for (int64_t i = 1; i < len; ++i)
        for (int64_t j = i; j > 0 && votes[answer[j]] > votes[answer[j - 1]]; --j) {
          const int t = answer[j];
          answer[j] = answer[j - 1];
          answer[j - 1] = t;
        }
      if (len == 0)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn, "args->layouts",
                        "have no KV cache layout that satisfies every supported set",
                        describe(counts, n, values, total), "lists with a layout in common");
    }
    if (len > args->out_capacity)
      cattn::fail_arg(CATTN_INSUFFICIENT_SIZE, kFn, "args->out_capacity", "is too small",
                      std::to_string(args->out_capacity), ">= " + std::to_string(len));
    if (len > 0 && args->out == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kFn, "args->out", "is NULL", "NULL",
                      "an array of " + std::to_string(len) + " layouts");
    // The lists as read (each count once, each value up to the checked total), and the
    // answer's room.
    cattn::record_input("args->backend_counts", counts, static_cast<size_t>(n) * sizeof(int64_t));
    cattn::record_input("args->layouts", values, static_cast<size_t>(total) * sizeof(int));
    if (len > 0) cattn::require_out_ptr(kFn, "args->out", args->out, static_cast<size_t>(len));
    cattn::seal_arguments();
    int* out = reinterpret_cast<int*>(args->out);
    for (int64_t i = 0; i < len; ++i) out[i] = src[i];
    args->num_out = len;
  });
}

}  // extern "C"
