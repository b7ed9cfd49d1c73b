// Loads oracle-generated conformance vectors (tests/vectors/<utility>.json).
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace cattn_test {

inline nlohmann::json load_vectors(const std::string& utility) {
  const std::string path = std::string(CATTN_TEST_VECTOR_DIR) + "/" + utility + ".json";
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(f);
}

inline std::vector<int64_t> ints(const nlohmann::json& j) { return j.get<std::vector<int64_t>>(); }

}  // namespace cattn_test
