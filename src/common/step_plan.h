/* SPDX-License-Identifier: Apache-2.0 */
// The step plan object behind cattn_step_plan_t: the desc it was made from and what creation
// derived - the outputs' capacities and the launch layout. Immutable once created, so runs on
// any number of threads only read it.
#pragma once

#include <cstdint>

#include "cattn.h"
#include "common/handle_registry.h"
#include "kernels/step_plan.h"

struct cattn_step_plan_s {
  uint64_t magic = static_cast<uint64_t>(cattn::HandleKind::StepPlan);
  cattn_step_plan_desc_t desc{};   // struct_size set to this header's size
  cattn_step_plan_shape_t shape{};
  // Blocks of each product, as kernels::StepPlanParams::block_end.
  int64_t block_end[cattn::kernels::kStepProducts] = {};

  bool has(cattn::kernels::StepProduct k) const { return (desc.products >> k) & 1u; }
};

namespace cattn {
using StepPlan = cattn_step_plan_s;
}  // namespace cattn
