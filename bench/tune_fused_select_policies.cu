// SPDX-License-Identifier: Apache-2.0
// The fused select's tuning variants (target tune_fused_select_variants): the shipped policy
// and, for every choice it makes, the values measured against it and not kept. Each variant
// derives from cattn::kernels::SelectPolicy and redeclares only what it changes; its `what`
// names the section of docs/performance-history.md with its numbers. To try a new value, add
// a struct and a line to the list, and run bench/tune_fused_select.sh with its name.
//
// Every policy here is compiled (15 kernels each, one per access width and arithmetic), which
// is why this list is a target of its own, outside the default build.
#include "bench/tune_fused_select.cuh"

namespace {

using cattn::kernels::SelectPolicy;
using cattn::kernels::SelectSearch;

// ---- The request lookup ("Fused select with many requests (issue 17)") ----------------------
struct SerialSearch : SelectPolicy {
  static constexpr SelectSearch kSearch = SelectSearch::kSerial;
  static constexpr bool kPrefetch = false;
};
struct SerialSearchPrefetch : SelectPolicy {
  static constexpr SelectSearch kSearch = SelectSearch::kSerial;
};
struct NoPrefetch : SelectPolicy {
  static constexpr bool kPrefetch = false;
};
struct Rows2 : SelectPolicy {
  static constexpr int kRows = 2;
};
struct Rows4 : SelectPolicy {
  static constexpr int kRows = 4;
};

// ---- The copy ("Fused select tuning", "More resident warps for small rows") -----------------
struct Unroll2 : SelectPolicy {
  static constexpr int kUnroll = 2;
};
struct Unroll8 : SelectPolicy {
  static constexpr int kUnroll = 8;
};
struct Contiguous : SelectPolicy {
  static constexpr bool kInterleave = false;
};
struct Streaming : SelectPolicy {
  static constexpr bool kStreaming = true;
};
struct StreamingMinBlocks2 : SelectPolicy {
  static constexpr bool kStreaming = true;
  static constexpr int kMinBlocks = 2;
};
struct Unroll2MinBlocks6 : SelectPolicy {
  static constexpr int kUnroll = 2;
  static constexpr int kMinBlocks = 6;
};
struct Unroll2MinBlocks6NoPrefetch : Unroll2MinBlocks6 {
  static constexpr bool kPrefetch = false;
};
struct Unroll2MinBlocks8NoPrefetch : SelectPolicy {
  static constexpr int kUnroll = 2;
  static constexpr int kMinBlocks = 8;
  static constexpr bool kPrefetch = false;
};

// ---- The grid ("Fused select tuning", "Fewer waves for small rows") -------------------------
template <int kWavesValue>
struct Waves : SelectPolicy {
  static constexpr int kWaves = kWavesValue;
};
struct Waves2Rows2 : SelectPolicy {
  static constexpr int kWaves = 2;
  static constexpr int kRows = 2;
};

// ---- Arithmetic, joint turns, chunks, the dependent launch ---------------------------------
// ("Row arithmetic in 32 bits", "Joint turns for 1 KiB rows", "Rows in chunks, and dependent
// launches", "Timed alone with the memcpy interleaved")
struct Wide : SelectPolicy {
  static constexpr bool kNarrow = false;
};
struct RowByRow : SelectPolicy {
  static constexpr int kJointRounds = 0;
};
struct Joint2 : SelectPolicy {
  static constexpr int kJointRounds = 2;
};
struct WholeRows : SelectPolicy {
  static constexpr int kChunkRounds = 0;
};
struct Chunk2 : SelectPolicy {
  static constexpr int kChunkRounds = 2;
};
struct NoDependentLaunch : SelectPolicy {
  static constexpr bool kDependentLaunch = false;
};
struct WholeRowsNoDependentLaunch : SelectPolicy {
  static constexpr int kChunkRounds = 0;
  static constexpr bool kDependentLaunch = false;
};

}  // namespace

const std::vector<TunePolicy>& tune_policies() {
  static const std::vector<TunePolicy> list{
      tune_policy<SelectPolicy>("shipped", "the library's SelectPolicy"),
      tune_policy<SerialSearch>("serial_search",
                                "1.1's lookup: serial binary search, no prefetch (issue 17)"),
      tune_policy<SerialSearchPrefetch>("serial_search_prefetch",
                                        "serial binary search, next lookup overlapped (issue 17)"),
      tune_policy<NoPrefetch>("no_prefetch", "warp search, next lookup not overlapped (issue 17)"),
      tune_policy<Rows2>("rows2", "two consecutive turns a warp (issue 17)"),
      tune_policy<Rows4>("rows4", "four consecutive turns a warp (issue 17)"),
      tune_policy<Unroll2>("unroll2", "2 vectors in flight a lane (1.0 tuning)"),
      tune_policy<Unroll8>("unroll8", "8 vectors in flight a lane (1.0 tuning)"),
      tune_policy<Contiguous>("contiguous", "a contiguous run of turns per warp (first version)"),
      tune_policy<Streaming>("streaming", "evict-first cache hints (1.0 tuning)"),
      tune_policy<StreamingMinBlocks2>("streaming_min_blocks2",
                                       "evict-first hints, 2 resident blocks (1.0 tuning)"),
      tune_policy<Unroll2MinBlocks6>("unroll2_min_blocks6",
                                     "more resident warps for small rows"),
      tune_policy<Unroll2MinBlocks6NoPrefetch>("unroll2_min_blocks6_no_prefetch",
                                               "more resident warps for small rows"),
      tune_policy<Unroll2MinBlocks8NoPrefetch>("unroll2_min_blocks8_no_prefetch",
                                               "more resident warps for small rows"),
      tune_policy<Waves<0>>("no_wave_cap", "a warp per turn, no wave cap (grid tuning)"),
      tune_policy<Waves<1>>("waves1", "one wave of resident blocks (1.0.0's grid)"),
      tune_policy<Waves<2>>("waves2", "fewer waves for small rows"),
      tune_policy<Waves<4>>("waves4", "fewer waves (grid tuning)"),
      tune_policy<Waves<8>>("waves8", "fewer waves for small rows"),
      tune_policy<Waves<16>>("waves16", "fewer waves (grid tuning)"),
      tune_policy<Waves2Rows2>("waves2_rows2", "fewer waves for small rows, two turns a warp"),
      tune_policy<Wide>("wide", "int64 row arithmetic always (1.1's arithmetic)"),
      tune_policy<RowByRow>("row_by_row", "no joint turns (joint turns for 1 KiB rows)"),
      tune_policy<Joint2>("joint2", "joint turns of up to two rounds"),
      tune_policy<WholeRows>("whole_rows", "rows not cut into chunks (rows in chunks)"),
      tune_policy<Chunk2>("chunk2", "chunks of two rounds (rows in chunks)"),
      tune_policy<NoDependentLaunch>("no_dependent_launch",
                                     "no programmatic dependent launch (dependent launches)"),
      tune_policy<WholeRowsNoDependentLaunch>(
          "whole_rows_no_dependent_launch",
          "neither chunks nor the dependent launch (the tree before them)"),
  };
  return list;
}
