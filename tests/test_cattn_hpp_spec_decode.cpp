// SPDX-License-Identifier: Apache-2.0
// cattn.hpp's speculative-decoding wrappers (1.2) on host tensors: every case of
// tests/vectors/spec_decode.json (vLLM's spec_decode/utils.py, tests/gen/gen_spec_decode.py)
// through the view-taking overload in the vectors' dtypes, over buffers that start as the
// vectors' (so entries a call must leave are checked too), and through the one-call helper on
// int64 vectors; the flag dtypes; and refused arguments named in C++ terms.
#include "cattn.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/vectors.h"

#if defined(CATTN_TEST_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace {

using json = nlohmann::json;

// vLLM's vectors mark an entry the call did not write with -7777; a flag buffer cannot hold it,
// so flag outputs start as kFlagPoison and read back as -7777 while they still hold it.
constexpr int64_t kUnwritten = -7777;
constexpr uint8_t kFlagPoison = 0x55;
// DLPack's kDLBool, torch's bool export, which the system's older dlpack.h may not name.
constexpr DLDataType kBoolDtype{6, 8, 1};

// A nested int list, row-major.
std::vector<int64_t> flat(const json& j) {
  std::vector<int64_t> v;
  for (const auto& x : j) {
    if (x.is_array()) {
      for (const auto& y : x) v.push_back(y.get<int64_t>());
    } else {
      v.push_back(x.get<int64_t>());
    }
  }
  return v;
}

// The int32 two's-complement value of x: what vLLM's 32-bit `block * block_size` gives.
int64_t wrap32(int64_t x) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x)));
}
std::vector<int64_t> wrapped32(std::vector<int64_t> v) {
  for (int64_t& x : v) x = wrap32(x);
  return v;
}

// The first n entries, with the unwritten mark as `as` (a one-call helper's zeros).
std::vector<int64_t> prefix(const json& j, size_t n, int64_t as = kUnwritten) {
  std::vector<int64_t> v = flat(j);
  v.resize(std::min(n, v.size()));
  for (int64_t& x : v)
    if (x == kUnwritten) x = as;
  return v;
}

template <class T>
std::vector<int64_t> widen(const std::vector<T>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

// "" when equal, else where they first differ: keeps a failing case's report short.
std::string difference(const std::vector<int64_t>& got, const std::vector<int64_t>& want) {
  if (got == want) return "";
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return "differs at " + std::to_string(i) + " of " + std::to_string(got.size()) + " (want " +
         std::to_string(want.size()) + "): got " +
         (i < got.size() ? std::to_string(got[i]) : std::string("nothing")) + ", want " +
         (i < want.size() ? std::to_string(want[i]) : std::string("nothing"));
}
#define EXPECT_SAME(got, want, what) \
  EXPECT_EQ(difference((got), (want)), "") << name << ": " << (what)

// One tensor of a case in the vectors' dtype ("int32", "int64" or "bool": one byte per entry),
// 1-D or 2-D as its nesting.
class tensor {
 public:
  tensor(const json& values, const std::string& dtype) : dtype_(dtype) {
    const std::vector<int64_t> v = flat(values);
    if (!values.empty() && values[0].is_array())
      shape_ = {static_cast<int64_t>(values.size()), static_cast<int64_t>(values[0].size())};
    else
      shape_ = {static_cast<int64_t>(v.size())};
    if (dtype == "int32") {
      i32_.assign(v.begin(), v.end());
    } else if (dtype == "int64") {
      i64_ = v;
    } else if (dtype == "bool") {
      for (int64_t x : v) u8_.push_back(x == kUnwritten ? kFlagPoison : static_cast<uint8_t>(x));
    } else {
      ADD_FAILURE() << "unexpected dtype " << dtype;
    }
  }
  // A bool buffer of n entries, all kFlagPoison.
  static tensor flags(int64_t n) {
    return tensor(json(std::vector<int64_t>(static_cast<size_t>(n), kUnwritten)), "bool");
  }

  cattn::index_cview in() const {
    if (dtype_ == "int32") return cattn::tensor_view<const int32_t>(i32_.data(), shape_);
    return cattn::tensor_view<const int64_t>(i64_.data(), shape_);
  }
  cattn::index_view out() {
    if (dtype_ == "int32") return cattn::tensor_view<int32_t>(i32_.data(), shape_);
    return cattn::tensor_view<int64_t>(i64_.data(), shape_);
  }
  // The first `cols` columns of a 2-D tensor: a view with the row stride of the whole.
  cattn::index_cview columns(int64_t cols) const {
    const int64_t rows = shape_[0], stride = shape_[1];
    if (dtype_ == "int32")
      return cattn::tensor_view<const int32_t>(i32_.data(), {rows, cols}, {stride, 1});
    return cattn::tensor_view<const int64_t>(i64_.data(), {rows, cols}, {stride, 1});
  }
  // Flags as uint8 (kDLUInt 8), or as DLPack's bool.
  cattn::any_cview flags_in(bool as_dlpack_bool = false) const {
    const cattn::tensor_view<const uint8_t> v(u8_.data(), shape_);
    return as_dlpack_bool ? v.with_dtype(kBoolDtype) : v;
  }
  cattn::any_view flags_out() { return cattn::tensor_view<uint8_t>(u8_.data(), shape_); }

  std::vector<int64_t> values() const {
    if (dtype_ == "int32") return widen(i32_);
    if (dtype_ == "int64") return i64_;
    std::vector<int64_t> v;
    for (uint8_t x : u8_) v.push_back(x == kFlagPoison ? kUnwritten : x);
    return v;
  }

 private:
  std::string dtype_;
  std::vector<int64_t> shape_;
  std::vector<int32_t> i32_;
  std::vector<int64_t> i64_;
  std::vector<uint8_t> u8_;
};

// The cases of one function.
std::vector<json> cases_of(const std::string& function) {
  static const json all = cattn_test::load_vectors("spec_decode");
  std::vector<json> out;
  for (const auto& c : all["cases"])
    if (c["function"] == function) out.push_back(c);
  return out;
}

// Runs `call` expecting a cattn::error; returns it (or a CATTN_OK one when nothing was thrown).
template <class F>
cattn::error thrown_by(F&& call) {
  try {
    call();
  } catch (const cattn::error& e) {
    return e;
  }
  ADD_FAILURE() << "no cattn::error was thrown";
  return cattn::error(CATTN_OK, "");
}
bool starts_with(const std::string& s, const std::string& head) { return s.rfind(head, 0) == 0; }
// A refusal with `status` whose message names `cpp` and whose library message names `c`.
#define EXPECT_REFUSED(error_, status_, cpp_, c_)                                       \
  do {                                                                                  \
    const cattn::error& e_ = (error_);                                                  \
    EXPECT_EQ(e_.status(), status_) << e_.what();                                       \
    EXPECT_TRUE(starts_with(e_.message(), cpp_)) << e_.message();                       \
    EXPECT_TRUE(starts_with(e_.c_message(), c_)) << e_.c_message();                     \
  } while (0)

// ---- Compile-time constraints and defaults ----------------------------------------------------

template <class V>
using next_token_mask = decltype(cattn::eagle_prepare_next_token_padded(
    50, std::declval<const std::vector<int32_t>&>(), std::declval<V>(),
    std::declval<const std::vector<int32_t>&>()));
template <class V>
using new_slots_into = decltype(cattn::compute_new_slot_mapping(
    cattn::new_slot_mapping_params{}, cattn::index_cview(), cattn::index_cview(),
    cattn::index_cview(), cattn::any_cview(), std::declval<V>()));
template <class V>
using batch_change_counts = decltype(cattn::update_num_computed_tokens_for_batch_change(
    std::declval<V>(), std::declval<V>(), cattn::index_cview(), cattn::index_cview(),
    cattn::index_cview(), cattn::index_cview()));

template <class, template <class...> class Op, class... Args>
struct detector : std::false_type {};
template <template <class...> class Op, class... Args>
struct detector<std::void_t<Op<Args...>>, Op, Args...> : std::true_type {};
template <template <class...> class Op, class... Args>
constexpr bool compiles = detector<void, Op, Args...>::value;

}  // namespace

