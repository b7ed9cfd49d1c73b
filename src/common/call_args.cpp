// SPDX-License-Identifier: Apache-2.0
#include "common/call_args.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/error.h"

namespace cattn {
namespace {

thread_local CallArgs* t_current = nullptr;

bool intersect(uintptr_t a0, uintptr_t a1, uintptr_t b0, uintptr_t b1) {
  return a0 < b1 && b0 < a1;
}

}  // namespace

CallArgs& current_call() {
  if (t_current == nullptr) fail(CATTN_INTERNAL, "libcattn", "an argument checked outside a call");
  return *t_current;
}

CallScope::CallScope(CallArgs* call) : previous_(t_current) { t_current = call; }
CallScope::~CallScope() { t_current = previous_; }

void CallArgs::add(Part part, const char* name, const void* p, size_t bytes, Use use,
                   const void* owner) {
  if (bytes == 0) return;
  // The same argument checked twice (by name: one DLTensor passed as two outputs is two) is
  // recorded once; after seal() nothing new may be recorded.
  if (sealed_ || use == Use::Out)
    for (int i = 0; i < n_; ++i) {
      const Range& r = ranges_[i];
      if (r.use == use && r.owner == owner && r.part == part && std::strcmp(r.name, name) == 0)
        return;
    }
  if (sealed_)
    fail(CATTN_INTERNAL, fn_, std::string(name) + " is checked after the overlap check");
  if (n_ == kMaxRanges)
    fail(CATTN_INTERNAL, fn_, "records more than " + std::to_string(kMaxRanges) +
                                  " argument ranges");
  const uintptr_t first = reinterpret_cast<uintptr_t>(p);
  const uintptr_t last = bytes > UINTPTR_MAX - first ? UINTPTR_MAX : first + bytes;
  ranges_[n_++] = Range{first, last, name, owner, part, use};
  if (use == Use::Out) ++outputs_;
}

void CallArgs::allow_in_place(const void* out_owner, const void* in_owner, Use in_use) {
  if (aliases_n_ == kMaxAliases)
    fail(CATTN_INTERNAL, fn_, "declares more than " + std::to_string(kMaxAliases) +
                                  " in-place aliases");
  aliases_[aliases_n_++] = Alias{out_owner, in_owner, in_use};
}

bool CallArgs::allowed(const Range& out, const Range& other) const {
  // Only whole arguments alias: the elements of two views, or two structs.
  if (out.part != other.part || (out.part != Part::Data && out.part != Part::Struct))
    return false;
  for (int i = 0; i < aliases_n_; ++i) {
    const Alias& a = aliases_[i];
    if (a.out_owner == out.owner && a.in_owner == other.owner && a.in_use == other.use)
      return true;
    // Two outputs declared as one view, either way round.
    if (other.use == Use::Out && a.in_use == Use::Out && a.out_owner == other.owner &&
        a.in_owner == out.owner)
      return true;
  }
  return false;
}

void CallArgs::fail_conflict(const Range& out, const Range& other) const {
  std::string with = other.name;
  switch (other.part) {
    case Part::DLTensor: with += "'s DLTensor struct"; break;
    case Part::Shape: with += "'s shape array"; break;
    case Part::Strides: with += "'s strides array"; break;
    case Part::Data:
    case Part::Struct: break;
  }
  fail_arg(CATTN_INVALID_ARGUMENT, fn_, out.name,
           other.use == Use::Out ? "overlaps another output" : "overlaps an input",
           "memory shared with " + with, "a separate output buffer");
}

void CallArgs::seal() {
  if (sealed_) return;
  // Fast path, for calls whose arguments are all apart: the outputs sorted by address must be
  // disjoint neighbours, and each other range is looked up among them. O(n log n).
  struct Span {
    uintptr_t first, last;
  };
  Span outs[kMaxRanges];
  int k = 0;
  for (int i = 0; i < n_; ++i)
    if (ranges_[i].use == Use::Out) outs[k++] = Span{ranges_[i].first, ranges_[i].last};
  std::sort(outs, outs + k, [](const Span& a, const Span& b) { return a.first < b.first; });
  bool apart = true;
  for (int i = 1; i < k && apart; ++i) apart = outs[i].first >= outs[i - 1].last;
  for (int i = 0; i < n_ && apart; ++i) {
    const Range& r = ranges_[i];
    if (r.use == Use::Out) continue;
    // The first output ending after r starts is the only one that can overlap it.
    const Span* it = std::upper_bound(outs, outs + k, r.first,
                                      [](uintptr_t a, const Span& b) { return a < b.last; });
    apart = it == outs + k || it->first >= r.last;
  }
  if (!apart) {
    // Some ranges meet: find the first conflict that no declared alias allows, in the order
    // the outputs were recorded - each against every read range, then the earlier outputs.
    for (int i = 0; i < n_; ++i) {
      const Range& o = ranges_[i];
      if (o.use != Use::Out) continue;
      for (int j = 0; j < n_; ++j) {
        const Range& r = ranges_[j];
        if (r.use != Use::In) continue;
        if (intersect(o.first, o.last, r.first, r.last) && !allowed(o, r)) fail_conflict(o, r);
      }
      for (int j = 0; j < i; ++j) {
        const Range& r = ranges_[j];
        if (r.use != Use::Out) continue;
        if (intersect(o.first, o.last, r.first, r.last) && !allowed(o, r)) fail_conflict(o, r);
      }
    }
  }
  sealed_ = true;
}

}  // namespace cattn
