// SPDX-License-Identifier: Apache-2.0
// cattn.hpp, the C++17 layer: compile-time constraints (index-only arguments, const inputs,
// move-only owners) checked with a detection idiom; views and their DLTensors; cattn::error's
// status and message against the C call's; the owners' destroy-on-destruction; and every
// one-call helper against the C call it wraps, made here on independent HostTensors. The
// device-labelled calls check that views keep their device and streams are forwarded.
#include "cattn.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

namespace {

// ---- The detection idiom: whether an expression compiles. -------------------------------------
template <class, template <class...> class Op, class... Args>
struct detector : std::false_type {};
template <template <class...> class Op, class... Args>
struct detector<std::void_t<Op<Args...>>, Op, Args...> : std::true_type {};
template <template <class...> class Op, class... Args>
constexpr bool compiles = detector<void, Op, Args...>::value;

template <class V>
using restore_from = decltype(cattn::get_pcp_query_restore_idx(std::declval<V>()));
template <class V>
using restore_into = decltype(cattn::get_pcp_query_restore_idx(
    std::declval<const std::vector<int64_t>&>(), std::declval<V>()));
template <class Out>
using restore_as = decltype(cattn::get_pcp_query_restore_idx<Out>(
    std::declval<const std::vector<int64_t>&>()));
template <class V>
using dcp_from = decltype(cattn::get_dcp_local_seq_lens(std::declval<V>(), 2, cattn::all_ranks));
template <class V>
using conv1d_from = decltype(cattn::compute_causal_conv1d_metadata(std::declval<V>()));
template <class V>
using local_with_table = decltype(cattn::make_local_attention_virtual_batches(
    4, 2, std::declval<const std::vector<int32_t>&>(),
    std::declval<const std::vector<int32_t>&>(), std::declval<V>()));
template <class V>
using mamba_from = decltype(cattn::mamba_get_block_table_tensor(
    std::declval<V>(), cattn::index_cview(), 0, 0, CATTN_MAMBA_CACHE_MODE_ALL));
template <class V>
using naive_from = decltype(cattn::naive_query_lens(std::declval<V>()));
template <class V>
using lse_vector = decltype(cattn::log2_lse_to_ln(std::declval<V>()));

// The C side of the comparisons: HostTensors of support/host_tensor.h.
std::vector<int64_t> as_i64(const std::vector<int32_t>& v) { return {v.begin(), v.end()}; }
template <class T>
std::vector<int64_t> widen(const std::vector<T>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}
template <class T>
std::vector<int64_t> widen(const cattn::host_tensor<T>& t) {
  return widen(t.values());
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

}  // namespace

// ---- Compile-time constraints -----------------------------------------------------------------

TEST(cattn_hpp_types, IndexArgumentsTakeInt32AndInt64OnlyAtCompileTime) {
  // Index inputs: int32 and int64 (whichever spelling), from every container kind.
  static_assert(compiles<restore_from, const std::vector<int32_t>&>);
  static_assert(compiles<restore_from, const std::vector<int64_t>&>);
  static_assert(compiles<restore_from, const std::vector<long long>&>);
  static_assert(compiles<restore_from, const int64_t (&)[3]>);
  static_assert(compiles<restore_from, const std::array<int32_t, 3>&>);
  static_assert(compiles<restore_from, cattn::tensor_view<const int32_t>>);
  static_assert(compiles<restore_from, const cattn::host_tensor<int64_t>&>);
  // Anything else does not compile: floats, narrower or unsigned integers, bool.
  static_assert(!compiles<restore_from, const std::vector<float>&>);
  static_assert(!compiles<restore_from, const std::vector<double>&>);
  static_assert(!compiles<restore_from, const std::vector<int16_t>&>);
  static_assert(!compiles<restore_from, const std::vector<uint32_t>&>);
  static_assert(!compiles<restore_from, const std::vector<uint64_t>&>);
  static_assert(!compiles<restore_from, cattn::tensor_view<const float>>);
  static_assert(!compiles<restore_from, const float (&)[3]>);
  static_assert(!compiles<dcp_from, const std::vector<float>&>);
  static_assert(!compiles<conv1d_from, const std::vector<double>&>);
  static_assert(!compiles<local_with_table, const std::vector<float>&>);
  static_assert(compiles<local_with_table, const std::vector<int64_t>&>);
  static_assert(!compiles<mamba_from, cattn::tensor_view<const float>>);
  static_assert(compiles<mamba_from, cattn::tensor_view<const int32_t>>);
  static_assert(!compiles<naive_from, const std::vector<float>&>);
  // Index outputs: mutable int32/int64 memory only; helper results of index types only.
  static_assert(compiles<restore_into, std::vector<int32_t>&>);
  static_assert(!compiles<restore_into, std::vector<float>&>);
  static_assert(!compiles<restore_into, const std::vector<int64_t>&>);
  static_assert(!compiles<restore_into, std::vector<int64_t>&&>);
  static_assert(!compiles<restore_into, cattn::tensor_view<const int64_t>>);
  static_assert(compiles<restore_as, int32_t>);
  static_assert(!compiles<restore_as, float>);
  static_assert(!compiles<restore_as, uint64_t>);
  // Data arguments (lse, keys) take any element type with a dtype.
  static_assert(compiles<lse_vector, const std::vector<float>&>);
  static_assert(compiles<lse_vector, const std::vector<double>&>);
  static_assert(!compiles<lse_vector, const std::vector<int32_t>&>);
  static_assert(std::is_convertible_v<std::vector<float>&, cattn::any_cview>);
  static_assert(std::is_convertible_v<std::vector<float>&, cattn::any_view>);
  static_assert(!std::is_convertible_v<const std::vector<float>&, cattn::any_view>);
  static_assert(!std::is_convertible_v<std::vector<float>&, cattn::index_cview>);
  // std::vector<bool> packs bits and has no data(): no view of it compiles (a bool array does).
  static_assert(!std::is_convertible_v<const std::vector<bool>&, cattn::any_cview>);
  static_assert(!std::is_constructible_v<cattn::tensor_view<const bool>, const std::vector<bool>&>);
  static_assert(std::is_convertible_v<const bool (&)[2], cattn::any_cview>);
  // The trait itself.
  static_assert(cattn::is_index_type_v<int32_t> && cattn::is_index_type_v<const int64_t>);
  static_assert(!cattn::is_index_type_v<float> && !cattn::is_index_type_v<uint32_t> &&
                !cattn::is_index_type_v<int8_t> && !cattn::is_index_type_v<bool>);
  SUCCEED();
}

TEST(cattn_hpp_types, DtypesAreDeducedAtCompileTime) {
  constexpr DLDataType f = cattn::dtype_of<float>, d = cattn::dtype_of<const double>,
                       i = cattn::dtype_of<int32_t>, u = cattn::dtype_of<uint8_t>,
                       b = cattn::dtype_of<bool>, l = cattn::dtype_of<int64_t>;
  static_assert(f.code == kDLFloat && f.bits == 32 && f.lanes == 1);
  static_assert(d.code == kDLFloat && d.bits == 64);
  static_assert(i.code == kDLInt && i.bits == 32);
  static_assert(l.code == kDLInt && l.bits == 64);
  static_assert(u.code == kDLUInt && u.bits == 8);
  static_assert(b.code == kDLUInt && b.bits == 8);
  static_assert(cattn::has_dtype_v<uint16_t> && !cattn::has_dtype_v<std::string>);
  const std::vector<float> lse{1.0f};
  EXPECT_EQ(cattn::tensor_view(lse).dl().dtype.code, kDLFloat);
}

TEST(cattn_hpp_types, OwnersAreMoveOnlyAndConstInputsNeedNoCast) {
  static_assert(!std::is_copy_constructible_v<cattn::context> &&
                !std::is_copy_assignable_v<cattn::context>);
  static_assert(std::is_nothrow_move_constructible_v<cattn::context> &&
                std::is_nothrow_move_assignable_v<cattn::context>);
  static_assert(!std::is_copy_constructible_v<cattn::local_attention_plan> &&
                std::is_nothrow_move_constructible_v<cattn::local_attention_plan>);
  static_assert(!std::is_copy_constructible_v<cattn::step_plan> &&
                std::is_nothrow_move_constructible_v<cattn::step_plan>);
  static_assert(!std::is_copy_constructible_v<cattn::comm> &&
                std::is_nothrow_move_constructible_v<cattn::comm>);
  // A const vector or array is an input as it is; the view keeps a const pointer.
  const std::vector<int64_t> cu{0, 8, 20};
  const int64_t cu_array[] = {0, 8, 20};
  static_assert(std::is_same_v<decltype(cattn::tensor_view(cu).data()), const int64_t*>);
  EXPECT_EQ(cattn::get_pcp_query_restore_idx(cu), cattn::get_pcp_query_restore_idx(cu_array));
  // Streams: cudaStream_t's type, void* and nothing; no other pointer.
  static_assert(std::is_convertible_v<cattn_stream_t, cattn::stream_ref>);
  static_assert(std::is_convertible_v<void*, cattn::stream_ref>);
  static_assert(std::is_convertible_v<std::nullptr_t, cattn::stream_ref>);
  static_assert(!std::is_convertible_v<int*, cattn::stream_ref>);
  int dummy = 0;
  EXPECT_EQ(cattn::stream_ref(static_cast<void*>(&dummy)).get(),
            reinterpret_cast<cattn_stream_t>(&dummy));
}

// ---- Views ------------------------------------------------------------------------------------

TEST(cattn_hpp_views, DLTensorFieldsFollowTheView) {
  std::vector<int32_t> v(12);
  const cattn::tensor_view<int32_t> t(v.data(), {3, 4}, {8, 2}, cattn::cuda(1));
  const DLTensor d = t.dl();
  EXPECT_EQ(d.data, v.data());
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.shape[0], 3);
  EXPECT_EQ(d.shape[1], 4);
  ASSERT_NE(d.strides, nullptr);
  EXPECT_EQ(d.strides[0], 8);
  EXPECT_EQ(d.strides[1], 2);
  EXPECT_EQ(d.device.device_type, kDLCUDA);
  EXPECT_EQ(d.device.device_id, 1);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(t.numel(), 12);

  const auto moved = cattn::tensor_view(v, {3, 4}).on(cattn::cuda_host()).with_byte_offset(8);
  EXPECT_EQ(moved.dl().strides, nullptr);
  EXPECT_EQ(moved.dl().device.device_type, kDLCUDAHost);
  EXPECT_EQ(moved.dl().byte_offset, 8u);
  EXPECT_TRUE(moved.is_host());

  // bfloat16 data in uint16_t.
  std::vector<uint16_t> half(2);
  const DLDataType bf16{static_cast<uint8_t>(kDLBfloat), 16, 1};
  EXPECT_EQ(cattn::tensor_view(half).with_dtype(bf16).dl().dtype.code, kDLBfloat);
  EXPECT_EQ(thrown_by([&] { (void)cattn::tensor_view(v).with_dtype(bf16); }).status(),
            CATTN_INVALID_ARGUMENT);

  int64_t grid[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const cattn::index_cview g(grid);
  EXPECT_EQ(g.ndim(), 2);
  EXPECT_EQ(g.shape(1), 3);
  std::array<int64_t, 4> arr{};
  EXPECT_EQ(cattn::index_view(arr).numel(), 4);
  cattn::host_tensor<int32_t> h({2, 5});
  EXPECT_EQ(cattn::index_cview(h).dl().data, h.data());

  // Absent views are NULL; a reshape must cover the vector; more than 8 dimensions is refused.
  EXPECT_FALSE(cattn::index_cview().present());
  EXPECT_EQ(thrown_by([&] { (void)cattn::tensor_view(v, {5, 2}); }).status(),
            CATTN_INVALID_ARGUMENT);
  const auto e = thrown_by([&] {
    (void)cattn::tensor_view<int32_t>(v.data(), {1, 1, 1, 1, 1, 1, 1, 1, 1});
  });
  EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.message()).find("more than 8 dimensions"), std::string::npos);
}

TEST(cattn_hpp_views, ToString) {
  EXPECT_EQ(cattn::to_string(std::vector<int32_t>{1, -2, 3}), "[1, -2, 3]");
  cattn::host_tensor<int64_t> t({2, 2});
  std::iota(t.begin(), t.end(), 0);
  EXPECT_EQ(cattn::to_string(t), "[[0, 1], [2, 3]]");
  EXPECT_EQ(t(1, 0), 2);
  EXPECT_EQ(cattn::to_string(std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 4}}),
            "[(0, 2), (2, 4)]");
  EXPECT_EQ(cattn::to_string(std::vector<double>{0.5}), "[0.5]");
}

// ---- Errors -----------------------------------------------------------------------------------