TEST(cattn_hpp_spec_decode, ArgumentKindsAndDefaults) {
  // Masks are one byte per entry: bool, uint8 and int8 arrays all convert (the C call refuses
  // other dtypes at run time); std::vector<bool> has no bytes to view.
  static_assert(compiles<next_token_mask, const std::vector<uint8_t>&>);
  static_assert(compiles<next_token_mask, const std::vector<int8_t>&>);
  static_assert(compiles<next_token_mask, const bool (&)[2]>);
  static_assert(compiles<next_token_mask, cattn::any_cview>);
  static_assert(!compiles<next_token_mask, const std::vector<bool>&>);
  // Slots are written into mutable index memory only.
  static_assert(compiles<new_slots_into, std::vector<int64_t>&>);
  static_assert(!compiles<new_slots_into, const std::vector<int64_t>&>);
  static_assert(!compiles<new_slots_into, std::vector<double>&>);
  // The batch-change counts are updated in place: mutable memory only.
  static_assert(compiles<batch_change_counts, std::vector<int32_t>&>);
  static_assert(!compiles<batch_change_counts, const std::vector<int32_t>&>);

  // The defaults are the C initialisers'.
  const cattn_eagle_step_update_slot_mapping_and_metadata_args_t step_init =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  const cattn::eagle_step_params step;
  EXPECT_EQ(step.block_size, step_init.block_size);
  EXPECT_EQ(step.max_model_len, step_init.max_model_len);
  EXPECT_EQ(step.input_batch_size, step_init.input_batch_size);
  const cattn_compute_new_slot_mapping_args_t slots_init = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  const cattn::new_slot_mapping_params slots;
  EXPECT_EQ(slots.block_size, slots_init.block_size);
  EXPECT_EQ(slots.num_new_tokens, slots_init.num_new_tokens);
  EXPECT_EQ(slots.max_model_len, slots_init.max_model_len);
  const cattn_copy_and_expand_eagle_inputs_args_t inputs_init =
      CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  const cattn::eagle_inputs_params inputs;
  EXPECT_EQ(inputs.padding_token_id, inputs_init.padding_token_id);
  EXPECT_EQ(inputs.parallel_drafting_token_id, inputs_init.parallel_drafting_token_id);
  EXPECT_EQ(inputs.num_padding_slots_per_request, inputs_init.num_padding_slots_per_request);
  EXPECT_EQ(inputs.max_tokens_per_request, inputs_init.max_tokens_per_request);
  EXPECT_EQ(inputs.shift_input_ids ? 1 : 0, inputs_init.shift_input_ids);
}

// ---- The vectors ------------------------------------------------------------------------------

