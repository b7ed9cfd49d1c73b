// SPDX-License-Identifier: Apache-2.0
// The fused select's benchmark shapes, shared by bench_gpu.cpp and tune_fused_select.cu (and
// read by bench/gpu_side_by_side.py, which parses the two lists below and mirrors the request
// lengths' generator): the goal shapes, one to sixteen equal requests, and the serving-batch
// class, eight to 1024 requests of random even lengths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

// W, r, requests, local tokens T, heads H, Dq, Dk, Dv, element bytes. Equal request lengths.
#define CATTN_BENCH_SELECT_GOAL_SHAPES(X)   \
  X(2, 0, 1, 16384, 32, 128, 128, 128, 2)   \
  X(2, 1, 1, 16384, 32, 128, 128, 128, 2)   \
  X(4, 1, 8, 49792, 8, 128, 128, 128, 2)    \
  X(8, 3, 16, 166880, 8, 128, 128, 128, 2)  \
  X(4, 2, 8, 32768, 16, 192, 192, 128, 2)   \
  X(4, 1, 8, 32768, 16, 192, 192, 128, 1)   \
  X(4, 1, 8, 32768, 128, 192, 192, 128, 2)  \
  X(8, 5, 4, 16384, 128, 192, 192, 128, 2)

// The same fields; request lengths from select_random_qsl. The first three are the rows of
// issue 17's table; the rest cover 8 to 1024 requests, T 2048 to 65536, H 8 and 32, bf16 and
// fp8, W 2, 4 and 8 with first, middle and last ranks.
#define CATTN_BENCH_SELECT_MANY_REQUEST_SHAPES(X) \
  X(2, 1, 512, 4096, 8, 128, 128, 128, 2)         \
  X(2, 0, 256, 2048, 32, 128, 128, 128, 2)        \
  X(4, 3, 64, 8192, 8, 128, 128, 128, 2)          \
  X(2, 0, 8, 2048, 8, 128, 128, 128, 2)           \
  X(2, 1, 1024, 2048, 8, 128, 128, 128, 1)        \
  X(2, 1, 64, 2048, 32, 128, 128, 128, 1)         \
  X(8, 5, 1024, 2048, 8, 128, 128, 128, 2)        \
  X(8, 0, 256, 4096, 32, 128, 128, 128, 2)        \
  X(4, 2, 256, 8192, 8, 128, 128, 128, 1)         \
  X(8, 4, 1024, 8192, 32, 128, 128, 128, 1)       \
  X(4, 1, 1024, 16384, 32, 128, 128, 128, 2)      \
  X(8, 3, 512, 16384, 8, 128, 128, 128, 2)        \
  X(4, 0, 512, 32768, 32, 128, 128, 128, 1)       \
  X(4, 3, 8, 65536, 8, 128, 128, 128, 2)          \
  X(8, 7, 64, 65536, 8, 128, 128, 128, 1)         \
  X(2, 1, 1024, 65536, 32, 128, 128, 128, 2)

struct BenchSelectShape {
  int64_t world, rank, reqs, tokens, heads, dq, dk, dv;
  int elem;
};

// splitmix64: a generator simple enough to mirror exactly in Python (gpu_side_by_side.py).
inline uint64_t select_splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// query_start_loc of `reqs` requests of random even lengths summing to exactly `tokens`: reqs - 1
// cut points drawn uniformly over the tokens / 2 request halves (equal cuts are zero-length
// requests), seeded from the shape so every tool sees the same batch.
inline std::vector<int32_t> select_random_qsl(int64_t reqs, int64_t tokens) {
  uint64_t state = static_cast<uint64_t>(reqs) * 1000003u + static_cast<uint64_t>(tokens);
  std::vector<int64_t> cuts;
  for (int64_t i = 1; i < reqs; ++i)
    cuts.push_back(static_cast<int64_t>(select_splitmix64(state) %
                                        static_cast<uint64_t>(tokens / 2 + 1)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int32_t> qsl{0};
  for (int64_t c : cuts) qsl.push_back(static_cast<int32_t>(2 * c));
  qsl.push_back(static_cast<int32_t>(tokens / 2 * 2));
  return qsl;
}

// The goal shapes' equal lengths (the last request takes the remainder).
inline std::vector<int32_t> select_equal_qsl(int64_t reqs, int64_t tokens) {
  std::vector<int32_t> qsl(static_cast<size_t>(reqs + 1));
  for (int64_t i = 0; i <= reqs; ++i)
    qsl[static_cast<size_t>(i)] = static_cast<int32_t>(tokens / reqs * i / 2 * 2);
  qsl[static_cast<size_t>(reqs)] = static_cast<int32_t>(tokens);
  return qsl;
}

// Exact traffic of one select over `qsl`: every byte a correct kernel must read once plus every
// byte it must write once. Per request of half h: q reads and writes 2h rows; K and V each read
// their (2W - r) h tail rows (the head blocks are among them) and write (r + 1) h + (2W - r) h.
inline double select_traffic_bytes(const std::vector<int32_t>& qsl, const BenchSelectShape& s) {
  double halves = 0;
  for (size_t i = 0; i + 1 < qsl.size(); ++i) halves += (qsl[i + 1] - qsl[i]) / 2;
  const double row = double(s.heads) * s.elem;
  return halves * row *
         (4.0 * s.dq + double(2 * s.world - s.rank) * (s.dk + s.dv) +
          double(2 * s.world + 1) * (s.dk + s.dv));
}
