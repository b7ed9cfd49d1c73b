// SPDX-License-Identifier: Apache-2.0
// Parameter and shape checks of the step inputs (common/step_inputs.h).
#include "common/step_inputs.h"

#include <string>

#include "common/error.h"
#include "common/param_checks.h"
#include "kernels/step_inputs.h"

namespace cattn {
namespace {

std::string named(const char* prefix, const char* field) { return std::string(prefix) + field; }

}  // namespace

void check_slot_mapping_contract(const char* fn, const char* name, int32_t contract) {
  if (contract != CATTN_SLOT_MAPPING_MRV2 && contract != CATTN_SLOT_MAPPING_V1)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "is not a slot-mapping contract",
             std::to_string(contract), "CATTN_SLOT_MAPPING_MRV2 (0) or CATTN_SLOT_MAPPING_V1 (1)");
}

void check_slot_mapping_params(const char* fn, const char* prefix, const char* dcp_prefix,
                               int32_t contract, int64_t block_size, int64_t kernel_block_size,
                               int64_t dcp_size, int64_t dcp_rank, int64_t interleave) {
  expect_at_least(fn, prefix, "block_size", block_size, 1);
  expect_at_least(fn, prefix, "kernel_block_size", kernel_block_size, 1);
  if (block_size % kernel_block_size != 0)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, named(prefix, "kernel_block_size").c_str(),
             "does not divide block_size", std::to_string(kernel_block_size),
             "a divisor of " + std::to_string(block_size));
  expect_at_least(fn, dcp_prefix, "dcp_size", dcp_size, 1);
  expect_at_least(fn, dcp_prefix, "dcp_kv_cache_interleave_size", interleave, 1);
  if (dcp_rank < 0 || dcp_rank >= dcp_size)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, named(dcp_prefix, "dcp_rank").c_str(), "is out of range",
             std::to_string(dcp_rank), "in [0, " + std::to_string(dcp_size) + ")");
  // The interleave divides the contract's block (vLLM asserts it of the block size): otherwise
  // a run of I tokens straddles two blocks and a slot lands in another block's range.
  const int64_t unit = contract == CATTN_SLOT_MAPPING_V1 ? block_size : kernel_block_size;
  if (unit % interleave != 0)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, named(dcp_prefix, "dcp_kv_cache_interleave_size").c_str(),
             "does not divide the block", std::to_string(interleave),
             std::string("a divisor of ") +
                 (contract == CATTN_SLOT_MAPPING_V1 ? "block_size (" : "kernel_block_size (") +
                 std::to_string(unit) + ")");
  // The virtual block (block x DCP) and the interleave step must stay far from int64's end.
  if (unit > (int64_t{1} << 31) || dcp_size > (int64_t{1} << 16) ||
      interleave > (int64_t{1} << 31))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, named(prefix, "block_size").c_str(),
             "with dcp_size and the interleave is too large",
             std::to_string(unit) + " x " + std::to_string(dcp_size) + " x " +
                 std::to_string(interleave),
             "block sizes and interleave <= 2^31, dcp_size <= 2^16");
}

void check_num_new_sampled(const char* fn, const char* prefix, int64_t n) {
  if (n != 0 && n != 1)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, named(prefix, "num_new_sampled_tokens").c_str(),
             "is not 0 or 1", std::to_string(n), "0 or 1 (vLLM asserts)");
}

int64_t expect_query_start_loc(const TensorArg& qsl) {
  qsl.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
  if (qsl.size(0) < 1)
    fail_arg(CATTN_INVALID_ARGUMENT, qsl.fn(), qsl.name(), "is empty", qsl.shape_string(),
             "B + 1 >= 1 entries");
  return qsl.size(0) - 1;
}

void expect_index_vector(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_index_dtype().expect_size(0, n);
}
void expect_index_scalar(const TensorArg& t) { t.expect_ndim(1).expect_index_dtype().expect_size(0, 1); }
void expect_index_output(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_index_dtype().expect_writable().expect_capacity(n);
}

void expect_device_rows(const char* fn, const TensorArg& t, int64_t rows) {
  if (rows > kernels::kStepInputsMaxRows)
    fail_arg(CATTN_NOT_SUPPORTED, fn, t.name(), "has more rows than the device path takes",
             t.shape_string(),
             "at most " + std::to_string(kernels::kStepInputsMaxRows) + " rows on a GPU");
}

}  // namespace cattn
