/* SPDX-License-Identifier: Apache-2.0 */
// The memory of one call's arguments, and the one overlap rule (promise 4 of cattn.h).
//
// Every range of the caller's memory an entry point reads or writes is recorded as the
// arguments are checked: a tensor's elements, its DLTensor struct and its shape and stride
// arrays (TensorArg records them), args and metadata structs (require_struct), output scalars
// and arrays. seal() then applies one rule to all of them at once: no range the call writes may
// share a byte with any other range, except the exact in-place aliases the call declares with
// allow_in_place. A field added to a call later is covered as soon as it is checked, because
// checking it records it; an output cannot be written before seal() (TensorArg::data() of an
// output refuses), and guarded() refuses to return CATTN_OK from a call that recorded outputs
// and never sealed.
//
// One address space: host and device ranges are compared alike (with unified addressing a
// host view and a device view never share an address unless they share memory, and a kDLCUDA
// view may point at pinned host memory).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cattn {

// What the call does with a range.
enum class Use : uint8_t { In, Out };

// Which piece of an argument a range is, for messages.
enum class Part : uint8_t { Data, Struct, DLTensor, Shape, Strides };

class CallArgs {
 public:
  // The most ranges one call records: the step plan's 70 tensors (1.2: eight KV-cache groups
  // of tables, counts and outputs) take up to 4 each, and 3 more each for the caller's
  // descriptors when its checks read copies of them, plus its three structs.
  static constexpr int kMaxRanges = 768;
  static constexpr int kMaxAliases = 16;

  explicit CallArgs(const char* fn) : fn_(fn) {}
  CallArgs(const CallArgs&) = delete;
  CallArgs& operator=(const CallArgs&) = delete;

  // Records bytes [p, p + bytes) (nothing when bytes is 0). `name` (static or owned by the
  // caller's TensorArg) and `part` name the range in messages; `owner` identifies the argument
  // (its DLTensor or struct) for allow_in_place. The end saturates at the top of the address
  // space, so no size forms an out-of-range pointer. An output recorded twice (the same owner,
  // part and name) is kept once. Fails (CATTN_INTERNAL) past kMaxRanges, and after seal()
  // unless the range is one already recorded.
  void add(Part part, const char* name, const void* p, size_t bytes, Use use,
           const void* owner);

  // Declares that the output of `out_owner` may occupy exactly the memory of `in_owner` (an
  // input, or another output when in_use is Out). Declare it only after checking that the two
  // are the same view (TensorArg: same_view; structs: the same address); the rule then skips
  // that pair and still refuses every other overlap of either.
  void allow_in_place(const void* out_owner, const void* in_owner, Use in_use);

  // Applies the rule to everything recorded and fails (CATTN_INVALID_ARGUMENT, naming the
  // output and what it shares memory with) on the first conflict, outputs in the order they
  // were recorded. After it, outputs may be written and nothing more may be recorded; sealing
  // again does nothing.
  void seal();
  bool sealed() const { return sealed_; }
  bool has_outputs() const { return outputs_ > 0; }
  const char* fn() const { return fn_; }

 private:
  struct Range {
    uintptr_t first, last;  // [first, last)
    const char* name;
    const void* owner;
    Part part;
    Use use;
  };
  struct Alias {
    const void* out_owner;
    const void* in_owner;
    Use in_use;
  };
  bool allowed(const Range& out, const Range& other) const;
  [[noreturn]] void fail_conflict(const Range& out, const Range& other) const;

  const char* fn_;
  Range ranges_[kMaxRanges];  // not initialised: only [0, n_) is ever read
  Alias aliases_[kMaxAliases];
  int n_ = 0;
  int aliases_n_ = 0;
  int outputs_ = 0;
  bool sealed_ = false;
};

// The innermost call in progress on this thread (guarded() opens one); fails with
// CATTN_INTERNAL outside any call.
CallArgs& current_call();

// Seals the current call's arguments (CallArgs::seal): the one overlap check, after every
// argument is checked and before anything is written.
inline void seal_arguments() { current_call().seal(); }

// Makes `call` this thread's current call for its lifetime (guarded() uses it).
class CallScope {
 public:
  explicit CallScope(CallArgs* call);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  CallArgs* previous_;
};

}  // namespace cattn