TEST(cattn_hpp_spec_decode, EagleStepUpdateSlotMappingAndMetadataVectors) {
  int cases = 0, wraps = 0;
  for (const json& c : cases_of("eagle_step_update_slot_mapping_and_metadata")) {
    const std::string name = c["name"];
    const json &in = c["inputs"], &want = c["expected"], &dt = c["dtypes"];
    const bool wrap = c.value("int32_wrap", false);
    const auto slots_as_vllm = [&](const std::vector<int64_t>& v) {
      return wrap ? wrapped32(v) : v;
    };
    cattn::eagle_step_params p;
    p.block_size = in["block_size"];
    p.max_model_len = in["max_model_len"];
    p.input_batch_size = in["input_batch_size"];
    const int64_t n_blocks = in["n_blocks_per_req"];

    // The view overload: the table's first n_blocks_per_req columns as a strided view.
    const tensor positions(in["positions"], dt["positions"]);
    const tensor table(in["block_table"], dt["block_table"]);
    tensor seq_lens(in["seq_lens"], dt["seq_lens"]);
    tensor clamped(in["out_clamped_positions_init"], dt["out_clamped_positions"]);
    tensor slots(in["out_slot_mapping_init"], dt["out_slot_mapping"]);
    cattn::eagle_step_update_slot_mapping_and_metadata(p, positions.in(), table.columns(n_blocks),
                                                        seq_lens.out(),
                                                        {clamped.out(), slots.out()});
    EXPECT_SAME(clamped.values(), flat(want["out_clamped_positions"]), "out.clamped_positions");
    EXPECT_SAME(slots_as_vllm(slots.values()), flat(want["out_slot_mapping"]), "out.slot_mapping");
    EXPECT_SAME(seq_lens.values(), flat(want["seq_lens"]), "seq_lens");
    if (wrap) {
      // libcattn's slots are exact: some pass 2^31 where vLLM's wrapped.
      const std::vector<int64_t> got = slots.values();
      EXPECT_TRUE(std::any_of(got.begin(), got.end(), [](int64_t x) { return x > INT32_MAX; }))
          << name;
      ++wraps;
    }

    // One-call, on int64 inputs: outputs [B] and [max(input_batch_size, B)]; seq_lens in place.
    const std::vector<int64_t> pos64 = flat(in["positions"]), table64 = flat(in["block_table"]);
    std::vector<int64_t> seq64 = flat(in["seq_lens"]);
    const int64_t b = static_cast<int64_t>(pos64.size());
    const int64_t stride = static_cast<int64_t>(in["block_table"][0].size());
    const auto r = cattn::eagle_step_update_slot_mapping_and_metadata(
        p, pos64, cattn::tensor_view<const int64_t>(table64.data(), {b, n_blocks}, {stride, 1}),
        seq64);
    EXPECT_SAME(r.clamped_positions, prefix(want["out_clamped_positions"], pos64.size()),
                "one-call clamped_positions");
    EXPECT_SAME(slots_as_vllm(r.slot_mapping),
                prefix(want["out_slot_mapping"],
                       static_cast<size_t>(std::max(p.input_batch_size, b))),
                "one-call slot_mapping");
    EXPECT_SAME(seq64, flat(want["seq_lens"]), "one-call seq_lens");
    ++cases;
  }
  EXPECT_GE(cases, 20);
  EXPECT_GE(wraps, 1);
}