TEST(cattn_hpp_errors, CarryTheStatusAndTheLibrarysMessage) {
  // The same invalid call through C, then through the wrapper: rank 2 of a group of 2.
  HostTensor seq = HostTensor::of({1, 2, 128}, i64()), out({3}, i64());
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = seq.dl();
  a.out = out.dl();
  a.dcp_size = 2;
  a.dcp_rank = 2;
  ASSERT_EQ(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT);
  const std::string c_message = cattn_last_error_message();
  ASSERT_FALSE(c_message.empty());

  const std::vector<int64_t> seq_lens{1, 2, 128};
  try {
    (void)cattn::get_dcp_local_seq_lens(seq_lens, 2, 2);
    FAIL() << "no exception";
  } catch (const std::runtime_error& r) {  // cattn::error is a std::runtime_error
    const auto* e = dynamic_cast<const cattn::error*>(&r);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->status(), CATTN_INVALID_ARGUMENT);
    // The library's message, kept as written, and in C++ terms.
    EXPECT_EQ(std::string(e->c_message()), c_message);
    EXPECT_EQ(c_message.rfind("cattn_get_dcp_local_seq_lens: args->dcp_rank ", 0), 0u) << c_message;
    const std::string cpp =
        "cattn::get_dcp_local_seq_lens: dcp_rank " +
        c_message.substr(std::strlen("cattn_get_dcp_local_seq_lens: args->dcp_rank "));
    EXPECT_EQ(std::string(e->message()), cpp);
    EXPECT_EQ(std::string(r.what()), "CATTN_INVALID_ARGUMENT: " + cpp);
  }

  // Each status keeps its own name: CATTN_INSUFFICIENT_SIZE from a short output.
  std::vector<int64_t> too_short(3);
  const auto e = thrown_by([&] {
    cattn::get_pcp_query_restore_idx(std::vector<int64_t>{0, 8, 20}, too_short);
  });
  EXPECT_EQ(e.status(), CATTN_INSUFFICIENT_SIZE);
  EXPECT_EQ(std::string(e.what()).rfind("CATTN_INSUFFICIENT_SIZE: ", 0), 0u);
  EXPECT_NE(std::string(e.message()).find("restore_idx"), std::string::npos);

  // check() for callers' own C calls, and this layer's own checks.
  EXPECT_NO_THROW(cattn::check(CATTN_OK));
  ASSERT_EQ(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(thrown_by([&] { cattn::check(CATTN_INVALID_ARGUMENT); }).message()),
            c_message);
  const std::vector<float> flat(4);
  const auto own = thrown_by([&] {
    (void)cattn::fused_pcp_qkv_select(cattn::tensor_view(flat), cattn::tensor_view(flat),
                                      cattn::tensor_view(flat), std::vector<int64_t>{0, 2}, 1, 0);
  });
  EXPECT_EQ(own.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(own.message()),
            "cattn::fused_pcp_qkv_select: q is not 3-D (got 1 dimensions)");
}

TEST(cattn_hpp_errors, NameArgumentsInCppTerms) {
  // A positional parameter of the same name, under the wrapper's name.
  auto e = thrown_by([] { (void)cattn::fused_pcp_qkv_select_size(8, 0, 0); });
  EXPECT_EQ(
      std::string(e.message()),
      "cattn::fused_pcp_qkv_select_size: pcp_world_size is out of range (got 0, expected >= 1)");
  EXPECT_EQ(
      std::string(e.c_message()),
      "cattn_fused_pcp_qkv_select_size: pcp_world_size is out of range (got 0, expected >= 1)");
  // A field of the C args struct that is a field of the wrapper's options.
  cattn::split_options options;
  options.decode_threshold = -1;
  e = thrown_by([&] {
    (void)cattn::split_decodes_and_prefills(std::vector<int64_t>{0, 1, 3}, options);
  });
  EXPECT_EQ(std::string(e.message())
                .rfind("cattn::split_decodes_and_prefills: "
                       "options.decode_threshold is out of range (got -1, ",
                       0),
            0u)
      << e.message();
  EXPECT_EQ(std::string(e.c_message()).rfind(
                "cattn_split_decodes_and_prefills: args->decode_threshold is out of range", 0),
            0u)
      << e.c_message();
  // An output of the view-taking overload: a field of its outputs struct.
  const std::vector<float> q(4), kv(4);
  std::vector<float> qh(2), kh(2), vh(2), qt(2), kt(3), vt(4);
  const auto row3 = [](std::vector<float>& v) {
    return cattn::tensor_view<float>(v.data(), {static_cast<int64_t>(v.size()), 1, 1});
  };
  const auto in3 = [](const std::vector<float>& v) {
    return cattn::tensor_view<const float>(v.data(), {static_cast<int64_t>(v.size()), 1, 1});
  };
  e = thrown_by([&] {
    cattn::fused_pcp_qkv_select(in3(q), in3(kv), in3(kv), std::vector<int64_t>{0, 4}, 1, 0,
                                {row3(qh), row3(kh), row3(vh), row3(qt), row3(kt), row3(vt)});
  });
  EXPECT_EQ(e.status(), CATTN_INSUFFICIENT_SIZE);
  EXPECT_EQ(std::string(e.message()).rfind("cattn::fused_pcp_qkv_select: out.k_tail ", 0), 0u)
      << e.message();
  EXPECT_EQ(std::string(e.c_message()).rfind("cattn_fused_pcp_qkv_select: args->k_tail ", 0), 0u)
      << e.c_message();
  // A path below a listed one keeps its rest, with "->" written ".": the metadata's fields.
  e = thrown_by([] { (void)cattn::extend_all_queries_by_n(cattn::attn_metadata{}, 1, {}); });
  EXPECT_EQ(std::string(e.message()).rfind("cattn::extend_all_queries_by_n: metadata.", 0), 0u)
      << e.message();
  EXPECT_EQ(std::string(e.c_message()).rfind("cattn_extend_all_queries_by_n: args->metadata->", 0),
            0u)
      << e.c_message();
  // A count the wrapper derives from a container is named by it.
  e = thrown_by([] { (void)cattn::infer_global_hyperparameters({}); });
  EXPECT_EQ(std::string(e.message())
                .rfind("cattn::infer_global_hyperparameters: params.size() is zero", 0),
            0u)
      << e.message();
  // cattn::check, for the caller's own C calls, keeps the library's wording.
  EXPECT_EQ(std::string(thrown_by([] { cattn::check(CATTN_INVALID_ARGUMENT); }).message()),
            std::string(cattn_last_error_message()));
}

// Every C path the table names is one the library can name: a parameter of its C function in
// cattn.h, and each "->field" a field of the struct the parameter (or field) points to.
namespace header_names {

std::string without_comments(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 2;
      out += ' ';
    } else if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i);
      if (i == std::string::npos) i = s.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The declarations of a comma- or semicolon-separated list: name -> the cattn_*_t type named in
// it ("" for none).
std::vector<std::pair<std::string, std::string>> declarations(const std::string& list, char sep) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(sep, start);
    if (end == std::string::npos) end = list.size();
    std::string d = list.substr(start, end - start);
    start = end + 1;
    const size_t bracket = d.find('[');
    if (bracket != std::string::npos) d.resize(bracket);
    size_t e = d.size();
    while (e > 0 && !ident_char(d[e - 1])) --e;
    size_t b = e;
    while (b > 0 && ident_char(d[b - 1])) --b;
    if (b == e) continue;
    std::string type;
    const size_t t = d.find("cattn_");
    if (t != std::string::npos && t < b) {
      size_t te = t;
      while (te < d.size() && ident_char(d[te])) ++te;
      type = d.substr(t, te - t);
    }
    out.emplace_back(d.substr(b, e - b), type);
  }
  return out;
}

}  // namespace header_names

TEST(cattn_hpp_errors, EveryNamedCPathIsInTheHeader) {
  using namespace header_names;
  std::string header;
  {
    const std::string path = std::string(CATTN_TEST_VECTOR_DIR) + "/../../include/cattn.h";
    FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr) << path;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) header.append(buf, n);
    std::fclose(f);
  }
  header = without_comments(header);
  const auto fields_of = [&](std::string type) {
    // A typedef of another args struct ("typedef cattn_x_args_t cattn_y_args_t;") is that one.
    for (size_t at; (at = header.find(" " + type + ";")) != std::string::npos &&
                    header.find("} " + type + ";") == std::string::npos;) {
      const size_t start = header.rfind("typedef ", at);
      std::string alias = header.substr(start + 8, at - start - 8);
      if (alias.find('{') != std::string::npos || alias.find('(') != std::string::npos) break;
      type = alias;
    }
    const size_t close = header.find("} " + type + ";");
    if (close == std::string::npos) return std::vector<std::pair<std::string, std::string>>{};
    const size_t open = header.rfind('{', close);
    return declarations(header.substr(open + 1, close - open - 1), ';');
  };
  size_t checked = 0;
  for (const auto& a : cattn::detail::arg_names) {
    const std::string decl = std::string("cattn_status_t ") + a.c_function + "(";
    const size_t at = header.find(decl);
    ASSERT_NE(at, std::string::npos) << a.c_function;
    const size_t open = at + decl.size();
    const auto params = declarations(header.substr(open, header.find(')', open) - open), ',');
    std::string path = a.c_path, type;
    bool found = false;
    auto list = params;
    while (true) {
      const size_t arrow = path.find("->");
      const std::string head = path.substr(0, arrow);
      found = false;
      for (const auto& p : list)
        if (p.first == head) {
          found = true;
          type = p.second;
        }
      if (!found || arrow == std::string::npos) break;
      path = path.substr(arrow + 2);
      list = fields_of(type);
    }
    EXPECT_TRUE(found) << a.c_function << ": " << a.c_path << " is not in cattn.h";
    ++checked;
  }
  EXPECT_EQ(checked, std::size(cattn::detail::arg_names));
  for (const auto& f : cattn::detail::function_names)
    EXPECT_NE(header.find(std::string("cattn_status_t ") + f.c_function + "("), std::string::npos)
        << f.c_function;
}

// ---- Owners -----------------------------------------------------------------------------------

TEST(cattn_hpp_owners, ContextIsDestroyedWithItsOwnerAndMoves) {
  cattn_context_t* raw = nullptr;
  {
    cattn::context ctx;
    raw = ctx.get();
    ASSERT_NE(raw, nullptr);
    ctx.set_kv_cache_layout_override(CATTN_KV_CACHE_LAYOUT_HND);
    EXPECT_EQ(ctx.get_kv_cache_layout(), CATTN_KV_CACHE_LAYOUT_HND);
  }
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(raw, CATTN_KV_CACHE_LAYOUT_NHD),
                     CATTN_INVALID_ARGUMENT, "ctx");

  cattn::context a, b;
  cattn_context_t* const a_raw = a.get();
  cattn_context_t* const b_raw = b.get();
  a = std::move(b);  // destroys a's old context
  EXPECT_EQ(a.get(), b_raw);
  EXPECT_EQ(b.get(), nullptr);
  EXPECT_FALSE(b);
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(a_raw, CATTN_KV_CACHE_LAYOUT_NHD),
                     CATTN_INVALID_ARGUMENT, "ctx");
  EXPECT_EQ(thrown_by([&] { b.set_kv_cache_layout_override(CATTN_KV_CACHE_LAYOUT_NHD); }).status(),
            CATTN_INVALID_ARGUMENT);
  cattn::context c = std::move(a);
  EXPECT_EQ(c.get(), b_raw);

  // release() hands the handle back; adopt() takes one.
  cattn_context_t* const released = c.release();
  EXPECT_EQ(c.get(), nullptr);
  EXPECT_CATTN_OK(cattn_context_set_kv_cache_layout_override(released, CATTN_KV_CACHE_LAYOUT_NHD));
  {
    cattn::context adopted = cattn::context::adopt(released);
    EXPECT_EQ(adopted.get_kv_cache_layout(), CATTN_KV_CACHE_LAYOUT_NHD);
  }
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(released, CATTN_KV_CACHE_LAYOUT_NHD),
                     CATTN_INVALID_ARGUMENT, "ctx");
}

