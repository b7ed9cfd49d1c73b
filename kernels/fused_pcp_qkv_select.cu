// Launch logic of the fused PCP Q/K/V select: picks the widest access every operand allows and
// sizes the grid from the device: one warp per row, up to 64 waves of resident blocks (then
// warps loop over rows).
#include <cuda_runtime.h>

#include "kernels/fused_pcp_qkv_select.cuh"

namespace cattn {
namespace kernels {
namespace {

bool operand_allows(const SelectOperand& o, int64_t bytes) {
  auto ok = [&](int64_t v) { return v % bytes == 0; };
  return ok(reinterpret_cast<uintptr_t>(o.src)) && ok(reinterpret_cast<uintptr_t>(o.dst_head)) &&
         ok(reinterpret_cast<uintptr_t>(o.dst_tail)) && ok(o.src_row_stride) &&
         ok(o.src_head_stride) && ok(o.head_bytes);
}

// Blocks that fit on one SM at once; asked of the runtime once per width (it depends only on
// the kernel's resources and the architecture, the same for every device of one build target).
template <int kBytes>
int resident_blocks_per_sm() {
  static const int n = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, fused_pcp_qkv_select_kernel<kBytes>,
                                                      kSelectThreads, 0) != cudaSuccess ||
        b < 1) {
      (void)cudaGetLastError();
      b = 1;
    }
    return b;
  }();
  return n;
}

template <int kBytes>
cudaError_t launch_width(const FusedSelectParams& p, int64_t rows, const DeviceShape& dev,
                         cudaStream_t stream) {
  // A warp per row while that fits in kWaves waves of resident blocks (measured on an H200:
  // 0.92-0.96 of copy where one looping wave reached 0.89-0.92, see bench/README.md).
  const int64_t full = static_cast<int64_t>(dev.sm_count) * resident_blocks_per_sm<kBytes>();
  const int64_t wanted = (rows + kSelectThreads / 32 - 1) / (kSelectThreads / 32);
  int64_t cap = SelectTuning::kWaves > 0 ? full * SelectTuning::kWaves : int64_t{0x7fffffff};
  if (cap > 0x7fffffff) cap = 0x7fffffff;
  const int64_t blocks = wanted < cap ? wanted : cap;
  fused_pcp_qkv_select_kernel<kBytes>
      <<<static_cast<unsigned>(blocks), kSelectThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

int launch_fused_pcp_qkv_select(const FusedSelectParams& p, const DeviceShape& dev,
                                void* stream) {
  const int64_t rows = p.q.dst_head_rows + p.k.dst_tail_rows + p.v.dst_tail_rows;
  if (rows == 0 || p.heads == 0) return cudaSuccess;
  auto s = static_cast<cudaStream_t>(stream);
  int width = 16;
  while (width > 1 && !(operand_allows(p.q, width) && operand_allows(p.k, width) &&
                        operand_allows(p.v, width)))
    width /= 2;
  switch (width) {
    case 16: return launch_width<16>(p, rows, dev, s);
    case 8: return launch_width<8>(p, rows, dev, s);
    case 4: return launch_width<4>(p, rows, dev, s);
    case 2: return launch_width<2>(p, rows, dev, s);
    default: return launch_width<1>(p, rows, dev, s);
  }
}

}  // namespace kernels
}  // namespace cattn