TEST(cattn_hpp_spec_decode, EaglePrepareInputsPaddedVectors) {
  int cases = 0;
  for (const json& c : cases_of("eagle_prepare_inputs_padded")) {
    const std::string name = c["name"];
    const json &in = c["inputs"], &want = c["expected"], &dt = c["dtypes"];
    const tensor cu(in["cu_num_draft_tokens"], dt["cu_num_draft_tokens"]);
    const tensor valid(in["valid_sampled_tokens_count"], dt["valid_sampled_tokens_count"]);
    const tensor qsl(in["query_start_loc"], dt["query_start_loc"]);
    tensor sample(in["token_indices_to_sample_init"], dt["token_indices_to_sample"]);
    tensor rejected(in["num_rejected_tokens_init"], dt["num_rejected_tokens"]);
    cattn::eagle_prepare_inputs_padded(cu.in(), valid.in(), qsl.in(),
                                       {sample.out(), rejected.out()});
    EXPECT_SAME(sample.values(), flat(want["token_indices_to_sample"]),
                "out.token_indices_to_sample");
    EXPECT_SAME(rejected.values(), flat(want["num_rejected_tokens"]), "out.num_rejected_tokens");

    // One-call, int64 inputs, int32 and int64 results of B entries.
    const std::vector<int64_t> cu64 = flat(in["cu_num_draft_tokens"]);
    const size_t b = cu64.size();
    const auto r32 = cattn::eagle_prepare_inputs_padded<int32_t>(
        cu64, flat(in["valid_sampled_tokens_count"]), flat(in["query_start_loc"]));
    EXPECT_SAME(widen(r32.token_indices_to_sample), prefix(want["token_indices_to_sample"], b),
                "one-call token_indices_to_sample");
    EXPECT_SAME(widen(r32.num_rejected_tokens), prefix(want["num_rejected_tokens"], b),
                "one-call num_rejected_tokens");
    const auto r64 = cattn::eagle_prepare_inputs_padded(cu.in(), valid.in(), qsl.in());
    EXPECT_SAME(r64.token_indices_to_sample, widen(r32.token_indices_to_sample), "int64 results");
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

TEST(cattn_hpp_spec_decode, EaglePrepareNextTokenPaddedVectors) {
  int cases = 0;
  for (const json& c : cases_of("eagle_prepare_next_token_padded")) {
    const std::string name = c["name"];
    const json &in = c["inputs"], &want = c["expected"], &dt = c["dtypes"];
    const int64_t vocab = in["vocab_size"], s = in["num_sampled_tokens_per_req"];
    ASSERT_EQ(in["stride_sampled_token_ids"].get<int64_t>(),
              static_cast<int64_t>(in["sampled_token_ids"][0].size()))
        << name;
    // sampled_token_ids [B, stride], of which the first S columns are read.
    const tensor sampled(in["sampled_token_ids"], dt["sampled_token_ids"]);
    const tensor discard(in["discard_request_mask"], dt["discard_request_mask"]);
    const tensor backup(in["backup_next_token_ids"], dt["backup_next_token_ids"]);
    tensor next(in["next_token_ids_init"], dt["next_token_ids"]);
    tensor valid(in["valid_sampled_tokens_count_init"], dt["valid_sampled_tokens_count"]);
    cattn::eagle_prepare_next_token_padded(vocab, sampled.columns(s), discard.flags_in(),
                                           backup.in(), {next.out(), valid.out()});
    EXPECT_SAME(next.values(), flat(want["next_token_ids"]), "out.next_token_ids");
    EXPECT_SAME(valid.values(), flat(want["valid_sampled_tokens_count"]),
                "out.valid_sampled_tokens_count");

    // One-call, int64 tokens, the mask as DLPack's bool (torch's export).
    const std::vector<int64_t> sampled64 = flat(in["sampled_token_ids"]);
    const int64_t b = static_cast<int64_t>(in["sampled_token_ids"].size());
    const int64_t stride = in["stride_sampled_token_ids"];
    const auto r = cattn::eagle_prepare_next_token_padded(
        vocab, cattn::tensor_view<const int64_t>(sampled64.data(), {b, s}, {stride, 1}),
        discard.flags_in(true), flat(in["backup_next_token_ids"]));
    EXPECT_SAME(r.next_token_ids, prefix(want["next_token_ids"], static_cast<size_t>(b)),
                "one-call next_token_ids");
    EXPECT_SAME(r.valid_sampled_tokens_count,
                prefix(want["valid_sampled_tokens_count"], static_cast<size_t>(b)),
                "one-call valid_sampled_tokens_count");
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

TEST(cattn_hpp_spec_decode, ComputeNewSlotMappingVectors) {
  int cases = 0, wraps = 0;
  for (const json& c : cases_of("compute_new_slot_mapping")) {
    const std::string name = c["name"];
    const json &in = c["inputs"], &want = c["expected"], &dt = c["dtypes"];
    const bool wrap = c.value("int32_wrap", false);
    cattn::new_slot_mapping_params p;
    p.block_size = in["block_size"];
    p.num_new_tokens = in["num_new_tokens"];
    p.max_model_len = in["max_model_len"];
    const tensor qsl(in["query_start_loc"], dt["query_start_loc"]);
    const tensor table(in["block_table"], dt["block_table"]);
    const tensor positions(in["new_positions"], dt["new_positions"]);
    const tensor rejected(in["is_rejected_token_mask"], dt["is_rejected_token_mask"]);
    // Two entries past n, which the call leaves as they are.
    std::vector<int64_t> want_slots = flat(want["new_slot_mapping"]);
    const size_t n = want_slots.size();
    std::vector<int64_t> out(n + 2, kUnwritten);
    cattn::compute_new_slot_mapping(p, qsl.in(), table.in(), positions.in(), rejected.flags_in(),
                                    out);
    want_slots.resize(n + 2, kUnwritten);
    EXPECT_SAME(wrap ? wrapped32(out) : out, want_slots, "new_slot_mapping");
    if (wrap) {
      EXPECT_TRUE(std::any_of(out.begin(), out.end(), [](int64_t x) { return x > INT32_MAX; }))
          << name;
      ++wraps;
    }
    // One-call, int64 inputs, the mask as DLPack's bool: n slots.
    const std::vector<int64_t> table64 = flat(in["block_table"]);
    const int64_t rows = static_cast<int64_t>(in["block_table"].size());
    const std::vector<int64_t> got = cattn::compute_new_slot_mapping(
        p, flat(in["query_start_loc"]),
        cattn::tensor_view(table64, {rows, static_cast<int64_t>(table64.size()) / rows}),
        flat(in["new_positions"]), rejected.flags_in(true));
    EXPECT_SAME(wrap ? wrapped32(got) : got, prefix(want["new_slot_mapping"], n),
                "one-call new_slot_mapping");
    ++cases;
  }
  EXPECT_GE(cases, 20);
  EXPECT_GE(wraps, 1);
}

TEST(cattn_hpp_spec_decode, CopyAndExpandEagleInputsVectors) {
  int cases = 0, truncated = 0;
  for (const json& c : cases_of("copy_and_expand_eagle_inputs")) {
    const std::string name = c["name"];
    const json &in = c["inputs"], &want = c["expected"], &dt = c["dtypes"];
    cattn::eagle_inputs_params p;
    p.padding_token_id = in["padding_token_id"];
    p.parallel_drafting_token_id = in["parallel_drafting_token_id"];
    p.num_padding_slots_per_request = in["num_padding_slots_per_request"];
    // vLLM's grid: num_blocks blocks of BLOCK_SIZE_TOKENS tokens per request.
    p.max_tokens_per_request =
        in["num_blocks"].get<int64_t>() * in["BLOCK_SIZE_TOKENS"].get<int64_t>();
    p.shift_input_ids = in["shift_input_ids"].get<int64_t>() != 0;
    truncated += c.value("truncated", false);

    const tensor ids(in["target_token_ids"], dt["target_token_ids"]);
    const tensor positions(in["target_positions"], dt["target_positions"]);
    const tensor next(in["next_token_ids"], dt["next_token_ids"]);
    const tensor qsl(in["query_start_loc"], dt["query_start_loc"]);
    const tensor qel(in["query_end_loc"], dt["query_end_loc"]);
    tensor out_ids(in["out_input_ids_init"], dt["out_input_ids"]);
    tensor out_positions(in["out_positions_init"], dt["out_positions"]);
    tensor out_rejected = tensor::flags(in["out_mask_len"]);
    tensor out_masked = tensor::flags(in["out_mask_len"]);
    tensor out_new(in["out_new_token_indices_init"], dt["out_new_token_indices"]);
    // Passed without shift_input_ids too: left as it is then.
    tensor out_hidden(in["out_hidden_state_mapping_init"], dt["out_hidden_state_mapping"]);
    cattn::eagle_inputs_outputs out;
    out.input_ids = out_ids.out();
    out.positions = out_positions.out();
    out.is_rejected_token_mask = out_rejected.flags_out();
    out.is_masked_token_mask = out_masked.flags_out();
    out.new_token_indices = out_new.out();
    out.hidden_state_mapping = out_hidden.out();
    cattn::copy_and_expand_eagle_inputs(p, ids.in(), positions.in(), next.in(), qsl.in(),
                                        qel.in(), out);
    EXPECT_SAME(out_ids.values(), flat(want["out_input_ids"]), "out.input_ids");
    EXPECT_SAME(out_positions.values(), flat(want["out_positions"]), "out.positions");
    EXPECT_SAME(out_rejected.values(), flat(want["out_is_rejected_token_mask"]),
                "out.is_rejected_token_mask");
    EXPECT_SAME(out_masked.values(), flat(want["out_is_masked_token_mask"]),
                "out.is_masked_token_mask");
    EXPECT_SAME(out_new.values(), flat(want["out_new_token_indices"]), "out.new_token_indices");
    EXPECT_SAME(out_hidden.values(), flat(want["out_hidden_state_mapping"]),
                "out.hidden_state_mapping");

    // One-call, int64 inputs: every output sized from query_start_loc[B], 0 where unwritten.
    const std::vector<int64_t> qsl64 = flat(in["query_start_loc"]);
    const size_t b = qsl64.size() - 1, pp = static_cast<size_t>(p.num_padding_slots_per_request);
    const size_t n_out = static_cast<size_t>(qsl64[b]) + b * (pp - (p.shift_input_ids ? 1 : 0));
    const auto r = cattn::copy_and_expand_eagle_inputs<int32_t>(
        p, flat(in["target_token_ids"]), flat(in["target_positions"]), flat(in["next_token_ids"]),
        qsl64, flat(in["query_end_loc"]));
    EXPECT_SAME(widen(r.input_ids), prefix(want["out_input_ids"], n_out, 0), "one-call input_ids");
    EXPECT_SAME(widen(r.positions), prefix(want["out_positions"], n_out, 0), "one-call positions");
    EXPECT_SAME(widen(r.is_rejected_token_mask),
                prefix(want["out_is_rejected_token_mask"], n_out, 0),
                "one-call is_rejected_token_mask");
    EXPECT_SAME(widen(r.is_masked_token_mask), prefix(want["out_is_masked_token_mask"], n_out, 0),
                "one-call is_masked_token_mask");
    EXPECT_SAME(widen(r.new_token_indices), prefix(want["out_new_token_indices"], b * pp, 0),
                "one-call new_token_indices");
    EXPECT_SAME(widen(r.hidden_state_mapping),
                p.shift_input_ids
                    ? prefix(want["out_hidden_state_mapping"], static_cast<size_t>(qsl64[b]), 0)
                    : std::vector<int64_t>{},
                "one-call hidden_state_mapping");
    ++cases;
  }
  EXPECT_GE(cases, 20);
  EXPECT_GE(truncated, 1);
}

TEST(cattn_hpp_spec_decode, UpdateNumComputedTokensForBatchChangeVectors) {
  int cases = 0;
  for (const json& c : cases_of("update_num_computed_tokens_for_batch_change")) {
    const std::string name = c["name"];
    const json &in = c["inputs"], &want = c["expected"], &dt = c["dtypes"];
    tensor computed(in["num_computed_tokens"], dt["num_computed_tokens"]);
    tensor accepted(in["num_accepted_tokens"], dt["num_accepted_tokens"]);
    const tensor prev(in["prev_positions"], dt["prev_positions"]);
    const tensor valid(in["valid_sampled_token_count"], dt["valid_sampled_token_count"]);
    const tensor drafts(in["prev_num_draft_tokens"], dt["prev_num_draft_tokens"]);
    const tensor cpu(in["cpu_num_computed_tokens"], dt["cpu_num_computed_tokens"]);
    cattn::update_num_computed_tokens_for_batch_change(computed.out(), accepted.out(), prev.in(),
                                                       valid.in(), drafts.in(), cpu.in());
    EXPECT_SAME(computed.values(), flat(want["num_computed_tokens"]), "num_computed_tokens");
    EXPECT_SAME(accepted.values(), flat(want["num_accepted_tokens"]), "num_accepted_tokens");
    // The same on int64 vectors.
    std::vector<int64_t> computed64 = flat(in["num_computed_tokens"]);
    std::vector<int64_t> accepted64 = flat(in["num_accepted_tokens"]);
    cattn::update_num_computed_tokens_for_batch_change(
        computed64, accepted64, flat(in["prev_positions"]), flat(in["valid_sampled_token_count"]),
        flat(in["prev_num_draft_tokens"]), flat(in["cpu_num_computed_tokens"]));
    EXPECT_SAME(computed64, flat(want["num_computed_tokens"]), "int64 num_computed_tokens");
    EXPECT_SAME(accepted64, flat(want["num_accepted_tokens"]), "int64 num_accepted_tokens");
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

// ---- By hand: optional and aliased arguments, the flag kinds ---------------------------------

TEST(cattn_hpp_spec_decode, OptionalMasksAndInPlacePositions) {
  // The generator's README examples. Next tokens: no discard mask is none discarded; a bool
  // array discards row 2 (its backup, 0 valid).
  const std::vector<int32_t> sampled{5, 7, -1, -1, -1, -1, 3, 100, 4}, backup{11, 12, 13};
  const auto sampled_view = cattn::tensor_view(sampled, {3, 3});
  auto r = cattn::eagle_prepare_next_token_padded<int32_t>(50, sampled_view, {}, backup);
  EXPECT_EQ(r.next_token_ids, (std::vector<int32_t>{7, 12, 4}));
  EXPECT_EQ(r.valid_sampled_tokens_count, (std::vector<int32_t>{2, 0, 2}));
  const bool discard[3] = {false, false, true};
  r = cattn::eagle_prepare_next_token_padded<int32_t>(50, sampled_view, discard, backup);
  EXPECT_EQ(r.next_token_ids, (std::vector<int32_t>{7, 12, 13}));
  EXPECT_EQ(r.valid_sampled_tokens_count, (std::vector<int32_t>{2, 0, 0}));

  // New slots: without the mask, token 1 (position 9 < 10) keeps its slot, 5 * 4 + 1.
  cattn::new_slot_mapping_params sp;
  sp.block_size = 4;
  sp.num_new_tokens = 1;
  sp.max_model_len = 10;
  const std::vector<int32_t> qsl{0, 2, 3}, table{3, 4, 5, 6, 7, 8};
  const std::vector<int64_t> new_positions{8, 9, 10, 3, 4};
  const auto table_view = cattn::tensor_view(table, {2, 3});
  EXPECT_EQ(cattn::compute_new_slot_mapping(sp, qsl, table_view, new_positions),
            (std::vector<int64_t>{20, 21, -1, 27, 28}));
  const std::vector<int8_t> rejected{0, 1, 0, 0, 0};
  EXPECT_EQ(cattn::compute_new_slot_mapping(sp, qsl, table_view, new_positions, rejected),
            (std::vector<int64_t>{20, -1, -1, 27, 28}));

  // Expanded inputs with the optional outputs absent (n_out = 5 + 2 * 2), the rejected mask as
  // int8: request 0 keeps its 3 tokens, request 1 its first (its last is rejected).
  cattn::eagle_inputs_params ip;
  ip.padding_token_id = 77;
  ip.parallel_drafting_token_id = 5;
  ip.num_padding_slots_per_request = 2;
  const std::vector<int32_t> target_ids{10, 11, 12, 20, 21}, next_ids{99, 98};
  const std::vector<int64_t> target_positions{4, 5, 6, 8, 9};
  const std::vector<int32_t> starts{0, 3, 5}, ends{2, 3};
  std::vector<int32_t> ids(9, -1);
  std::vector<int64_t> positions(9, -1);
  std::vector<int8_t> rejected_out(9, 9);
  cattn::eagle_inputs_outputs out;
  out.input_ids = ids;
  out.positions = positions;
  out.is_rejected_token_mask = rejected_out;
  cattn::copy_and_expand_eagle_inputs(ip, target_ids, target_positions, next_ids, starts, ends,
                                      out);
  EXPECT_EQ(ids, (std::vector<int32_t>{10, 11, 12, 99, 5, 20, 98, 5, 77}));
  EXPECT_EQ(positions, (std::vector<int64_t>{4, 5, 6, 7, 8, 8, 9, 10, 0}));
  EXPECT_EQ(rejected_out, (std::vector<int8_t>{0, 0, 0, 0, 0, 0, 0, 0, 1}));

  // A step's clamped positions may be written over positions (the very view). Row 0 moves to
  // position 3 (block 10, slot 43); row 1 reaches max_model_len 8 (0, -1, seq_len 1); the
  // padding rows up to input_batch_size 4 get -1.
  cattn::eagle_step_params ep;
  ep.block_size = 4;
  ep.max_model_len = 8;
  ep.input_batch_size = 4;
  std::vector<int64_t> step_positions{2, 7}, slots(5, 99);
  std::vector<int32_t> seq_lens{3, 8};
  const std::vector<int32_t> step_table{10, 11, 20, 21};
  cattn::eagle_step_update_slot_mapping_and_metadata(
      ep, step_positions, cattn::tensor_view(step_table, {2, 2}), seq_lens,
      {step_positions, slots});
  EXPECT_EQ(step_positions, (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(slots, (std::vector<int64_t>{43, -1, -1, -1, 99}));
  EXPECT_EQ(seq_lens, (std::vector<int32_t>{4, 1}));
}

// ---- Refusals, named in C++ terms -------------------------------------------------------------

TEST(cattn_hpp_spec_decode, RefusalsNameTheCppArgument) {
  // eagle_step_update_slot_mapping_and_metadata
  {
    const char* cpp = "cattn::eagle_step_update_slot_mapping_and_metadata: ";
    const char* c = "cattn_eagle_step_update_slot_mapping_and_metadata: ";
    cattn::eagle_step_params p;
    p.block_size = 4;
    p.max_model_len = 8;
    std::vector<int64_t> positions{2, 7}, clamped(2), slots(2);
    std::vector<int32_t> seq_lens{3, 8};
    const std::vector<int32_t> table{10, 11, 20, 21};
    const auto t = cattn::tensor_view(table, {2, 2});
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_step_update_slot_mapping_and_metadata(p, {}, t, seq_lens,
                                                                        {clamped, slots});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "positions ",
                   std::string(c) + "args->positions ");
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_step_update_slot_mapping_and_metadata(p, positions, t, seq_lens,
                                                                        {clamped, positions});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "out.slot_mapping overlaps",
                   std::string(c) + "args->out_slot_mapping overlaps");
    cattn::eagle_step_params zero = p;
    zero.block_size = 0;
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_step_update_slot_mapping_and_metadata(zero, positions, t,
                                                                        seq_lens,
                                                                        {clamped, slots});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "params.block_size ",
                   std::string(c) + "args->block_size ");
    // The one-call helper's call names the same: an absent seq_lens.
    EXPECT_REFUSED(thrown_by([&] {
                     (void)cattn::eagle_step_update_slot_mapping_and_metadata(p, positions, t, {});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "seq_lens ",
                   std::string(c) + "args->seq_lens ");
  }
  // eagle_prepare_inputs_padded
  {
    const char* cpp = "cattn::eagle_prepare_inputs_padded: ";
    const char* c = "cattn_eagle_prepare_inputs_padded: ";
    const std::vector<int32_t> cu{2, 2, 5}, valid{3, 1, 2};
    std::vector<int32_t> qsl{0, 3, 4, 8}, sample(3), rejected(3);
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_prepare_inputs_padded(cu, {}, qsl, {sample, rejected});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "valid_sampled_tokens_count ",
                   std::string(c) + "args->valid_sampled_tokens_count ");
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_prepare_inputs_padded(cu, valid, qsl, {sample, qsl});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "out.num_rejected_tokens overlaps",
                   std::string(c) + "args->num_rejected_tokens overlaps");
    // The one-call helper's results are right on these inputs.
    const auto r = cattn::eagle_prepare_inputs_padded(cu, valid, qsl);
    EXPECT_EQ(r.token_indices_to_sample, (std::vector<int64_t>{2, 3, 5}));
    EXPECT_EQ(r.num_rejected_tokens, (std::vector<int64_t>{0, 0, 2}));
  }
  // eagle_prepare_next_token_padded
  {
    const char* cpp = "cattn::eagle_prepare_next_token_padded: ";
    const char* c = "cattn_eagle_prepare_next_token_padded: ";
    const std::vector<int32_t> sampled{5, 7, -1, 3};
    std::vector<int32_t> backup{11, 12}, next(2), valid(2);
    const auto s = cattn::tensor_view(sampled, {2, 2});
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_prepare_next_token_padded(50, s, {}, {}, {next, valid});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "backup_next_token_ids ",
                   std::string(c) + "args->backup_next_token_ids ");
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_prepare_next_token_padded(50, s, {}, backup, {backup, valid});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "out.next_token_ids overlaps",
                   std::string(c) + "args->next_token_ids overlaps");
    // A mask is one byte per entry: int32 flags are refused, by the mask's name.
    const std::vector<int32_t> wide_mask{0, 1};
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::eagle_prepare_next_token_padded(50, s, wide_mask, backup,
                                                            {next, valid});
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "discard_request_mask ",
                   std::string(c) + "args->discard_request_mask ");
    // This layer's own check: the one-call helper needs [B, S] to size its results.
    const auto e = thrown_by([&] {
      (void)cattn::eagle_prepare_next_token_padded(50, sampled, cattn::any_cview(), backup);
    });
    EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(e.message()),
              std::string(cpp) + "sampled_token_ids is not 2-D (got 1 dimensions)");
  }
  // compute_new_slot_mapping
  {
    const char* cpp = "cattn::compute_new_slot_mapping: ";
    const char* c = "cattn_compute_new_slot_mapping: ";
    cattn::new_slot_mapping_params p;
    p.block_size = 4;
    p.num_new_tokens = 1;
    p.max_model_len = 10;
    const std::vector<int32_t> qsl{0, 2, 3}, table{3, 4, 5, 6, 7, 8};
    std::vector<int64_t> positions{8, 9, 10, 3, 4}, out(5);
    const auto t = cattn::tensor_view(table, {2, 3});
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::compute_new_slot_mapping(p, qsl, {}, positions, {}, out);
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "block_table ",
                   std::string(c) + "args->block_table ");
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::compute_new_slot_mapping(p, qsl, t, positions, {}, positions);
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "new_slot_mapping overlaps",
                   std::string(c) + "args->new_slot_mapping overlaps");
    cattn::new_slot_mapping_params negative = p;
    negative.num_new_tokens = -1;
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::compute_new_slot_mapping(negative, qsl, t, positions, {}, out);
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "params.num_new_tokens ",
                   std::string(c) + "args->num_new_tokens ");
  }
  // copy_and_expand_eagle_inputs
  {
    const char* cpp = "cattn::copy_and_expand_eagle_inputs: ";
    const char* c = "cattn_copy_and_expand_eagle_inputs: ";
    cattn::eagle_inputs_params p;
    p.padding_token_id = 77;
    p.parallel_drafting_token_id = 5;
    p.num_padding_slots_per_request = 2;
    const std::vector<int32_t> target_ids{10, 11, 12, 20, 21}, next_ids{99, 98};
    std::vector<int64_t> target_positions{4, 5, 6, 8, 9, 0, 0, 0, 0};
    const std::vector<int32_t> starts{0, 3, 5}, ends{2, 3};
    std::vector<int32_t> ids(9);
    std::vector<int64_t> positions(9);
    cattn::eagle_inputs_outputs out;
    out.input_ids = ids;
    out.positions = positions;
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::copy_and_expand_eagle_inputs(p, target_ids, target_positions,
                                                         next_ids, starts, {}, out);
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "query_end_loc ",
                   std::string(c) + "args->query_end_loc ");
    cattn::eagle_inputs_outputs aliased = out;
    aliased.positions = target_positions;
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::copy_and_expand_eagle_inputs(p, target_ids, target_positions,
                                                         next_ids, starts, ends, aliased);
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "out.positions overlaps",
                   std::string(c) + "args->out_positions overlaps");
    cattn::eagle_inputs_params none = p;
    none.num_padding_slots_per_request = 0;
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::copy_and_expand_eagle_inputs(none, target_ids, target_positions,
                                                         next_ids, starts, ends, out);
                   }),
                   CATTN_INVALID_ARGUMENT,
                   std::string(cpp) + "params.num_padding_slots_per_request ",
                   std::string(c) + "args->num_padding_slots_per_request ");
    // This layer's own check: the one-call helper reads query_start_loc[B] on the host.
    const auto e = thrown_by([&] {
      (void)cattn::copy_and_expand_eagle_inputs(
          p, target_ids, target_positions, next_ids,
          cattn::tensor_view<const int32_t>(starts.data(), {3}).on(cattn::cuda(0)), ends);
    });
    EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
    EXPECT_TRUE(starts_with(e.message(), std::string(cpp) + "query_start_loc is not host memory"))
        << e.message();
  }
  // update_num_computed_tokens_for_batch_change
  {
    const char* cpp = "cattn::update_num_computed_tokens_for_batch_change: ";
    const char* c = "cattn_update_num_computed_tokens_for_batch_change: ";
    std::vector<int32_t> computed{100, 200, 300, 400}, accepted{9, 9, 9};
    const std::vector<int64_t> prev{2, -1, 0};
    std::vector<int32_t> valid{3, 0, 2};
    const std::vector<int32_t> drafts{4, 0, 0}, cpu{7, 8, 9};
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::update_num_computed_tokens_for_batch_change(computed, accepted, {},
                                                                        valid, drafts, cpu);
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "prev_positions ",
                   std::string(c) + "args->prev_positions ");
    EXPECT_REFUSED(thrown_by([&] {
                     cattn::update_num_computed_tokens_for_batch_change(computed, valid, prev,
                                                                        valid, drafts, cpu);
                   }),
                   CATTN_INVALID_ARGUMENT, std::string(cpp) + "num_accepted_tokens overlaps",
                   std::string(c) + "args->num_accepted_tokens overlaps");
    // Refused calls write nothing.
    EXPECT_EQ(computed, (std::vector<int32_t>{100, 200, 300, 400}));
    EXPECT_EQ(accepted, (std::vector<int32_t>{9, 9, 9}));
  }
}

