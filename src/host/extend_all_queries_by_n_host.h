/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {

// One index tensor and its optional host mirror, updated together as out[i] = in[i] + add +
// i * add_per_index. `mirror_in` and `mirror_out` are both present or both absent.
struct ExtendedPair {
  const TensorArg& in;
  const TensorArg& mirror_in;
  const TensorArg& out;
  const TensorArg& mirror_out;
  int64_t add;
  int64_t add_per_index;
};

// Checks that every value of `p` is representable (int64 arithmetic and the output dtypes);
// reads only, so it runs before anything is written.
void check_extended_pair_host(const char* fn, const ExtendedPair& p);

// Fails unless a host mirror holds the values of its (host) main tensor; absent mirrors and
// mirrors that are the main tensor's very view pass. Reads only.
void check_mirror_host(const char* fn, const TensorArg& main, const TensorArg& mirror);

// Writes the outputs of a checked pair. Outputs may be the inputs themselves, and a mirror may
// share memory with its main tensor: element i of every input is read before element i of any
// output is written.
void write_extended_pair_host(const ExtendedPair& p);

// Fails unless every extended length seq_lens[b] + n lies in [0, INT32_MAX], where the DCP
// split (get_dcp_local_seq_lens, int32 in vLLM) is exact. Reads only.
void check_extended_dcp_lens_host(const char* fn, const TensorArg& seq_lens, int64_t n);

}  // namespace cattn
