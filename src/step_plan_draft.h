/* SPDX-License-Identifier: Apache-2.0 */
// The step plan's drafter products (CATTN_STEP_DRAFT_* and CATTN_STEP_BATCH_CHANGE): their desc
// rules at creation and their run tensors' checks. Private to the entry point
// (src/step_plan.cpp); the kernel parameters are built in device/step_plan_device.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/step_plan.h"

namespace cattn {

// The run checks the plan's products share (src/step_plan.cpp): a products mask in hex, a
// tensor a selected product needs, and a count held to one of the plan's capacities.
std::string step_plan_hex(uint32_t v);
void step_plan_expect_needed(const TensorArg& t, const char* why);
void step_plan_expect_within(const TensorArg& t, int64_t n, const char* what,
                             const char* cap_name, int64_t cap);

// Checks which products a desc that selects a drafter product selects with it (`given`: the
// caller's struct_size), before any product's parameters.
void check_draft_selection(const char* fn, const cattn_step_plan_desc_t& d, size_t given);

// Checks the drafter products' parameters; fills shape.draft_token_capacity and the chain's
// blocks (after the 1.1 products' layout).
void check_draft_desc(const char* fn, StepPlanSpec& plan);

// Checks the drafter products' batch tensors and outputs of a run, the generic batch checks
// having passed (`reqs`: B from them, or -1); returns B. Records the very views a drafter
// product may update in place.
int64_t check_draft_run(const StepPlanSpec& plan, StepRunArgs& a, int64_t reqs);

}  // namespace cattn