TEST(cattn_hpp_owners, PlansAndCommunicatorsAreDestroyedWithTheirOwners) {
  const std::vector<int32_t> qsl{0, 4, 14, 19}, seq{6, 17, 9};
  std::vector<int32_t> table(27);
  cattn::attn_metadata md;
  md.query_start_loc_cpu = qsl;
  md.seq_lens_cpu = seq;
  md.block_table_tensor = cattn::tensor_view(table, {3, 9});
  md.num_reqs = 3;
  md.num_actual_tokens = 19;
  cattn_local_attention_plan_t* raw = nullptr;
  int64_t v = 0;
  {
    cattn::local_attention_plan plan = cattn::make_local_attention_virtual_batches(md, 4, 2);
    raw = plan.get();
    EXPECT_CATTN_OK(cattn_local_attention_plan_get_shape(raw, &v, nullptr));
    EXPECT_EQ(v, 8);
    cattn::local_attention_plan moved = std::move(plan);
    EXPECT_EQ(plan.get(), nullptr);
    EXPECT_EQ(moved.shape().virtual_batches, 8);
    EXPECT_EQ(thrown_by([&] { (void)plan.shape(); }).status(), CATTN_INVALID_ARGUMENT);
  }
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_get_shape(raw, &v, nullptr),
                     CATTN_INVALID_ARGUMENT, "plan");

  cattn_step_plan_desc_t desc = cattn::step_plan_desc();
  desc.products = CATTN_STEP_DCP_LOCAL_SEQ_LENS;
  desc.max_num_reqs = 8;
  desc.max_num_tokens = 64;
  cattn_step_plan_t* step_raw = nullptr;
  {
    cattn::step_plan plan(desc);
    step_raw = plan.get();
    size_t bytes = 1;
    EXPECT_CATTN_OK(cattn_step_plan_workspace_size(step_raw, &bytes));
    EXPECT_EQ(plan.workspace_size(), bytes);
  }
  size_t bytes = 0;
  EXPECT_CATTN_ERROR(cattn_step_plan_workspace_size(step_raw, &bytes), CATTN_INVALID_ARGUMENT,
                     "plan");

  // A communicator needs NCCL and a GPU; where the C calls fail, the wrappers throw the same.
  cattn::comm none;
  int32_t rank = 0;
  const cattn_status_t rank_status = cattn_comm_get_rank(nullptr, &rank);
  EXPECT_EQ(thrown_by([&] { (void)none.rank(); }).status(), rank_status);
  cattn_comm_t* unused = nullptr;
  const cattn_status_t borrowed = cattn_comm_create_borrowed(nullptr, &unused);
  EXPECT_EQ(thrown_by([&] { (void)cattn::comm::create_borrowed(nullptr); }).status(), borrowed);
  cattn_comm_unique_id_t id;
  const cattn_status_t id_status = cattn_comm_get_unique_id(&id);
  if (id_status == CATTN_OK) {
    EXPECT_NO_THROW((void)cattn::comm_get_unique_id());
  } else {
    EXPECT_EQ(thrown_by([&] { (void)cattn::comm_get_unique_id(); }).status(), id_status);
  }
  const std::vector<float> key(4);
  HostTensor k({4}, f32());
  cattn_pcp_kv_allgather_and_restore_args_t g = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  g.key = k.dl();
  g.value = k.dl();
  g.num_actual_tokens = 1;
  size_t ws = 0;
  const cattn_status_t ws_status = cattn_pcp_kv_allgather_and_restore_workspace_size(&g, &ws);
  ASSERT_NE(ws_status, CATTN_OK);
  EXPECT_EQ(thrown_by([&] {
              (void)cattn::pcp_kv_allgather_and_restore_workspace_size(none, key, key, 1);
            }).status(),
            ws_status);
}

// ---- The helpers against the C calls ----------------------------------------------------------