// Views labelled with a CUDA device reach the C call, which dispatches on them: on a GPU the
// call runs on device memory; without one (a CPU-only build, or no device) it says so and
// writes nothing.
TEST(cattn_hpp_spec_decode, DeviceViewsReachTheCCall) {
  const std::vector<int32_t> cu{2, 2, 5}, valid{3, 1, 2}, qsl{0, 3, 4, 8};
  std::vector<int32_t> sample(3), rejected(3);
  const auto view = [](const int32_t* p, size_t n) {
    return cattn::tensor_view<const int32_t>(p, {static_cast<int64_t>(n)}).on(cattn::cuda(0));
  };
  const auto out_view = [](int32_t* p, size_t n) {
    return cattn::tensor_view<int32_t>(p, {static_cast<int64_t>(n)}).on(cattn::cuda(0));
  };
#if defined(CATTN_TEST_WITH_CUDA)
  if (cattn::cuda_device_count() > 0) {
    // Inputs, then the two outputs, in one device buffer.
    std::vector<int32_t> all(cu);
    all.insert(all.end(), valid.begin(), valid.end());
    all.insert(all.end(), qsl.begin(), qsl.end());
    all.resize(all.size() + 6, -1);
    int32_t* d = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), all.size() * sizeof(int32_t)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d, all.data(), all.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
              cudaSuccess);
    cattn::eagle_prepare_inputs_padded(view(d, 3), view(d + 3, 3), view(d + 6, 4),
                                       {out_view(d + 10, 3), out_view(d + 13, 3)});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(all.data(), d, all.size() * sizeof(int32_t), cudaMemcpyDeviceToHost),
              cudaSuccess);
    cudaFree(d);
    EXPECT_EQ(std::vector<int32_t>(all.begin() + 10, all.begin() + 13),
              (std::vector<int32_t>{2, 3, 5}));
    EXPECT_EQ(std::vector<int32_t>(all.begin() + 13, all.end()), (std::vector<int32_t>{0, 0, 2}));
    return;
  }
#endif
  const auto e = thrown_by([&] {
    cattn::eagle_prepare_inputs_padded(view(cu.data(), 3), view(valid.data(), 3),
                                       view(qsl.data(), 4),
                                       {out_view(sample.data(), 3), out_view(rejected.data(), 3)});
  });
  EXPECT_EQ(e.status(), CATTN_NOT_SUPPORTED) << e.what();
  EXPECT_EQ(sample, (std::vector<int32_t>{0, 0, 0}));
}
