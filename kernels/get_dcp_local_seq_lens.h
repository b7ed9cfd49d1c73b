// Launcher interface of the DCP local sequence lengths (vLLM get_dcp_local_seq_lens).
#pragma once

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct DcpLocalSeqLensParams {
  IndexSpan seq_lens;   // [B]
  MutIndexMatrix out;   // [B, ranks]; ranks = 1 when one rank is asked for
  int64_t dcp_size = 1;
  int64_t dcp_rank = -1;  // -1: column c is rank c
  int64_t interleave = 1;
};

int launch_get_dcp_local_seq_lens(const DcpLocalSeqLensParams& p, const DeviceShape& dev,
                                  void* stream);

}  // namespace kernels
}  // namespace cattn
