// The floor under every small utility: one empty kernel launched on a stream, which is what a
// one-launch utility costs before it does any work of its own.
#include <cuda_runtime.h>

namespace {
__global__ void empty_kernel() {}
}  // namespace

cudaError_t bench_launch_empty(cudaStream_t s) {
  empty_kernel<<<1, 32, 0, s>>>();
  return cudaGetLastError();
}
