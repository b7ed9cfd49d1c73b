/* SPDX-License-Identifier: Apache-2.0 */
// Loads oracle-generated conformance vectors (tests/vectors/<utility>.json).
#pragma once

#include <cstdlib>
#include <climits>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace cattn_test {

// The vectors' folder is compiled in; CATTN_TEST_VECTOR_DIR in the environment overrides it, so
// a test binary carried to another machine (scripts/device_check.sh) finds the checkout's copy.
inline nlohmann::json load_vectors(const std::string& utility) {
  const char* dir = std::getenv("CATTN_TEST_VECTOR_DIR");
  const std::string path = std::string(dir && *dir ? dir : CATTN_TEST_VECTOR_DIR) + "/" +
                           utility + ".json";
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(f);
}

inline std::vector<int64_t> ints(const nlohmann::json& j) { return j.get<std::vector<int64_t>>(); }

// Whether every value fits int32 (a vector that may also run in int32 tensors).
inline bool all_fit_int32(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x < INT32_MIN || x > INT32_MAX) return false;
  return true;
}

}  // namespace cattn_test
