/* SPDX-License-Identifier: Apache-2.0 */
// A TensorMaker (support/step_inputs_case.h) that hands the calls device copies, for the GPU
// suites that run the vector cases of the host suites.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "support/device_tensor.h"
#include "support/step_inputs_case.h"

#if defined(CATTN_TEST_WITH_CUDA)
namespace cattn_test {

// Every make() uploads the host tensor into a new device copy; download() reads the latest
// copy back, so an output read back and passed on is the device's own result.
struct DeviceMaker {
  std::vector<std::unique_ptr<DeviceTensor>> all;
  std::map<HostTensor*, DeviceTensor*> latest;
  TensorMaker maker() {
    return {[this](HostTensor& t) {
              all.push_back(std::make_unique<DeviceTensor>(t));
              latest[&t] = all.back().get();
              return all.back()->dl();
            },
            [this](HostTensor& t) {
              auto it = latest.find(&t);
              if (it != latest.end()) it->second->download();
            },
            [] { ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess); }};
  }
};

}  // namespace cattn_test
#endif  // CATTN_TEST_WITH_CUDA