TEST(cattn_hpp_helpers, PcpQueryRestoreIdx) {
  const std::vector<int64_t> cu{0, 8, 20};
  HostTensor cu_t = HostTensor::of(cu, i64());
  int64_t size = 0;
  ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx_size(cu_t.dl(), &size));
  HostTensor out({size}, i32());
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = cu_t.dl();
  a.restore_idx = out.dl();
  ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx(&a));

  EXPECT_EQ(cattn::get_pcp_query_restore_idx_size(cu), size);
  EXPECT_EQ(widen(cattn::get_pcp_query_restore_idx(cu)), out.values());
  EXPECT_EQ(widen(cattn::get_pcp_query_restore_idx<int32_t>(cu)), out.values());
  EXPECT_EQ(out.values(), (std::vector<int64_t>{0, 1, 2, 3, 10, 11, 12, 13, 4, 5, 6, 7, 8, 9, 14,
                                                15, 16, 17, 18, 19}));
  EXPECT_TRUE(cattn::get_pcp_query_restore_idx(std::vector<int32_t>{0, 1, 2}).empty());
  EXPECT_EQ(cattn::get_pcp_query_restore_idx(std::vector<int32_t>{0, 8}),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // An odd length is the library's error.
  EXPECT_EQ(thrown_by([] { (void)cattn::get_pcp_query_restore_idx(std::vector<int32_t>{0, 3}); })
                .status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, DcpLocalSeqLens) {
  const std::vector<int64_t> seq{1, 2, 128, 129, 256, 257};
  HostTensor seq_t = HostTensor::of(seq, i64()), all({6, 4}, i64()), one({6}, i64());
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = seq_t.dl();
  a.dcp_size = 4;
  a.dcp_kv_cache_interleave_size = 128;
  a.out = all.dl();
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  a.dcp_rank = 1;
  a.out = one.dl();
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));

  const auto got_all = cattn::get_dcp_local_seq_lens<int32_t>(seq, 4, cattn::all_ranks, 128);
  EXPECT_EQ(got_all.shape(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(widen(got_all), all.values());
  EXPECT_EQ(cattn::to_string(got_all),
            "[[1, 0, 0, 0], [2, 0, 0, 0], [128, 0, 0, 0], [128, 1, 0, 0], [128, 128, 0, 0], "
            "[128, 128, 1, 0]]");
  const auto got_one = cattn::get_dcp_local_seq_lens(seq, 4, 1, 128);
  EXPECT_EQ(got_one.shape(), (std::vector<int64_t>{6}));
  EXPECT_EQ(widen(got_one), one.values());
  // A group of one keeps its rank axis; 2-D lengths keep their shape.
  EXPECT_EQ(cattn::get_dcp_local_seq_lens(seq, 1, cattn::all_ranks).shape(),
            (std::vector<int64_t>{6, 1}));
  const std::vector<int64_t> grid{1, 2, 3, 4};
  EXPECT_EQ(cattn::get_dcp_local_seq_lens(cattn::tensor_view(grid, {2, 2}), 2, cattn::all_ranks)
                .shape(),
            (std::vector<int64_t>{2, 2, 2}));
  // Into the caller's tensor, as the C call (1.0 shapes).
  std::vector<int64_t> into(6);
  cattn::get_dcp_local_seq_lens(seq, into, 4, 1, 128);
  EXPECT_EQ(into, one.values());
}

TEST(cattn_hpp_helpers, CausalConv1dMetadata) {
  const std::vector<int32_t> qsl{0, 10, 16, 17};
  HostTensor q = HostTensor::of(as_i64(qsl), i32());
  int64_t tot = 0, capacity = 0;
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), 8, &tot, &capacity));
  HostTensor nums({3}, i64()), mlist({tot}, i64()), offs({tot}, i64()), bp({capacity}, i64()),
      tc({capacity}, i64());
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.nums = nums.dl();
  a.mlist = mlist.dl();
  a.offsetlist = offs.dl();
  a.batch_ptr = bp.dl();
  a.token_chunk_offset_ptr = tc.dl();
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata(&a));

  const auto size = cattn::compute_causal_conv1d_metadata_size(qsl);
  EXPECT_EQ(size.tot, tot);
  EXPECT_EQ(size.capacity, capacity);
  const auto m = cattn::compute_causal_conv1d_metadata(qsl);
  EXPECT_EQ(m.tot, tot);
  EXPECT_EQ(m.nums, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(m.mlist, (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(m.offsetlist, (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(m.batch_ptr.size(), 2048u);
  EXPECT_EQ(widen(m.nums), nums.values());
  EXPECT_EQ(widen(m.mlist), mlist.values());
  EXPECT_EQ(widen(m.offsetlist), offs.values());
  EXPECT_EQ(widen(m.batch_ptr), bp.values());
  EXPECT_EQ(widen(m.token_chunk_offset_ptr), tc.values());
  EXPECT_EQ(m.batch_ptr[4], CATTN_PAD_SLOT_ID);
  // Another block size, int32 outputs; only some outputs into the caller's tensors.
  const auto m4 = cattn::compute_causal_conv1d_metadata<int32_t>(qsl, 4);
  EXPECT_EQ(m4.nums, (std::vector<int32_t>{3, 2, 1}));
  std::vector<int64_t> only_nums(3);
  cattn::causal_conv1d_metadata_outputs outs;
  outs.nums = only_nums;
  EXPECT_EQ(cattn::compute_causal_conv1d_metadata(qsl, 8, outs), tot);
  EXPECT_EQ(only_nums, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(thrown_by([&] { (void)cattn::compute_causal_conv1d_metadata(qsl, 0); }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, LocalAttentionVirtualBatches) {
  const std::vector<int32_t> qsl{0, 4, 14, 19}, seq{6, 17, 9};
  std::vector<int32_t> table(27);
  std::iota(table.begin(), table.end(), 0);

  // The C calls.
  HostTensor q = HostTensor::of(as_i64(qsl), i32()), s = HostTensor::of(as_i64(seq), i32());
  HostTensor bt = HostTensor::of(as_i64(table), i32(), {3, 9});
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc_cpu = q.dl();
  md.seq_lens_cpu = s.dl();
  md.block_table_tensor = bt.dl();
  md.num_reqs = 3;
  md.num_actual_tokens = 19;
  cattn_local_attention_args_t la = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  la.attn_chunk_size = 4;
  la.block_size = 2;
  la.metadata = &md;
  ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&la));
  int64_t v = 0, p = 0;
  ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(la.plan, &v, &p));
  HostTensor oq({v + 1}, i64()), os({v}, i64()), oc({v}, i64()), ob({v, p}, i32());
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc_cpu = oq.dl();
  out.seq_lens_cpu = os.dl();
  out.num_computed_tokens_cpu = oc.dl();
  out.block_table_tensor = ob.dl();
  cattn_local_attention_fill_args_t f = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  f.metadata = &md;
  f.out = &out;
  ASSERT_CATTN_OK(cattn_local_attention_plan_fill(la.plan, &f));
  cattn_local_attention_plan_destroy(la.plan);

  // The one-call helper (int64 results from an int32 block table).
  const auto r = cattn::make_local_attention_virtual_batches(4, 2, qsl, seq,
                                                             cattn::tensor_view(table, {3, 9}));
  EXPECT_EQ(r.query_start_loc, oq.values());
  EXPECT_EQ(r.seq_lens, os.values());
  EXPECT_EQ(r.num_computed_tokens, oc.values());
  EXPECT_EQ(r.block_table.shape(), (std::vector<int64_t>{v, p}));
  EXPECT_EQ(widen(r.block_table), ob.values());
  EXPECT_EQ(r.scalars.num_reqs, out.num_reqs);
  EXPECT_EQ(r.scalars.max_query_len, out.max_query_len);
  EXPECT_EQ(r.scalars.max_seq_len, out.max_seq_len);
  EXPECT_EQ(r.query_start_loc, (std::vector<int64_t>{0, 2, 4, 5, 9, 13, 14, 18, 19}));
  EXPECT_EQ(r.seq_lens, (std::vector<int64_t>{4, 2, 4, 4, 4, 1, 4, 1}));
  EXPECT_EQ(cattn::to_string(r.block_table),
            "[[0, 1], [2, 3], [11, 12], [13, 14], [15, 16], [17, 17], [20, 21], [22, 23]]");
  // The plan it returns re-gathers another table, into a new array or the caller's.
  std::vector<int64_t> other(27);
  std::iota(other.begin(), other.end(), 100);
  const auto regathered = r.plan.make_block_table<int32_t>(cattn::tensor_view(other, {3, 9}));
  EXPECT_EQ(regathered(0, 0), 100);
  std::vector<int64_t> into(static_cast<size_t>(v * p));
  r.plan.make_block_table(cattn::tensor_view(other, {3, 9}), cattn::tensor_view(into, {v, p}));
  EXPECT_EQ(widen(regathered), into);

  // The size query and the plan from metadata.
  cattn::attn_metadata m;
  m.query_start_loc_cpu = qsl;
  m.seq_lens_cpu = seq;
  m.block_table_tensor = cattn::tensor_view(table, {3, 9});
  m.num_reqs = 3;
  m.num_actual_tokens = 19;
  const auto size = cattn::make_local_attention_virtual_batches_size(m, 4, 2);
  EXPECT_EQ(size.virtual_batches, v);
  EXPECT_EQ(size.pages, p);
  EXPECT_GT(size.plan_bytes, 0u);
  EXPECT_EQ(thrown_by([&] { (void)cattn::make_local_attention_virtual_batches_size(m, 4, 3); })
                .status(),
            CATTN_INVALID_ARGUMENT);  // block size 3 does not divide 4
  // A cap below the batch's 8 virtual batches is refused.
  EXPECT_EQ(thrown_by([&] { (void)cattn::local_attention_plan(m, 4, 2, 7); }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, MambaBlockTable) {
  std::vector<int64_t> rows(12);
  std::iota(rows.begin(), rows.end(), 0);
  const std::vector<int32_t> seq{16, 17, 1};
  HostTensor bt = HostTensor::of(rows, i64(), {3, 4}), s = HostTensor::of(as_i64(seq), i32());
  HostTensor out({3, 3}, i64());
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = bt.dl();
  a.seq_lens = s.dl();
  a.block_size = 16;
  a.num_speculative_blocks = 2;
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  a.out = out.dl();
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));

  const auto table = cattn::tensor_view(rows, {3, 4});
  const auto got =
      cattn::mamba_get_block_table_tensor(table, seq, 16, 2, CATTN_MAMBA_CACHE_MODE_ALIGN);
  EXPECT_EQ(got.values(), out.values());
  EXPECT_EQ(cattn::to_string(got), "[[0, 1, 2], [5, 6, 7], [8, 9, 10]]");
  const auto copy =
      cattn::mamba_get_block_table_tensor<int32_t>(table, {}, 0, 0, CATTN_MAMBA_CACHE_MODE_ALL);
  EXPECT_EQ(widen(copy), rows);
  // Three speculative blocks from column 1 of a 4-column row would read past it.
  EXPECT_EQ(thrown_by([&] {
              (void)cattn::mamba_get_block_table_tensor(table, seq, 16, 3,
                                                        CATTN_MAMBA_CACHE_MODE_ALIGN);
            }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, ExtendAllQueriesByN) {
  const std::vector<int64_t> qsl{0, 2, 5}, seq{4, 6}, upper{4, 7};
  HostTensor q = HostTensor::of(qsl, i64()), s = HostTensor::of(seq, i64()),
             u = HostTensor::of(upper, i64());
  HostTensor oq({3}, i64()), os({2}, i64()), ou({2}, i64());
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT, out = in;
  in.query_start_loc = q.dl();
  in.query_start_loc_cpu = q.dl();
  in.seq_lens = s.dl();
  in.seq_lens_cpu = s.dl();
  in.seq_lens_cpu_upper_bound = u.dl();
  in.num_reqs = 2;
  in.num_actual_tokens = 5;
  in.max_query_len = 3;
  in.max_seq_len = 6;
  out.query_start_loc = oq.dl();
  out.query_start_loc_cpu = oq.dl();
  out.seq_lens = os.dl();
  out.seq_lens_cpu = os.dl();
  out.seq_lens_cpu_upper_bound = ou.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &in;
  a.n = 2;
  a.out = &out;
  ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));

  cattn::attn_metadata md;
  md.query_start_loc = qsl;
  md.query_start_loc_cpu = qsl;
  md.seq_lens = seq;
  md.seq_lens_cpu = seq;
  md.seq_lens_cpu_upper_bound = upper;
  md.num_reqs = 2;
  md.num_actual_tokens = 5;
  md.max_query_len = 3;
  md.max_seq_len = 6;
  const auto r = cattn::extend_all_queries_by_n(md, 2, {}, {}, true);
  EXPECT_EQ(r.query_start_loc, oq.values());
  EXPECT_EQ(r.seq_lens, os.values());
  EXPECT_EQ(r.seq_lens_cpu_upper_bound, ou.values());
  EXPECT_EQ(r.query_start_loc, (std::vector<int64_t>{0, 4, 9}));
  EXPECT_EQ(r.scalars.num_actual_tokens, out.num_actual_tokens);
  EXPECT_EQ(r.scalars.max_query_len, out.max_query_len);
  EXPECT_EQ(r.scalars.max_seq_len, out.max_seq_len);
  // Positions of the extended batch: request 0 holds 4 tokens from 2, request 1 5 from 3.
  EXPECT_EQ(r.positions, (std::vector<int64_t>{2, 3, 4, 5, 3, 4, 5, 6, 7}));
  // In place, through the caller's views: the same values.
  std::vector<int64_t> q2 = qsl, s2 = seq, u2 = upper;
  cattn::attn_metadata in_place = md;
  in_place.query_start_loc = in_place.query_start_loc_cpu = q2;
  in_place.seq_lens = in_place.seq_lens_cpu = s2;
  in_place.seq_lens_cpu_upper_bound = u2;
  cattn::extend_outputs o;
  o.query_start_loc = o.query_start_loc_cpu = q2;
  o.seq_lens = o.seq_lens_cpu = s2;
  o.seq_lens_cpu_upper_bound = u2;
  const cattn::metadata_scalars sc = cattn::extend_all_queries_by_n(in_place, 2, o);
  EXPECT_EQ(q2, oq.values());
  EXPECT_EQ(s2, os.values());
  EXPECT_EQ(sc.max_seq_len, 8);
  EXPECT_EQ(thrown_by([&] { (void)cattn::extend_all_queries_by_n(md, -1); }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, FastPrefillMetadata) {
  const std::vector<int64_t> qsl{0, 15, 20, 28}, logits{14, 18, 19, 27};
  HostTensor q = HostTensor::of(qsl, i64()), l = HostTensor::of(logits, i64()), oq({4}, i64());
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT, out = in;
  in.query_start_loc = q.dl();
  in.logits_indices_padded = l.dl();
  in.num_logits_indices = 4;
  in.num_reqs = 3;
  in.max_query_len = 15;
  out.query_start_loc = oq.dl();
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = &in;
  a.out = &out;
  ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));

  cattn::attn_metadata md;
  md.query_start_loc = qsl;
  md.logits_indices_padded = logits;
  md.num_logits_indices = 4;
  md.num_reqs = 3;
  md.max_query_len = 15;
  const auto r = cattn::make_kv_sharing_fast_prefill_common_attn_metadata(md);
  EXPECT_FALSE(r.passthrough);
  EXPECT_EQ(r.query_start_loc, oq.values());
  EXPECT_EQ(r.query_start_loc, (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(r.scalars.max_query_len, 2);
  EXPECT_EQ(r.scalars.num_actual_tokens, 4);
  EXPECT_EQ(r.scalars.max_query_len, out.max_query_len);
  // max_query_len 1: vLLM returns the metadata; the helper copies its query_start_loc.
  md.max_query_len = 1;
  const auto pass = cattn::make_kv_sharing_fast_prefill_common_attn_metadata<int32_t>(md);
  EXPECT_TRUE(pass.passthrough);
  EXPECT_EQ(widen(pass.query_start_loc), qsl);
  // Into the caller's tensors, with the decode maximum and total.
  md.max_query_len = 15;
  std::vector<int64_t> into(4), max_and_total(2);
  const auto fr =
      cattn::make_kv_sharing_fast_prefill_common_attn_metadata(md, into, {}, max_and_total);
  EXPECT_FALSE(fr.passthrough);
  EXPECT_EQ(into, oq.values());
  EXPECT_EQ(max_and_total, (std::vector<int64_t>{2, 4}));
}

TEST(cattn_hpp_helpers, PerLayerParameters) {
  std::vector<cattn::attention_layer> layers(2);
  layers[0].sliding_window = std::make_pair(int64_t{4}, int64_t{0});
  layers[0].logits_soft_cap = 30.0;
  layers[0].scale = 0.125;
  layers[0].has_sinks = true;
  layers[1].scale = 0.125;

  cattn_attention_layer_desc_t c[2] = {CATTN_ATTENTION_LAYER_DESC_INIT,
                                       CATTN_ATTENTION_LAYER_DESC_INIT};
  c[0].has_sliding_window = 1;
  c[0].sliding_window_left = 4;
  c[0].has_logits_soft_cap = 1;
  c[0].logits_soft_cap = 30.0;
  c[0].scale = 0.125;
  c[0].has_sinks = 1;
  c[1].scale = 0.125;
  cattn_per_layer_parameters_t p[2] = {CATTN_PER_LAYER_PARAMETERS_INIT,
                                       CATTN_PER_LAYER_PARAMETERS_INIT};
  ASSERT_CATTN_OK(cattn_get_per_layer_parameters(c, 2, p));
  cattn_global_hyperparameters_t g = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
  ASSERT_CATTN_OK(cattn_infer_global_hyperparameters(p, 2, &g));

  const auto got = cattn::get_per_layer_parameters(layers);
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(got[i].window_left, p[i].window_left);
    EXPECT_EQ(got[i].logits_soft_cap.has_value(), p[i].has_logits_soft_cap != 0);
    EXPECT_EQ(got[i].sm_scale, p[i].sm_scale);
    EXPECT_EQ(got[i].has_sinks, p[i].has_sinks != 0);
  }
  EXPECT_EQ(got[0].logits_soft_cap, std::optional<double>(30.0));
  EXPECT_EQ(got[1].window_left, -1);
  const auto global = cattn::infer_global_hyperparameters(got);
  EXPECT_EQ(global.window_left, g.window_left);
  EXPECT_EQ(global.has_same_window_lefts, g.has_same_window_lefts != 0);
  EXPECT_EQ(global.has_same_all_params, g.has_same_all_params != 0);
  EXPECT_FALSE(global.has_same_all_params);
  EXPECT_TRUE(cattn::infer_global_hyperparameters({got[1], got[1]}).has_same_all_params);
  const auto empty = thrown_by([] { (void)cattn::infer_global_hyperparameters({}); });
  EXPECT_EQ(empty.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(cattn::get_per_layer_parameters({}).empty());
}

TEST(cattn_hpp_helpers, KvCacheLayouts) {
  cattn::kv_cache_layout_query q;
  q.env_value = "HND";
  EXPECT_EQ(cattn::get_kv_cache_layout(q), CATTN_KV_CACHE_LAYOUT_HND);
  EXPECT_EQ(cattn::get_kv_cache_layout(), CATTN_KV_CACHE_LAYOUT_NHD);
  q.supported_mask = CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_NHD);
  EXPECT_EQ(thrown_by([&] { (void)cattn::get_kv_cache_layout(q); }).status(), CATTN_NOT_SUPPORTED);
  EXPECT_TRUE(cattn::is_valid_kv_cache_layout("NHD"));
  EXPECT_FALSE(cattn::is_valid_kv_cache_layout(std::string("nhd")));
  EXPECT_STREQ(cattn::kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_HND), "HND");
  EXPECT_EQ(cattn::kv_cache_layout_from_name("LBHNC"), CATTN_KV_CACHE_LAYOUT_HND);
  EXPECT_EQ(thrown_by([] { (void)cattn::kv_cache_layout_from_name("XYZ"); }).status(),
            CATTN_INVALID_ARGUMENT);
  EXPECT_STREQ(cattn::kv_cache_layout_get_properties(CATTN_KV_CACHE_LAYOUT_BLNHC).name, "BLNHC");
  EXPECT_STREQ(cattn::get_flashinfer_layout_string(CATTN_KV_CACHE_LAYOUT_BHLNC), "HND");
  EXPECT_EQ(thrown_by([] { (void)cattn::get_flashinfer_layout_string(CATTN_KV_CACHE_LAYOUT_LHBNC); })
                .status(),
            CATTN_NOT_SUPPORTED);

  cattn_kv_cache_layout_strides_args_t s = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
  s.layout = CATTN_KV_CACHE_LAYOUT_NHD;
  const std::array<int64_t, 5> sizes{2, 3, 4, 4, 8};
  for (size_t i = 0; i < 5; ++i) s.sizes[i] = sizes[i];
  ASSERT_CATTN_OK(cattn_kv_cache_layout_strides(&s));
  const auto st = cattn::kv_cache_layout_strides(CATTN_KV_CACHE_LAYOUT_NHD, sizes);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(st.strides[i], s.strides[i]);
    EXPECT_EQ(st.physical_shape[i], s.physical_shape[i]);
  }
  EXPECT_EQ(st.numel, 768);

  // Three backends: two declare lists, one declares nothing.
  const std::vector<cattn_kv_cache_layout_t> b1{CATTN_KV_CACHE_LAYOUT_HND, CATTN_KV_CACHE_LAYOUT_NHD},
      b2{CATTN_KV_CACHE_LAYOUT_NHD, CATTN_KV_CACHE_LAYOUT_HND};
  const int64_t counts[] = {2, CATTN_KV_CACHE_LAYOUTS_NONE, 2};
  const cattn_kv_cache_layout_t flat[] = {b1[0], b1[1], b2[0], b2[1]};
  cattn_kv_cache_layout_t out[6];
  cattn_get_supported_kv_cache_layouts_args_t g = CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT;
  g.num_backends = 3;
  g.backend_counts = counts;
  g.layouts = flat;
  g.out = out;
  g.out_capacity = 6;
  ASSERT_CATTN_OK(cattn_get_supported_kv_cache_layouts(&g));
  const auto got = cattn::get_supported_kv_cache_layouts({b1, std::nullopt, b2});
  EXPECT_EQ(got, std::vector<cattn_kv_cache_layout_t>(out, out + g.num_out));
  EXPECT_EQ(cattn::get_supported_kv_cache_layouts({std::nullopt}).size(), 6u);
  EXPECT_EQ(cattn::get_supported_kv_cache_layouts({b1, b1}), b1);

  // The resolver and its context state.
  cattn::context ctx;
  EXPECT_EQ(thrown_by([&] { (void)ctx.get_resolved_kv_cache_layout(); }).status(),
            CATTN_INVALID_ARGUMENT);
  cattn::kv_cache_layout_resolve_request r;
  r.workers = {{"HND", "NHD"}, {"HND", "NHD"}};
  r.connector_layout = "NHD";
  const auto res = ctx.resolve_kv_cache_layout(r);
  EXPECT_EQ(res.layout, CATTN_KV_CACHE_LAYOUT_NHD);
  EXPECT_FALSE(res.connector_fell_back);
  EXPECT_FALSE(res.from_preset);
  EXPECT_EQ(ctx.get_resolved_kv_cache_layout(), CATTN_KV_CACHE_LAYOUT_NHD);
  EXPECT_TRUE(ctx.resolve_kv_cache_layout(r).from_preset);
  EXPECT_NO_THROW(ctx.record_kv_cache_layout("LBNHC"));
  EXPECT_EQ(thrown_by([&] { ctx.record_kv_cache_layout(std::string("HND")); }).status(),
            CATTN_INVALID_ARGUMENT);
  r.workers = {{"HND"}, {"NHD"}};  // workers that disagree
  cattn::context fresh;
  EXPECT_EQ(thrown_by([&] { (void)fresh.resolve_kv_cache_layout(r); }).status(),
            CATTN_INVALID_ARGUMENT);
  fresh.set_kv_cache_layout_preset("BLHNC");
  EXPECT_EQ(fresh.get_resolved_kv_cache_layout(), CATTN_KV_CACHE_LAYOUT_BLHNC);
  fresh.set_kv_cache_layout_preset(nullptr);
  EXPECT_EQ(thrown_by([&] { (void)fresh.get_resolved_kv_cache_layout(); }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, SplitsAndReorder) {
  const std::vector<int32_t> qsl{0, 1, 2, 6, 12}, upper{9, 17, 4, 10};
  HostTensor q = HostTensor::of(as_i64(qsl), i32()), u = HostTensor::of(as_i64(upper), i32());
  cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.num_reqs = 4;
  a.num_actual_tokens = 12;
  a.max_query_len = 6;
  ASSERT_CATTN_OK(cattn_split_decodes_and_prefills(&a));
  const auto s = cattn::split_decodes_and_prefills(qsl);  // T and max_query_len derived: 12, 6
  EXPECT_EQ(s.num_decodes, a.num_decodes);
  EXPECT_EQ(s.num_prefills, a.num_prefills);
  EXPECT_EQ(s.num_decode_tokens, a.num_decode_tokens);
  EXPECT_EQ(s.num_prefill_tokens, a.num_prefill_tokens);
  EXPECT_EQ(s.num_decodes, 2);
  EXPECT_EQ(s.num_prefill_tokens, 10);
  a.decode_threshold = 4;
  ASSERT_CATTN_OK(cattn_split_decodes_and_prefills(&a));
  EXPECT_EQ(cattn::split_decodes_and_prefills(qsl, {4}).num_decodes, a.num_decodes);
  // Without treating short extends as decodes, is_prefilling is required: vLLM's assert.
  cattn::split_options strict;
  strict.treat_short_extends_as_decodes = false;
  EXPECT_EQ(thrown_by([&] { (void)cattn::split_decodes_and_prefills(qsl, strict); }).status(),
            CATTN_INVALID_ARGUMENT);
  const uint8_t prefilling[] = {0, 0, 1, 1};  // one byte per request
  EXPECT_EQ(cattn::split_decodes_and_prefills(qsl, strict, prefilling).num_decodes, 2);

  cattn_split_decodes_prefills_and_extends_args_t e =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT;
  e.query_start_loc_cpu = q.dl();
  e.seq_lens_cpu_upper_bound = u.dl();
  e.num_reqs = 4;
  e.num_actual_tokens = 12;
  e.max_query_len = 6;
  ASSERT_CATTN_OK(cattn_split_decodes_prefills_and_extends(&e));
  const auto x = cattn::split_decodes_prefills_and_extends(qsl, upper);
  EXPECT_EQ(x.num_decodes, e.num_decodes);
  EXPECT_EQ(x.num_extends, e.num_extends);
  EXPECT_EQ(x.num_prefills, e.num_prefills);
  EXPECT_EQ(x.num_decode_tokens, e.num_decode_tokens);
  EXPECT_EQ(x.num_extend_tokens, e.num_extend_tokens);
  EXPECT_EQ(x.num_prefill_tokens, e.num_prefill_tokens);

  const std::vector<int64_t> lens{3, 2, 5, 1};
  HostTensor l = HostTensor::of(lens, i64()), chunks({4, 2}, i64());
  cattn_split_prefill_chunks_args_t c = CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT;
  c.seq_lens_cpu = l.dl();
  c.workspace_size = 6;
  c.request_offset = 10;
  c.chunks = chunks.dl();
  ASSERT_CATTN_OK(cattn_split_prefill_chunks(&c));
  const auto got = cattn::split_prefill_chunks(lens, 6, 10);
  ASSERT_EQ(static_cast<int64_t>(got.size()), c.num_chunks);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, chunks.get(static_cast<int64_t>(2 * i)));
    EXPECT_EQ(got[i].second, chunks.get(static_cast<int64_t>(2 * i + 1)));
  }
  EXPECT_EQ(cattn::to_string(got), "[(10, 12), (12, 14)]");
  EXPECT_EQ(thrown_by([&] { (void)cattn::split_prefill_chunks(lens, 4); }).status(),
            CATTN_INVALID_ARGUMENT);  // a length above the workspace

  // [P0, D1, P2, D3] becomes [D3, D1, P2, P0].
  const std::vector<int64_t> sched{5, 1, 4, 1}, computed{0, 7, 0, 9}, prompt{5, 7, 4, 9};
  HostTensor ts = HostTensor::of(sched, i64()), tc = HostTensor::of(computed, i64()),
             tp = HostTensor::of(prompt, i64()), map({4}, i64()), swaps({3, 2}, i64());
  cattn_reorder_batch_args_t ra = CATTN_REORDER_BATCH_ARGS_INIT;
  ra.num_scheduled_tokens = ts.dl();
  ra.num_computed_tokens = tc.dl();
  ra.num_prompt_tokens = tp.dl();
  ra.index_map = map.dl();
  ra.swaps = swaps.dl();
  ASSERT_CATTN_OK(cattn_reorder_batch_to_split_decodes_and_prefills(&ra));
  const auto re = cattn::reorder_batch_to_split_decodes_and_prefills<int32_t>(sched, computed,
                                                                              prompt);
  EXPECT_TRUE(re.changed);
  EXPECT_EQ(widen(re.index_map), map.values());
  EXPECT_EQ(re.index_map, (std::vector<int32_t>{3, 1, 2, 0}));
  ASSERT_EQ(static_cast<int64_t>(re.swaps.size()), ra.num_swaps);
  for (size_t i = 0; i < re.swaps.size(); ++i) {
    EXPECT_EQ(re.swaps[i].first, swaps.get(static_cast<int64_t>(2 * i)));
    EXPECT_EQ(re.swaps[i].second, swaps.get(static_cast<int64_t>(2 * i + 1)));
  }
  EXPECT_EQ(re.num_decodes, ra.num_decodes);
  EXPECT_EQ(re.num_prefills, ra.num_prefills);
  EXPECT_EQ(thrown_by([&] {
              (void)cattn::reorder_batch_to_split_decodes_and_prefills(sched, computed,
                                                                       std::vector<int64_t>{1});
            }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, MetadataV2Helpers) {
  const std::vector<int32_t> qsl{0, 1, 2, 6, 12}, seq{9, 17, 4, 10};
  HostTensor q = HostTensor::of(as_i64(qsl), i32()), s = HostTensor::of(as_i64(seq), i32());
  HostTensor lens({4}, i64()), computed({4}, i64()), tokens({14}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = q.dl();
  md.seq_lens = s.dl();
  md.num_actual_tokens = 14;
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  a.metadata = &md;
  a.out = lens.dl();
  ASSERT_CATTN_OK(cattn_naive_query_lens(&a));
  a.out = computed.dl();
  ASSERT_CATTN_OK(cattn_compute_num_computed_tokens(&a));
  cattn_token_to_req_indices_args_t t = CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT;
  t.metadata = &md;
  t.buffer = tokens.dl();
  ASSERT_CATTN_OK(cattn_token_to_req_indices(&t));

  EXPECT_EQ(cattn::naive_query_lens(qsl), lens.values());
  EXPECT_EQ(cattn::naive_query_lens(qsl), (std::vector<int64_t>{1, 1, 4, 6}));
  EXPECT_EQ(cattn::compute_num_computed_tokens(qsl, seq), computed.values());
  EXPECT_EQ(cattn::compute_num_computed_tokens(qsl, seq), (std::vector<int64_t>{8, 16, 0, 4}));
  EXPECT_EQ(widen(cattn::token_to_req_indices<int32_t>(qsl, 14)), tokens.values());
  EXPECT_EQ(cattn::token_to_req_indices(qsl, 5), (std::vector<int64_t>{0, 1, 2, 2, 2}));
  // In place: the computed tokens over the sequence lengths.
  std::vector<int32_t> in_place = seq;
  cattn::compute_num_computed_tokens(qsl, in_place, in_place);
  EXPECT_EQ(widen(in_place), computed.values());
  const std::vector<int32_t> two{9, 17};  // B = 2, but query_start_loc holds 4 requests
  EXPECT_EQ(thrown_by([&] { (void)cattn::compute_num_computed_tokens(qsl, two); }).status(),
            CATTN_INVALID_ARGUMENT);

  // unpadded: the first 3 requests and 6 tokens of a padded batch, as views.
  const std::vector<int64_t> pq{0, 1, 3, 6, 6}, ps{4, 4, 4, 0}, slots{10, 11, 12, 13, 14, 15, 0, 0};
  std::vector<int64_t> table(8);
  cattn::attn_metadata padded;
  padded.query_start_loc = pq;
  padded.seq_lens = ps;
  padded.slot_mapping = slots;
  padded.block_table_tensor = cattn::tensor_view(table, {4, 2});
  padded.num_reqs = 4;
  padded.num_actual_tokens = 8;
  padded.max_query_len = 3;
  const cattn::attn_metadata u = cattn::unpadded(padded, 6, 3);
  EXPECT_EQ(u.num_reqs, 3);
  EXPECT_EQ(u.num_actual_tokens, 6);
  EXPECT_EQ(u.max_query_len, 3);
  EXPECT_EQ(u.query_start_loc.numel(), 4);
  EXPECT_EQ(u.query_start_loc.dl().data, pq.data());
  EXPECT_EQ(u.seq_lens.numel(), 3);
  EXPECT_EQ(u.slot_mapping.numel(), 6);
  EXPECT_EQ(u.block_table_tensor.shape(0), 3);
  EXPECT_EQ(u.block_table_tensor.shape(1), 2);
  EXPECT_FALSE(u.seq_lens_cpu.present());
  EXPECT_EQ(cattn::naive_query_lens(u.query_start_loc), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(thrown_by([&] { (void)cattn::unpadded(padded, 6, 5); }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, OtherHelpers) {
  cattn_max_local_attention_virtual_batches_args_t m =
      CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT;
  m.attn_chunk_size = 8;
  m.max_num_seqs = 4;
  m.max_num_batched_tokens = 0;
  ASSERT_CATTN_OK(cattn_max_local_attention_virtual_batches(&m));
  const auto b = cattn::max_local_attention_virtual_batches(8, 4, 0);
  EXPECT_EQ(b.bound, m.bound);
  EXPECT_EQ(b.bound_with_empty_rows, m.bound_with_empty_rows);
  EXPECT_EQ(cattn::max_local_attention_virtual_batches(8, 4, 64).bound, 16);
  EXPECT_EQ(thrown_by([] { (void)cattn::max_local_attention_virtual_batches(0, 4, 64); }).status(),
            CATTN_INVALID_ARGUMENT);

  // mm prefix ranges: request 0 (0, 4), request 1 none, request 2 (1, 2) and (5, 9).
  HostTensor off = HostTensor::of({0, 1, 1, 3}, i64()),
             rng = HostTensor::of({0, 4, 1, 2, 5, 9}, i64(), {3, 2});
  cattn_mm_prefix_range_tensor_args_t r = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT;
  r.range_offsets = off.dl();
  r.ranges = rng.dl();
  ASSERT_CATTN_OK(cattn_compute_mm_prefix_range_tensor(&r));
  HostTensor out({3, r.max_ranges, 2}, i64());
  r.out = out.dl();
  ASSERT_CATTN_OK(cattn_compute_mm_prefix_range_tensor(&r));
  const auto nested = cattn::compute_mm_prefix_range_tensor({{{0, 4}}, {}, {{1, 2}, {5, 9}}});
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->shape(), (std::vector<int64_t>{3, r.max_ranges, 2}));
  EXPECT_EQ(nested->values(), out.values());
  EXPECT_EQ(cattn::to_string(*nested), "[[[0, 4], [0, 0]], [[0, 0], [0, 0]], [[1, 2], [5, 9]]]");
  const std::vector<int64_t> offsets{0, 1, 1, 3}, ranges{0, 4, 1, 2, 5, 9};
  const auto csr = cattn::compute_mm_prefix_range_tensor<int32_t>(offsets,
                                                                  cattn::tensor_view(ranges, {3, 2}));
  ASSERT_TRUE(csr.has_value());
  EXPECT_EQ(widen(*csr), out.values());
  EXPECT_FALSE(cattn::compute_mm_prefix_range_tensor({{}, {{0, 0}}}).has_value());  // None
  EXPECT_FALSE(cattn::compute_mm_prefix_range_tensor({}, {}).has_value());

  // fill_mm_prefix_query_ranges: (2, 4) covers rows 2 to 4, then (3, 4) overwrites 3 and 4.
  const std::vector<int32_t> foff{0, 2}, frng{2, 4, 3, 4}, fq{0, 8}, fs{8};
  HostTensor o8({8, 2}, i64());
  HostTensor tfo = HostTensor::of(as_i64(foff), i32()),
             tfr = HostTensor::of(as_i64(frng), i32(), {2, 2}),
             tfq = HostTensor::of(as_i64(fq), i32()), tfs = HostTensor::of(as_i64(fs), i32());
  cattn_fill_mm_prefix_query_ranges_args_t f = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT;
  f.range_offsets = tfo.dl();
  f.ranges = tfr.dl();
  f.query_start_loc_cpu = tfq.dl();
  f.seq_lens_cpu = tfs.dl();
  f.out = o8.dl();
  ASSERT_CATTN_OK(cattn_fill_mm_prefix_query_ranges(&f));
  const auto filled =
      cattn::fill_mm_prefix_query_ranges(foff, cattn::tensor_view(frng, {2, 2}), fq, fs);
  EXPECT_EQ(filled.shape(), (std::vector<int64_t>{f.rows, 2}));
  EXPECT_EQ(filled.values(), o8.values());
  // No range (None): no rows, skip the mask.
  EXPECT_EQ(cattn::fill_mm_prefix_query_ranges({}, {}, fq, fs).shape(),
            (std::vector<int64_t>{0, 2}));

  // log2_lse_to_ln: float and double vectors, a view, in place.
  const std::vector<float> lse{1.0f, -2.5f, 0.0f, INFINITY};
  HostTensor src = HostTensor::of({0, 0, 0, 0}, f32()), dst({4}, f32());
  std::memcpy(src.raw().data(), lse.data(), sizeof(float) * 4);
  cattn_log2_lse_to_ln_args_t l = CATTN_LOG2_LSE_TO_LN_ARGS_INIT;
  l.lse = src.dl();
  l.out = dst.dl();
  ASSERT_CATTN_OK(cattn_log2_lse_to_ln(&l));
  std::vector<float> expect(4);
  std::memcpy(expect.data(), dst.raw().data(), sizeof(float) * 4);
  EXPECT_EQ(cattn::log2_lse_to_ln(lse), expect);
  const auto viewed = cattn::log2_lse_to_ln(cattn::tensor_view(lse, {2, 2}));
  EXPECT_EQ(viewed.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(viewed.values(), expect);
  std::vector<float> in_place = lse;
  cattn::log2_lse_to_ln_in_place(in_place);
  EXPECT_EQ(in_place, expect);
  EXPECT_NEAR(cattn::log2_lse_to_ln(std::vector<double>{2.0})[0], 2.0 * std::log(2.0), 1e-15);
  // bfloat16 in uint16_t: 1.0 (0x3f80) becomes ln 2 rounded to bfloat16 (0x3f31).
  const std::vector<uint16_t> bf{0x3f80};
  const auto bf_out = cattn::log2_lse_to_ln(
      cattn::tensor_view(bf).with_dtype(DLDataType{static_cast<uint8_t>(kDLBfloat), 16, 1}));
  EXPECT_EQ(bf_out.dtype().code, kDLBfloat);
  EXPECT_EQ(bf_out[0], 0x3f31);
  const std::vector<int32_t> not_float(1);
  EXPECT_EQ(thrown_by([&] {
              std::vector<int32_t> o(1);
              cattn::log2_lse_to_ln(not_float, o);
            }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, FusedPcpQkvSelect) {
  // W = 2, rank 1, one request of 4 query tokens (half 2): k and v hold W * 4 rows.
  std::vector<float> q(4 * 1 * 2), k(8 * 1 * 2), v(8 * 1 * 1);
  std::iota(q.begin(), q.end(), 0.0f);
  std::iota(k.begin(), k.end(), 100.0f);
  std::iota(v.begin(), v.end(), 200.0f);
  const std::vector<int64_t> qsl{0, 4};
  auto host = [](std::vector<float>& data, std::vector<int64_t> shape) {
    HostTensor t(std::move(shape), f32());
    std::memcpy(t.raw().data(), data.data(), data.size() * sizeof(float));
    return t;
  };
  HostTensor tq = host(q, {4, 1, 2}), tk = host(k, {8, 1, 2}), tv = host(v, {8, 1, 1});
  HostTensor tl = HostTensor::of(qsl, i64());
  HostTensor qh({2, 1, 2}, f32()), qt({2, 1, 2}, f32()), kh({4, 1, 2}, f32()),
      kt({6, 1, 2}, f32()), vh({4, 1, 1}, f32()), vt({6, 1, 1}, f32());
  cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  a.q = tq.dl();
  a.k = tk.dl();
  a.v = tv.dl();
  a.query_start_loc = tl.dl();
  a.pcp_world_size = 2;
  a.pcp_rank = 1;
  a.q_head = qh.dl();
  a.k_head = kh.dl();
  a.v_head = vh.dl();
  a.q_tail = qt.dl();
  a.k_tail = kt.dl();
  a.v_tail = vt.dl();
  ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(&a));

  const cattn::tensor_view<const float> vq(q.data(), {4, 1, 2}), vk(k.data(), {8, 1, 2}),
      vv(v.data(), {8, 1, 1});
  const auto r = cattn::fused_pcp_qkv_select(vq, vk, vv, qsl, 2, 1);
  auto same = [](const cattn::host_tensor<float>& got, HostTensor& want) {
    EXPECT_EQ(got.shape(), want.shape());
    ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel());
    EXPECT_EQ(std::memcmp(got.data(), want.raw().data(), got.size() * sizeof(float)), 0);
  };
  same(r.q_head, qh);
  same(r.q_tail, qt);
  same(r.k_head, kh);
  same(r.k_tail, kt);
  same(r.v_head, vh);
  same(r.v_tail, vt);
  EXPECT_EQ(r.q_tail(0, 0, 0), 4.0f);
  EXPECT_EQ(thrown_by([&] { (void)cattn::fused_pcp_qkv_select(vq, vk, vv, qsl, 2, 2); }).status(),
            CATTN_INVALID_ARGUMENT);  // rank 2 of 2
}

// ---- Step inputs (1.2) ------------------------------------------------------------------------
// One padded batch, computed by hand: R = 4 persistent rows, B = 4 batch rows of which the first
// 3 are live (row 3 is padding: its inputs, 9 tokens of persistent row 1, are never read).
namespace step_case {
const std::vector<int32_t> num_computed{5, 0, 12, 3};  // [R]
const std::vector<int32_t> idx{2, 0, 3, 1}, scheduled{1, 3, 2, 9}, drafts{0, 2, 0, 5};  // [B]
const std::vector<int64_t> num_reqs{3};
// The persistent table [R, W = 3] of kernel-block ids, and the entries in use per row.
const std::vector<int32_t> table{10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42};
const std::vector<int32_t> num_blocks{2, 1, 3, 1};
// What the calls give: live rows b = 0, 1, 2 read persistent rows 2, 0, 3.
const std::vector<int64_t> qsl{0, 1, 4, 6, 6}, seq{13, 8, 5, 0}, batch_computed{12, 5, 3, 0};
const std::vector<int64_t> positions{12, 5, 6, 7, 3, 4, 0, 0};  // T_cap = 8: 0 past the total
// MRV2, block 16, kernel block 8: table[idx[b], p / 8] * 8 + p % 8, e.g. 31 * 8 + 4 for p = 12.
const std::vector<int64_t> slots{252, 85, 86, 87, 323, 324, -1, -1};
}  // namespace step_case

template <class V>
using prepare_from = decltype(cattn::prepare_pos_seq_lens(
    std::declval<V>(), std::declval<const std::vector<int32_t>&>(),
    std::declval<const std::vector<int32_t>&>()));
template <class V>
using gather_into = decltype(cattn::gather_block_tables(
    cattn::index_cview(), cattn::index_cview(), cattn::index_cview(), cattn::index_cview(),
    std::declval<V>()));

TEST(cattn_hpp_types, StepInputArgumentsAreIndexTensors) {
  static_assert(compiles<prepare_from, const std::vector<int32_t>&>);
  static_assert(compiles<prepare_from, const std::vector<int64_t>&>);
  static_assert(!compiles<prepare_from, const std::vector<float>&>);
  static_assert(!compiles<prepare_from, const std::vector<uint32_t>&>);
  static_assert(compiles<gather_into, std::vector<int32_t>&>);
  static_assert(!compiles<gather_into, const std::vector<int32_t>&>);
  static_assert(!compiles<gather_into, std::vector<double>&>);
  // The defaults are the C initialisers'.
  const cattn_compute_slot_mappings_args_t slot_init = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  const cattn::slot_mapping_params p;
  EXPECT_EQ(static_cast<int32_t>(p.contract), slot_init.contract);
  EXPECT_EQ(p.block_size, slot_init.block_size);
  EXPECT_EQ(p.kernel_block_size, slot_init.kernel_block_size);
  EXPECT_EQ(p.dcp_size, slot_init.dcp_size);
  EXPECT_EQ(p.dcp_rank, slot_init.dcp_rank);
  EXPECT_EQ(p.dcp_kv_cache_interleave_size, slot_init.dcp_kv_cache_interleave_size);
  const cattn_combine_sampled_and_draft_tokens_args_t combine_init =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  EXPECT_EQ(cattn::combine_options().num_new_sampled_tokens, combine_init.num_new_sampled_tokens);
  EXPECT_TRUE(cattn::step_check_report().ok());
}

TEST(cattn_hpp_helpers, StepInputsSize) {
  using namespace step_case;
  // From the scheduled counts: rows 0 to 2 live, 1 + 3 + 2 tokens, 1 + 3 + 1 logits.
  const cattn::step_inputs_totals s = cattn::step_inputs_size(1, scheduled, {}, num_reqs, drafts);
  EXPECT_EQ(s.num_tokens, 6);
  EXPECT_EQ(s.num_logits, 5);
  // From query_start_loc, every row live, no new sampled token: the same count as the C call.
  const cattn::step_inputs_totals q = cattn::step_inputs_size(0, {}, qsl, {}, drafts);
  HostTensor tq = HostTensor::of(qsl, i64()), td = HostTensor::of(as_i64(drafts), i32());
  cattn_step_inputs_size_args_t a = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  a.num_new_sampled_tokens = 0;
  a.query_start_loc = tq.dl();
  a.num_draft_tokens = td.dl();
  ASSERT_CATTN_OK(cattn_step_inputs_size(&a));
  EXPECT_EQ(q.num_tokens, a.num_tokens);
  EXPECT_EQ(q.num_logits, a.num_logits);
  EXPECT_EQ(q.num_tokens, 6);
  EXPECT_EQ(q.num_logits, 7);
  // Refusals are named in C++ terms: the wrapper's, or a one-call helper's that sized with it.
  const auto both = thrown_by([&] { (void)cattn::step_inputs_size(1, scheduled, qsl); });
  EXPECT_EQ(both.status(), CATTN_INVALID_ARGUMENT);
  const std::string both_message = both.message();
  EXPECT_EQ(both_message.rfind("cattn::step_inputs_size: num_scheduled_tokens ", 0), 0u)
      << both_message;
  EXPECT_EQ(std::string(both.c_message()).rfind("cattn_step_inputs_size: ", 0), 0u);
  const std::vector<int32_t> negative{0, -1, 0, 0};
  const auto e = thrown_by(
      [&] { (void)cattn::combine_sampled_and_draft_tokens(1, qsl, 3, negative, idx); });
  EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
  const std::string message = e.message();
  EXPECT_EQ(message.rfind("cattn::combine_sampled_and_draft_tokens: num_draft_tokens is negative",
                          0),
            0u)
      << message;
}

TEST(cattn_hpp_helpers, PreparePosSeqLens) {
  using namespace step_case;
  // The C call on independent HostTensors.
  HostTensor s = HostTensor::of(as_i64(scheduled), i32()), i = HostTensor::of(as_i64(idx), i32()),
             c = HostTensor::of(as_i64(num_computed), i32()), n = HostTensor::of(num_reqs, i64());
  HostTensor q({5}, i64()), l({4}, i64()), p({8}, i64()), b({4}, i64());
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  a.num_scheduled_tokens = s.dl();
  a.idx_mapping = i.dl();
  a.num_computed_tokens = c.dl();
  a.num_reqs = n.dl();
  a.query_start_loc = q.dl();
  a.seq_lens = l.dl();
  a.positions = p.dl();
  a.batch_num_computed_tokens = b.dl();
  ASSERT_CATTN_OK(cattn_prepare_pos_seq_lens(&a));
  EXPECT_EQ(q.values(), qsl);
  EXPECT_EQ(l.values(), seq);
  EXPECT_EQ(p.values(), positions);
  EXPECT_EQ(b.values(), batch_computed);

  // The view overload, int32 outputs over poisoned memory, positions longer than the total.
  std::vector<int32_t> vq(5, -9), vl(4, -9), vp(8, -9), vb(4, -9);
  cattn::prepare_pos_seq_lens(scheduled, idx, num_computed, num_reqs, {vq, vl, vp, vb});
  EXPECT_EQ(widen(vq), qsl);
  EXPECT_EQ(widen(vl), seq);
  EXPECT_EQ(widen(vp), positions);
  EXPECT_EQ(widen(vb), batch_computed);
  // positions and batch_num_computed_tokens may be absent.
  std::fill(vq.begin(), vq.end(), -9);
  cattn::prepare_pos_seq_lens(scheduled, idx, num_computed, num_reqs, {vq, vl, {}, {}});
  EXPECT_EQ(widen(vq), qsl);

  // One-call: positions as long as the live total; num_reqs a number.
  const auto r = cattn::prepare_pos_seq_lens(scheduled, idx, num_computed, 3);
  EXPECT_EQ(r.query_start_loc, qsl);
  EXPECT_EQ(r.seq_lens, seq);
  EXPECT_EQ(r.positions, (std::vector<int64_t>{12, 5, 6, 7, 3, 4}));
  EXPECT_EQ(r.batch_num_computed_tokens, batch_computed);
  // Every row live: row 3 takes persistent row 1's 0 computed tokens and its 9 tokens.
  const auto all = cattn::prepare_pos_seq_lens<int32_t>(scheduled, idx, num_computed);
  EXPECT_EQ(all.query_start_loc, (std::vector<int32_t>{0, 1, 4, 6, 15}));
  EXPECT_EQ(all.seq_lens, (std::vector<int32_t>{13, 8, 5, 9}));
  ASSERT_EQ(all.positions.size(), 15u);
  EXPECT_EQ(all.positions[6], 0);
  EXPECT_EQ(all.positions[14], 8);
  // num_reqs 0: an empty batch. 7 of 4 rows is refused on the host, named in C++ terms.
  const auto none = cattn::prepare_pos_seq_lens(scheduled, idx, num_computed, 0);
  EXPECT_EQ(none.query_start_loc, (std::vector<int64_t>{0, 0, 0, 0, 0}));
  EXPECT_EQ(none.seq_lens, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_TRUE(none.positions.empty());
  const auto e =
      thrown_by([&] { (void)cattn::prepare_pos_seq_lens(scheduled, idx, num_computed, 7); });
  EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(
      std::string(e.message()).rfind("cattn::prepare_pos_seq_lens: num_reqs is out of range", 0),
      0u)
      << e.message();
  // A value out of range is refused on the host: persistent row 4 of 4.
  const std::vector<int32_t> bad_idx{2, 4, 3, 1};
  EXPECT_EQ(thrown_by([&] {
              (void)cattn::prepare_pos_seq_lens(scheduled, bad_idx, num_computed, 3);
            }).status(),
            CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_helpers, GatherBlockTables) {
  using namespace step_case;
  const auto persistent = cattn::tensor_view(table, {4, 3});
  // The view overload leaves a live row's entries past its num_blocks as they were (-9).
  std::vector<int32_t> out(12, -9);
  cattn::gather_block_tables(idx, num_reqs, persistent, num_blocks,
                             cattn::tensor_view(out, {4, 3}));
  EXPECT_EQ(widen(out), (std::vector<int64_t>{30, 31, 32, 10, 11, -9, 40, -9, -9, 0, 0, 0}));
  // Without num_blocks every row is copied whole.
  cattn::gather_block_tables(idx, num_reqs, persistent, {}, cattn::tensor_view(out, {4, 3}));
  EXPECT_EQ(widen(out), (std::vector<int64_t>{30, 31, 32, 10, 11, 12, 40, 41, 42, 0, 0, 0}));

  // One-call: from zeros, in the result type asked for.
  const auto got = cattn::gather_block_tables<int32_t>(idx, 3, persistent, num_blocks);
  EXPECT_EQ(got.shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(cattn::to_string(got), "[[30, 31, 32], [10, 11, 0], [40, 0, 0], [0, 0, 0]]");
  // Every row live: row 3 reads persistent row 1, one block in use.
  EXPECT_EQ(cattn::to_string(cattn::gather_block_tables(idx, std::nullopt, persistent, num_blocks)),
            "[[30, 31, 32], [10, 11, 0], [40, 0, 0], [20, 0, 0]]");
  // The C call gives the same.
  HostTensor ti = HostTensor::of(as_i64(idx), i32()), tn = HostTensor::of(num_reqs, i64()),
             tt = HostTensor::of(as_i64(table), i32(), {4, 3}),
             tb = HostTensor::of(as_i64(num_blocks), i32()),
             to = HostTensor::of(std::vector<int64_t>(12, 0), i64(), {4, 3});
  cattn_gather_block_tables_args_t a = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  a.idx_mapping = ti.dl();
  a.num_reqs = tn.dl();
  a.block_table = tt.dl();
  a.num_blocks = tb.dl();
  a.out = to.dl();
  ASSERT_CATTN_OK(cattn_gather_block_tables(&a));
  EXPECT_EQ(to.values(), widen(got));
  EXPECT_EQ(thrown_by([&] {
              (void)cattn::gather_block_tables(idx, std::nullopt, table, num_blocks);
            }).status(),
            CATTN_INVALID_ARGUMENT);  // a 1-D table: this layer's check
  // A live row naming persistent row 4 of 4 is refused on the host, named in C++ terms.
  const std::vector<int32_t> bad_idx{2, 4, 3, 1};
  const auto e = thrown_by([&] { (void)cattn::gather_block_tables(bad_idx, 3, persistent); });
  EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(e.message()).rfind("cattn::gather_block_tables: idx_mapping ", 0), 0u)
      << e.message();
  EXPECT_EQ(std::string(e.c_message()).rfind("cattn_gather_block_tables: args->idx_mapping ", 0),
            0u)
      << e.c_message();
}

TEST(cattn_hpp_helpers, ComputeSlotMappings) {
  using namespace step_case;
  const auto persistent = cattn::tensor_view(table, {4, 3});
  cattn::slot_mapping_params p;
  p.block_size = 16;
  p.kernel_block_size = 8;
  std::vector<int64_t> out(8, 99);
  cattn::compute_slot_mappings(p, qsl, num_reqs, positions, idx, persistent, out);
  EXPECT_EQ(out, slots);  // -1 from the live total (6) on
  // One-call: the live total's slots.
  EXPECT_EQ(cattn::compute_slot_mappings(p, qsl, 3, positions, idx, persistent),
            (std::vector<int64_t>{252, 85, 86, 87, 323, 324}));
  // DCP 2, rank 1: blocks of 8 x 2 tokens, this rank holds the odd offsets at offset / 2.
  cattn::slot_mapping_params d = p;
  d.dcp_size = 2;
  d.dcp_rank = 1;
  cattn::compute_slot_mappings(d, qsl, num_reqs, positions, idx, persistent, out);
  EXPECT_EQ(out, (std::vector<int64_t>{-1, 82, -1, 83, 321, -1, -1, -1}));
  // v1: the batch's own rows (the gathered table), no idx_mapping; block 8 = kernel block.
  cattn::slot_mapping_params v1;
  v1.contract = CATTN_SLOT_MAPPING_V1;
  v1.block_size = v1.kernel_block_size = 8;
  const auto gathered = cattn::gather_block_tables<int32_t>(idx, 3, persistent, num_blocks);
  cattn::compute_slot_mappings(v1, qsl, num_reqs, positions, {}, gathered, out);
  EXPECT_EQ(out, slots);
  // The block sizes have no default: 0 is refused, named in C++ terms.
  const auto e = thrown_by([&] {
    cattn::compute_slot_mappings(cattn::slot_mapping_params{}, qsl, num_reqs, positions, idx,
                                 persistent, out);
  });
  EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(e.message()).rfind("cattn::compute_slot_mappings: params.", 0), 0u)
      << e.message();
}

TEST(cattn_hpp_helpers, CombineSampledAndDraftTokens) {
  using namespace step_case;
  // Row b owns 1 + drafts[b] logits, its last tokens: 1, 3 and 1 of the 3 live rows.
  std::vector<int32_t> logits(8, 77), cu(5, 77), expanded(8, 77), local(8, 77);
  cattn::logits_outputs out;
  out.logits_indices = logits;
  out.cu_num_logits = cu;
  out.expanded_idx_mapping = expanded;
  out.expanded_local_pos = local;
  cattn::combine_sampled_and_draft_tokens(qsl, num_reqs, drafts, idx, out);
  EXPECT_EQ(widen(logits), (std::vector<int64_t>{0, 1, 2, 3, 5, 0, 0, 0}));
  EXPECT_EQ(widen(cu), (std::vector<int64_t>{0, 1, 4, 5, 5}));
  EXPECT_EQ(widen(expanded), (std::vector<int64_t>{2, 0, 0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(widen(local), (std::vector<int64_t>{0, 0, 1, 2, 0, 0, 0, 0}));

  // With input_ids: rows 0 and 1 are past their prompts (seq_len 13 > 10, 8 > 4) and get their
  // last sampled token, then their drafts; row 2 (5 <= 9) is a prefill and keeps its tokens.
  const std::vector<int32_t> prefill_len{4, 9, 10, 9}, last_sampled{500, 501, 502, 503};
  const std::vector<int32_t> draft_tokens{600, 601, 610, 611, 620, 621, 630, 631};
  std::vector<int32_t> input_ids{100, 101, 102, 103, 104, 105, 106, 107};
  out.input_ids = input_ids;
  cattn::combine_options o;
  o.seq_lens = seq;
  o.prefill_len = prefill_len;
  o.last_sampled_tokens = last_sampled;
  o.draft_tokens = cattn::tensor_view(draft_tokens, {4, 2});
  cattn::combine_sampled_and_draft_tokens(qsl, num_reqs, drafts, idx, out, o);
  EXPECT_EQ(widen(input_ids), (std::vector<int64_t>{502, 500, 600, 601, 104, 105, 106, 107}));
  EXPECT_EQ(widen(logits), (std::vector<int64_t>{0, 1, 2, 3, 5, 0, 0, 0}));

  // One-call: outputs as long as the total logits.
  const auto r = cattn::combine_sampled_and_draft_tokens(1, qsl, 3, drafts, idx);
  EXPECT_EQ(r.logits_indices, (std::vector<int64_t>{0, 1, 2, 3, 5}));
  EXPECT_EQ(r.cu_num_logits, (std::vector<int64_t>{0, 1, 4, 5, 5}));
  EXPECT_EQ(r.expanded_idx_mapping, (std::vector<int64_t>{2, 0, 0, 0, 3}));
  EXPECT_EQ(r.expanded_local_pos, (std::vector<int64_t>{0, 0, 1, 2, 0}));
  // No drafts, no idx_mapping: the last token of each live row, no expanded_idx_mapping.
  const auto plain = cattn::combine_sampled_and_draft_tokens<int32_t>(1, qsl, 3);
  EXPECT_EQ(plain.logits_indices, (std::vector<int32_t>{0, 3, 5}));
  EXPECT_TRUE(plain.expanded_idx_mapping.empty());
  EXPECT_EQ(plain.expanded_local_pos, (std::vector<int32_t>{0, 0, 0}));
  // No new sampled token: only the drafts' logits.
  EXPECT_EQ(cattn::combine_sampled_and_draft_tokens(0, qsl, 3, drafts, idx).logits_indices,
            (std::vector<int64_t>{2, 3}));
  // A row whose logits pass its query gets vLLM's indices, before its first token (row 0: -1).
  const std::vector<int32_t> long_drafts{1, 2, 0, 5};
  const auto past = cattn::combine_sampled_and_draft_tokens(1, qsl, 3, long_drafts, idx);
  EXPECT_EQ(past.logits_indices, (std::vector<int64_t>{-1, 0, 1, 2, 3, 5}));
  EXPECT_EQ(past.cu_num_logits, (std::vector<int64_t>{0, 2, 5, 6, 6}));
  // Every row live: the padded row's 9 scheduled tokens hold its 6 logits.
  const std::vector<int64_t> qsl_all{0, 1, 4, 6, 15};
  EXPECT_EQ(cattn::combine_sampled_and_draft_tokens(1, qsl_all, std::nullopt, drafts, idx)
                .logits_indices,
            (std::vector<int64_t>{0, 1, 2, 3, 5, 9, 10, 11, 12, 13, 14}));
  // Two new sampled tokens per row are out of range, named as the options' field.
  cattn::combine_options two;
  two.num_new_sampled_tokens = 2;
  out.input_ids = {};
  const auto e = thrown_by(
      [&] { cattn::combine_sampled_and_draft_tokens(qsl, num_reqs, drafts, idx, out, two); });
  EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(e.message())
                .rfind("cattn::combine_sampled_and_draft_tokens: options.num_new_sampled_tokens",
                       0),
            0u)
      << e.message();
}

TEST(cattn_hpp_helpers, StepBatchCheck) {
  using namespace step_case;
  const std::vector<int32_t> gathered{30, 31, 32, 10, 11, 0, 40, 0, 0, 0, 0, 0};
  const std::vector<int64_t> dcp_slots{-1, 82, -1, 83, 321, -1, -1, -1};
  cattn::step_check_inputs batch;
  batch.query_start_loc = qsl;
  batch.num_reqs = num_reqs;
  batch.seq_lens = seq;
  batch.block_tables[0] = cattn::tensor_view(gathered, {4, 3});
  batch.block_tables[1] = cattn::tensor_view(gathered, {4, 3});
  batch.slot_mappings[0] = slots;
  batch.slot_mappings[1] = dcp_slots;
  EXPECT_TRUE(cattn::step_batch_check(batch).ok());
  std::vector<int32_t> status(3, 9);
  cattn::step_batch_check(batch, status);
  EXPECT_EQ(status, (std::vector<int32_t>{0, 0, 0}));

  // Defects: the first field in the contract's order, at its lowest index, with its group.
  const std::vector<int64_t> seq_padded{13, 8, 5, 7};
  cattn::step_check_inputs bad = batch;
  bad.seq_lens = seq_padded;
  auto r = cattn::step_batch_check(bad);
  EXPECT_EQ(r.field, CATTN_STEP_CHECK_SEQ_LENS);
  EXPECT_EQ(r.index, 3);
  EXPECT_FALSE(r.ok());
  std::vector<int32_t> table_padded = gathered;
  table_padded[10] = 5;  // row 3, the padded one
  bad = batch;
  bad.block_tables[1] = cattn::tensor_view(table_padded, {4, 3});
  r = cattn::step_batch_check(bad);
  EXPECT_EQ(r.field, CATTN_STEP_CHECK_BLOCK_TABLE);
  EXPECT_EQ(r.index, 3);
  EXPECT_EQ(r.group, 1);
  std::vector<int64_t> slots_past = dcp_slots;
  slots_past[7] = 0;  // past the live total (6): must be -1
  bad = batch;
  bad.slot_mappings[1] = slots_past;
  r = cattn::step_batch_check(bad);
  EXPECT_EQ(r.field, CATTN_STEP_CHECK_SLOT_MAPPING);
  EXPECT_EQ(r.index, 7);
  EXPECT_EQ(r.group, 1);
  const std::vector<int64_t> qsl_padded{0, 1, 4, 6, 7};
  bad = batch;
  bad.query_start_loc = qsl_padded;
  EXPECT_EQ(cattn::step_batch_check(bad).field, CATTN_STEP_CHECK_QUERY_START_LOC);
  // An argument error (no query_start_loc) is thrown, not reported.
  EXPECT_EQ(thrown_by([] { (void)cattn::step_batch_check(cattn::step_check_inputs{}); }).status(),
            CATTN_INVALID_ARGUMENT);
}

// ---- Device views and streams -----------------------------------------------------------------

TEST(cattn_hpp_device, ViewsKeepTheirDeviceAndStreamsAreForwarded) {
  if (cattn::cuda_device_count() > 0)
    GTEST_SKIP() << "labels host memory as CUDA memory; only meaningful without a GPU";
  // Host memory labelled as CUDA device 0: the C call and the wrapper answer alike (a CPU-only
  // build, or no usable device: CATTN_NOT_SUPPORTED after the other checks).
  std::vector<int32_t> qsl{0, 1, 2, 6}, result(4);
  HostTensor q = HostTensor::of(as_i64(qsl), i32()), r({4}, i32());
  DLTensor qd = *q.dl(), rd = *r.dl();
  qd.device = rd.device = {kDLCUDA, 0};
  int stream_object = 0;
  const auto stream = reinterpret_cast<cattn_stream_t>(&stream_object);
  cattn_split_decodes_and_prefills_capturable_args_t a =
      CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = &qd;
  a.result = &rd;
  a.stream = stream;
  const cattn_status_t c_status = cattn_split_decodes_and_prefills_capturable(&a);
  ASSERT_NE(c_status, CATTN_OK);
  const std::string c_message = cattn_last_error_message();
  const auto e = thrown_by([&] {
    cattn::split_decodes_and_prefills_capturable(cattn::tensor_view(qsl).on(cattn::cuda(0)),
                                                 cattn::tensor_view(result).on(cattn::cuda(0)), {},
                                                 {}, {}, {}, stream);
  });
  EXPECT_EQ(e.status(), c_status);
  EXPECT_EQ(std::string(e.message()), c_message);
  // The same host memory without the label is refused as host memory by the device call.
  EXPECT_EQ(thrown_by([&] { cattn::split_decodes_and_prefills_capturable(qsl, result); }).status(),
            CATTN_INVALID_ARGUMENT);
  // A stream-taking overload on device views: the restore index.
  std::vector<int64_t> idx(4);
  const auto d = thrown_by([&] {
    cattn::get_pcp_query_restore_idx(cattn::tensor_view(qsl).on(cattn::cuda(0)),
                                     cattn::tensor_view(idx).on(cattn::cuda(0)),
                                     static_cast<void*>(&stream_object));
  });
  EXPECT_EQ(d.status(), CATTN_NOT_SUPPORTED);
  // One-call helpers refuse device inputs they would have to read.
  const auto h = thrown_by([&] {
    (void)cattn::token_to_req_indices(cattn::tensor_view(qsl).on(cattn::cuda(0)), 6);
  });
  EXPECT_EQ(h.status(), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(h.message()).find("not host memory"), std::string::npos);
}

TEST(cattn_hpp_device, StepPlanWrapsTheCCalls) {
  cattn_step_plan_desc_t desc = cattn::step_plan_desc();
  desc.products = CATTN_STEP_DCP_LOCAL_SEQ_LENS | CATTN_STEP_CAUSAL_CONV1D_METADATA;
  desc.max_num_reqs = 8;
  desc.max_num_tokens = 64;
  cattn_step_plan_t* raw = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&desc, &raw));
  cattn_step_plan_shape_t want = CATTN_STEP_PLAN_SHAPE_INIT;
  ASSERT_CATTN_OK(cattn_step_plan_get_shape(raw, &want));
  cattn_step_plan_destroy(raw);

  const cattn::step_plan plan(desc);
  const cattn_step_plan_shape_t got = plan.shape();
  EXPECT_EQ(got.conv1d_capacity, want.conv1d_capacity);
  EXPECT_EQ(got.restore_capacity, want.restore_capacity);
  EXPECT_EQ(plan.workspace_size(), 0u);
  // Host tensors are refused: the plan runs on the device.
  const std::vector<int32_t> qsl{0, 1, 2}, seq{3, 4};
  std::vector<int32_t> dcp(2 * 1), nums(2);
  cattn::step_batch batch;
  batch.query_start_loc = qsl;
  batch.seq_lens = seq;
  cattn::step_outputs out;
  out.dcp_local_seq_lens = dcp;
  out.conv1d_nums = nums;
  EXPECT_EQ(thrown_by([&] { plan.run(batch, out); }).status(), CATTN_INVALID_ARGUMENT);
  desc.products = 0;
  EXPECT_EQ(thrown_by([&] { cattn::step_plan bad(desc); }).status(), CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_device, StepPlanTakesTheStepInputs) {
  // A plan of the six 1.2 products: two KV groups over 4 persistent rows.
  cattn_step_plan_desc_t desc = cattn::step_plan_desc();
  desc.products = CATTN_STEP_INPUTS | CATTN_STEP_BLOCK_TABLES | CATTN_STEP_SLOT_MAPPINGS |
                  CATTN_STEP_LOGITS_INDICES | CATTN_STEP_TOKEN_TO_REQ | CATTN_STEP_SPLIT;
  desc.max_num_reqs = 4;
  desc.max_num_tokens = 8;
  desc.max_num_logits = 8;
  desc.max_num_persistent_reqs = 4;
  desc.inputs.num_kv_groups = 2;
  desc.kv_groups[0] = {16, 8, 3, CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
  desc.kv_groups[1] = {16, 16, 2, CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
  const cattn::step_plan plan(desc);
  EXPECT_EQ(plan.workspace_size(), 0u);
  // Host tensors are refused (the plan runs on the device): the 1.2 fields reach the C call.
  using namespace step_case;
  const std::vector<int32_t> table1{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int32_t> oq(5), os(4), op(8), bt0(12), bt1(8), li(8), t2r(8);
  std::vector<int64_t> sm0(8), sm1(8), counts(CATTN_STEP_NUM_COUNTS);
  cattn::step_batch batch;
  batch.num_reqs = num_reqs;
  batch.num_scheduled_tokens = scheduled;
  batch.idx_mapping = idx;
  batch.num_computed_tokens = num_computed;
  batch.num_draft_tokens = drafts;
  batch.kv_block_tables[0] = cattn::tensor_view(table, {4, 3});
  batch.kv_block_tables[1] = cattn::tensor_view(table1, {4, 2});
  batch.kv_num_blocks[0] = num_blocks;
  cattn::step_outputs out;
  out.query_start_loc = oq;
  out.seq_lens = os;
  out.positions = op;
  out.block_tables[0] = cattn::tensor_view(bt0, {4, 3});
  out.block_tables[1] = cattn::tensor_view(bt1, {4, 2});
  out.slot_mappings[0] = sm0;
  out.slot_mappings[1] = sm1;
  out.logits_indices = li;
  out.token_to_req_indices = t2r;
  out.counts = counts;
  const auto e = thrown_by([&] { plan.run(batch, out); });
  EXPECT_TRUE(e.status() == CATTN_INVALID_ARGUMENT || e.status() == CATTN_NOT_SUPPORTED)
      << e.what();
  // A 1.2 parameter out of range is the desc's: three groups declared, the third unset.
  desc.inputs.num_kv_groups = 3;
  EXPECT_EQ(thrown_by([&] { cattn::step_plan bad(desc); }).status(), CATTN_INVALID_ARGUMENT);
}

TEST(cattn_hpp_device, StepPlanTakesTheDrafterTensors) {
  // The drafter chain over 4 requests: every batch tensor and every output but one given (as
  // device views of host memory), so the C call names the one left out, past every other check.
  cattn_step_plan_desc_t desc = cattn::step_plan_desc();
  desc.products = CATTN_STEP_DRAFT_NEXT_TOKEN | CATTN_STEP_DRAFT_PREPARE_INPUTS |
                  CATTN_STEP_DRAFT_EXPAND | CATTN_STEP_DRAFT_SLOT_MAPPING;
  desc.max_num_reqs = 4, desc.max_num_tokens = 16, desc.max_num_blocks_per_req = 4;
  desc.draft.vocab_size = 100, desc.draft.num_padding_slots_per_request = 2;
  desc.draft.block_size = 16, desc.draft.max_model_len = 64;
  const cattn::step_plan plan(desc);
  const int64_t cap = plan.shape().draft_token_capacity;
  EXPECT_EQ(cap, 16 + 4 * 2);
  std::vector<int32_t> qsl(5), sampled(12), backup(4), cu(4), ids(16), table(16), next(4),
      idx(4), out_ids(static_cast<size_t>(cap));
  std::vector<int64_t> tpos(16), out_pos(static_cast<size_t>(cap)), slots(static_cast<size_t>(cap));
  std::vector<uint8_t> discard(4);
  cattn::step_batch batch;
  batch.query_start_loc = cattn::tensor_view(qsl, {5}).on(cattn::cuda(0));
  batch.block_table = cattn::tensor_view(table, {4, 4}).on(cattn::cuda(0));
  batch.sampled_token_ids = cattn::tensor_view(sampled, {4, 3}).on(cattn::cuda(0));
  batch.discard_request_mask = cattn::tensor_view(discard, {4}).on(cattn::cuda(0));
  batch.backup_next_token_ids = cattn::tensor_view(backup, {4}).on(cattn::cuda(0));
  batch.cu_num_draft_tokens = cattn::tensor_view(cu, {4}).on(cattn::cuda(0));
  batch.target_token_ids = cattn::tensor_view(ids, {16}).on(cattn::cuda(0));
  batch.target_positions = cattn::tensor_view(tpos, {16}).on(cattn::cuda(0));
  cattn::step_outputs out;
  out.token_indices_to_sample = cattn::tensor_view(idx, {4}).on(cattn::cuda(0));
  out.draft_input_ids = cattn::tensor_view(out_ids, {cap}).on(cattn::cuda(0));
  out.draft_positions = cattn::tensor_view(out_pos, {cap}).on(cattn::cuda(0));
  out.draft_slot_mapping = cattn::tensor_view(slots, {cap}).on(cattn::cuda(0));
  const auto e = thrown_by([&] { plan.run(batch, out); });
  EXPECT_EQ(e.status(), CATTN_INVALID_ARGUMENT) << e.what();
  EXPECT_NE(std::string(e.message()).find("next_token_ids is NULL"), std::string::npos)
      << e.message();
  (void)next;
}
