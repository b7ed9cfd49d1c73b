// SPDX-License-Identifier: Apache-2.0
// The fused PCP Q/K/V select's tuning, as a policy type (CUB's style): the kernel and its
// launcher (fused_pcp_qkv_select.cuh) take a Policy template argument and read every tuning
// choice from its static members, so a choice is made at compile time and a build holds only
// the code of the policies it instantiates. The library instantiates SelectPolicy alone
// (fused_pcp_qkv_select.cu).
//
// A variant is a struct that derives from SelectPolicy and redeclares the members it changes,
// e.g. `struct SerialSearch : SelectPolicy { static constexpr SelectSearch kSearch =
// SelectSearch::kSerial; };`. bench/tune_fused_select_policies.cu holds the variants that were
// measured and not kept, and bench/tune_fused_select.sh times any of them against this one
// (bench/README.md, "Tuning the fused select"). docs/performance-history.md has every
// measurement behind the values below.
#pragma once

#include <cstdint>

#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

// How a row's request is found in query_start_loc.
enum class SelectSearch {
  // One binary search that every lane runs in step: log2 B dependent loads (1.1 and before).
  kSerial = 0,
  // The warp searches together, each lane testing one key per round, so each round cuts the
  // range 32-fold: ceil(log32 B) dependent loads.
  kWarp = 1,
};

// The shipped tuning.
struct SelectPolicy {
  // Vectors in flight per lane: a round of a warp's copy loads 32 x kUnroll vectors before it
  // stores any.
  static constexpr int kUnroll = 4;
  // Resident blocks per SM the register budget must allow (__launch_bounds__).
  static constexpr int kMinBlocks = 4;
  // Evict-first cache hints (__ldcs, __stcs) for data touched exactly once; false: __ldg loads
  // and plain stores.
  static constexpr bool kStreaming = false;
  // true: warp w takes turns w, w + warps, ... so the whole grid sweeps memory front to back
  // together; false: each warp takes one contiguous run of turns.
  static constexpr bool kInterleave = true;
  // Most waves of resident blocks the grid holds (0: no cap, one warp per turn).
  static constexpr int kWaves = kRowWaves;
  static constexpr SelectSearch kSearch = SelectSearch::kWarp;
  // true: the next turn's lookup is issued after the current turn's first loads and before
  // their stores, so its latency hides behind theirs (only warps that take several turns have
  // a next one).
  static constexpr bool kPrefetch = true;
  // Consecutive turns a warp takes in a row when interleaved (1, 2, 4, ...): neighbouring rows
  // mostly share a request, so all but the first skip the lookup; the grid shrinks to match.
  static constexpr int kRows = 1;
  // true: the int32 instantiation of the row arithmetic for calls whose rows fit it (false:
  // always int64, the 1.1 kernel's arithmetic).
  static constexpr bool kNarrow = true;
  // Joint turns: when two rows of every operand fit this many rounds of loads (32 x kUnroll
  // vectors each), one warp turn copies K's and V's tail row t together (one lookup for both),
  // and q's two halves, with both rows' loads of a round in flight at once. 0: never.
  static constexpr int kJointRounds = 1;
  // Rounds of loads a warp turn copies at most (0: whole rows): a longer row is split into
  // chunks that consecutive turns take, so that no warp outlives a few rounds.
  static constexpr int kChunkRounds = 1;
  // true: programmatic dependent launch on sm_90: the grid may be scheduled while the previous
  // kernel on the stream finishes, and waits for it (griddepcontrol.wait) before touching
  // memory.
  static constexpr bool kDependentLaunch = true;
};

// Vectors a chunk of a row holds under Policy (0: rows are not chunked).
template <class Policy>
inline constexpr int32_t kSelectChunkVectors = 32 * Policy::kUnroll * Policy::kChunkRounds;

// The values a policy may take; the kernel and the launcher check their Policy with it.
template <class Policy>
inline constexpr bool select_policy_valid() {
  static_assert(Policy::kUnroll >= 1, "SelectPolicy::kUnroll is at least 1");
  static_assert(Policy::kMinBlocks >= 1, "SelectPolicy::kMinBlocks is at least 1");
  static_assert(Policy::kWaves >= 0, "SelectPolicy::kWaves is at least 0");
  static_assert(Policy::kSearch == SelectSearch::kSerial || Policy::kSearch == SelectSearch::kWarp,
                "SelectPolicy::kSearch is kSerial or kWarp");
  static_assert(Policy::kRows >= 1, "SelectPolicy::kRows is at least 1");
  static_assert(Policy::kJointRounds >= 0, "SelectPolicy::kJointRounds is at least 0");
  static_assert(Policy::kChunkRounds >= 0, "SelectPolicy::kChunkRounds is at least 0");
  return true;
}

}  // namespace kernels
}  // namespace cattn
