// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the six-layout calls (1.1): cattn_kv_cache_layout_from_name,
// _get_properties, cattn_get_flashinfer_layout_string, cattn_kv_cache_layout_strides,
// cattn_get_supported_kv_cache_layouts, and the context's resolved state through
// cattn_context_set_kv_cache_layout_preset, cattn_resolve_kv_cache_layout,
// cattn_record_kv_cache_layout and cattn_get_resolved_kv_cache_layout. Names arrive as
// arbitrary strings (near-misses of the real ones among them), layouts as arbitrary ints,
// sizes and counts as arbitrary int64s, lists of any length. Each answer is checked against a
// small model of vLLM's rules written here from the README's description; failures must write
// nothing (args, output arrays with guard bytes, the context's state).
#include <algorithm>
#include <climits>
#include <optional>

#include "fuzz_support.h"

using namespace cattn_fuzz;

extern "C" {  // c_abi_shim.c: arbitrary ints where the header declares an enum
cattn_status_t cattn_fuzz_layout_properties(int layout, cattn_kv_cache_layout_properties_t* p);
cattn_status_t cattn_fuzz_flashinfer_layout(int layout, const char** out);
}

namespace {

const char* const kNames[6] = {"LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC"};
const int kValue[6] = {2, 1, 3, 4, 5, 6};  // enum value of kNames[i]
const int kStrideOrder[6][5] = {{0, 1, 2, 3, 4}, {0, 1, 3, 2, 4}, {0, 2, 1, 3, 4},
                                {1, 0, 2, 3, 4}, {1, 0, 3, 2, 4}, {1, 2, 0, 3, 4}};

// Model: index in iteration order of a name (aliases resolved), or -1.
int model_parse(const std::string& s) {
  const std::string n = s == "NHD" ? "LBNHC" : s == "HND" ? "LBHNC" : s;
  for (int i = 0; i < 6; ++i)
    if (n == kNames[i]) return i;
  return -1;
}
int index_of_value(int v) {
  for (int i = 0; i < 6; ++i)
    if (kValue[i] == v) return i;
  return -1;
}
bool compact(int i) {
  const int a = kStrideOrder[i][0], b = kStrideOrder[i][1];
  return a + b == 1;  // {0, 1} in either order
}

std::string pick_name(FuzzedDataProvider& fdp) {
  const int c = fdp.ConsumeIntegralInRange<int>(0, 11);
  if (c < 6) return kNames[c];
  if (c == 6) return "NHD";
  if (c == 7) return "HND";
  if (c == 8) {
    std::string s = kNames[fdp.ConsumeIntegralInRange<int>(0, 5)];
    s[fdp.ConsumeIntegralInRange<size_t>(0, s.size() - 1)] ^= 0x20;  // a case flip
    return s;
  }
  const std::string s = fdp.ConsumeRandomLengthString(40);
  return std::string(s.c_str());  // as the library sees it: up to the first NUL
}

int pick_layout(FuzzedDataProvider& fdp) {
  return fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? fdp.ConsumeIntegral<int>()
                                                    : fdp.ConsumeIntegralInRange<int>(0, 7);
}

void store(cattn_kv_cache_layout_t* f, int v) { std::memcpy(f, &v, sizeof v); }
int load(const cattn_kv_cache_layout_t& f) {
  int v;
  std::memcpy(&v, &f, sizeof v);
  return v;
}

void fuzz_names_and_properties(FuzzedDataProvider& fdp) {
  const std::string s = pick_name(fdp);
  Bytes out(sizeof(int), kPoisonByte);
  const auto before = out.all();
  const cattn_status_t st =
      cattn_kv_cache_layout_from_name(s.c_str(), reinterpret_cast<cattn_kv_cache_layout_t*>(out.payload()));
  check_status_valid(st);
  check_failure_message(st, "cattn_kv_cache_layout_from_name");
  const int want = model_parse(s);
  FZ_CHECK((st == CATTN_OK) == (want >= 0), "from_name status for a " + std::to_string(s.size()) + "-byte name");
  if (st == CATTN_OK) {
    int v;
    std::memcpy(&v, out.payload(), sizeof v);
    FZ_CHECK(v == kValue[want], "from_name value");
  } else {
    FZ_CHECK(out.all() == before, "a failed from_name wrote");
  }
  FZ_CHECK(out.guards_intact(), "from_name wrote outside its output");

  const int l = pick_layout(fdp);
  const int i = index_of_value(l);
  const size_t ss = pick_struct_size(fdp, CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE);
  Struct<cattn_kv_cache_layout_properties_t> p(CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT, ss);
  const auto snap = p.snapshot();
  const cattn_status_t sp = cattn_fuzz_layout_properties(l, p.get());
  check_status_valid(sp);
  check_failure_message(sp, "cattn_kv_cache_layout_get_properties");
  FZ_CHECK((sp == CATTN_OK) == (i >= 0 && ss >= CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE), "properties status");
  if (sp == CATTN_OK) {
    const auto* q = p.get();
    FZ_CHECK(std::strcmp(q->name, kNames[i]) == 0 && q->order == i, "properties name/order");
    FZ_CHECK(std::equal(q->stride_order, q->stride_order + 5, kStrideOrder[i]), "stride order");
    FZ_CHECK(q->is_block_compact == compact(i) && q->is_layer_compact == (kStrideOrder[i][0] == 0) &&
                 q->is_block_outermost == (kStrideOrder[i][0] == 1),
             "properties flags");
    FZ_CHECK((q->flashinfer_layout == nullptr) == (l == CATTN_KV_CACHE_LAYOUT_LHBNC), "flashinfer");
  } else {
    FZ_CHECK(p.unchanged(snap), "a failed get_properties wrote");
  }
  const char* fi = nullptr;
  const cattn_status_t sf = cattn_fuzz_flashinfer_layout(l, &fi);
  check_status_valid(sf);
  check_failure_message(sf, "cattn_get_flashinfer_layout_string");
  FZ_CHECK(sf == (i < 0 ? CATTN_INVALID_ARGUMENT : l == CATTN_KV_CACHE_LAYOUT_LHBNC ? CATTN_NOT_SUPPORTED : CATTN_OK),
           "flashinfer status");
  FZ_CHECK((fi != nullptr) == (sf == CATTN_OK), "flashinfer output");
}

int64_t pick_size(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: return fdp.ConsumeIntegral<int64_t>();
    case 1: return int64_t{1} << fdp.ConsumeIntegralInRange<int>(0, 62);
    case 2: return 0;
    case 3: return INT64_MAX - fdp.ConsumeIntegralInRange<int64_t>(0, 3);
    default: return fdp.ConsumeIntegralInRange<int64_t>(0, 100);
  }
}

void fuzz_strides(FuzzedDataProvider& fdp) {
  const int l = pick_layout(fdp);
  const int i = index_of_value(l);
  const size_t ss = pick_struct_size(fdp, CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE);
  Struct<cattn_kv_cache_layout_strides_args_t> args(CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT, ss);
  auto* a = args.get();
  store(&a->layout, l);
  for (auto& s : a->sizes) s = pick_size(fdp);
  a->reserved0 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
  const auto snap = args.snapshot();
  // Model in 128 bits: numel and each stride (an empty axis counts as 1) must fit int64.
  bool ok = i >= 0 && ss >= CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE && a->reserved0 == 0;
  __int128 numel = 1, want[5] = {};
  for (int k = 0; ok && k < 5; ++k) ok = a->sizes[k] >= 0;
  for (int k = 0; ok && k < 5; ++k) {
    numel *= a->sizes[k];
    ok = numel <= INT64_MAX;
  }
  __int128 run = 1;
  for (int k = 4; ok && k >= 0; --k) {
    const int axis = kStrideOrder[i][k];
    want[axis] = run;
    if (k > 0) run *= std::max<int64_t>(a->sizes[axis], 1);
    ok = run <= INT64_MAX;
  }
  const cattn_status_t st = cattn_kv_cache_layout_strides(a);
  check_status_valid(st);
  check_failure_message(st, "cattn_kv_cache_layout_strides");
  FZ_CHECK((st == CATTN_OK) == ok, "strides status");
  if (st == CATTN_OK) {
    for (int k = 0; k < 5; ++k) {
      FZ_CHECK(a->strides[k] == want[k], "stride " + std::to_string(k));
      FZ_CHECK(a->physical_shape[k] == a->sizes[kStrideOrder[i][k]], "physical shape");
    }
    FZ_CHECK(a->numel == numel, "numel");
  } else {
    FZ_CHECK(args.unchanged(snap), "a failed strides call wrote");
  }
}

void fuzz_supported(FuzzedDataProvider& fdp) {
  const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  std::vector<int64_t> counts;
  std::vector<int> values;
  for (int64_t b = 0; b < n; ++b) {
    const int c = fdp.ConsumeIntegralInRange<int>(0, 9);
    if (c == 9) {
      counts.push_back(CATTN_KV_CACHE_LAYOUTS_NONE);
      continue;
    }
    counts.push_back(c == 8 ? fdp.ConsumeIntegralInRange<int64_t>(-5, -2) : c);
    for (int k = 0; k < std::max(c, 0) && c < 8; ++k) values.push_back(pick_layout(fdp) % 8);
  }
  const int64_t cap = fdp.ConsumeIntegralInRange<int64_t>(-1, 10);
  Bytes out(sizeof(int) * 10, kPoisonByte);
  const auto out_before = out.all();
  Struct<cattn_get_supported_kv_cache_layouts_args_t> args(CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT,
                                                           pick_struct_size(fdp, CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_SIZE));
  auto* a = args.get();
  a->num_backends = n;
  a->backend_counts = counts.empty() ? nullptr : counts.data();
  a->layouts = values.empty() ? nullptr : reinterpret_cast<const cattn_kv_cache_layout_t*>(values.data());
  a->out = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : reinterpret_cast<cattn_kv_cache_layout_t*>(out.payload());
  a->out_capacity = cap;
  const auto snap = args.snapshot();

  // Model.
  bool ok = a->struct_size >= CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_SIZE;
  std::vector<std::vector<int>> lists;
  size_t at = 0;
  for (int64_t c : counts) {
    if (c < -1) ok = false;
    if (c < 0) continue;
    lists.emplace_back(values.begin() + at, values.begin() + at + c);
    at += c;
  }
  for (int v : values) ok = ok && index_of_value(v) >= 0;
  std::vector<int> want;
  cattn_status_t code = CATTN_INVALID_ARGUMENT;
  if (ok) {
    if (lists.empty()) {
      want = {1, 2, 5, 4, 6, 3};
    } else if (std::all_of(lists.begin(), lists.end(), [&](const auto& x) { return x == lists[0]; })) {
      want = lists[0];
    } else if (std::any_of(lists.begin(), lists.end(), [](const auto& x) { return x.empty(); })) {
      ok = false;
    } else {
      std::vector<std::pair<int64_t, int>> ranked;  // (-votes, iteration index)
      for (int i = 0; i < 6; ++i) {
        bool everywhere = true;
        int64_t votes = 0;
        for (const auto& x : lists) {
          everywhere = everywhere && std::find(x.begin(), x.end(), kValue[i]) != x.end();
          votes += x[0] == kValue[i];
        }
        if (everywhere) ranked.push_back({-votes, i});
      }
      std::sort(ranked.begin(), ranked.end());
      for (const auto& r : ranked) want.push_back(kValue[r.second]);
      ok = !want.empty();
    }
  }
  if (ok && static_cast<int64_t>(want.size()) > cap) {
    ok = false;
    code = CATTN_INSUFFICIENT_SIZE;
  }
  if (ok && !want.empty() && a->out == nullptr) ok = false;

  const cattn_status_t st = cattn_get_supported_kv_cache_layouts(a);
  check_status_valid(st);
  check_failure_message(st, "cattn_get_supported_kv_cache_layouts");
  FZ_CHECK(st == (ok ? CATTN_OK : code), std::string("get_supported returned ") + cattn_status_string(st));
  FZ_CHECK(out.guards_intact(), "get_supported wrote outside out");
  if (st == CATTN_OK) {
    FZ_CHECK(a->num_out == static_cast<int64_t>(want.size()), "num_out");
    for (size_t k = 0; k < want.size(); ++k) {
      int v;
      std::memcpy(&v, out.payload() + k * sizeof v, sizeof v);
      FZ_CHECK(v == want[k], "layout " + std::to_string(k));
    }
    FZ_CHECK(std::equal(out.all().begin() + kGuard + want.size() * sizeof(int), out.all().end(),
                        out_before.begin() + kGuard + want.size() * sizeof(int)),
             "wrote past num_out");
  } else {
    FZ_CHECK(args.unchanged(snap) && out.all() == out_before, "a failed get_supported wrote");
  }
}

void fuzz_resolve(FuzzedDataProvider& fdp, cattn_context_t* ctx, std::optional<std::string>& state) {
  const int64_t workers = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
  std::vector<std::string> base;
  const int k = fdp.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < k; ++i) base.push_back(pick_name(fdp));
  std::vector<std::vector<std::string>> lists(workers, base);
  if (workers > 1 && fdp.ConsumeIntegralInRange<int>(0, 5) == 0) lists[1].push_back(pick_name(fdp));
  std::vector<int64_t> counts;
  std::vector<std::string> flat;
  for (const auto& l : lists) {
    counts.push_back(static_cast<int64_t>(l.size()));
    flat.insert(flat.end(), l.begin(), l.end());
  }
  std::vector<const char*> names;
  for (const auto& s : flat) names.push_back(s.c_str());
  const int64_t specs = fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  std::vector<int64_t> h, nst, pg;
  for (int64_t s = 0; s < specs; ++s) {
    h.push_back(fdp.ConsumeIntegralInRange<int>(0, 3) == 0 ? fdp.ConsumeIntegral<int64_t>() : 8);
    nst.push_back(16);
    pg.push_back(4096);
  }
  const bool has_env = fdp.ConsumeBool(), has_conn = fdp.ConsumeBool();
  const std::string env = pick_name(fdp), conn = pick_name(fdp);
  Struct<cattn_resolve_kv_cache_layout_args_t> args(CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT,
                                                    pick_struct_size(fdp, CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_SIZE));
  auto* a = args.get();
  a->num_workers = workers;
  a->worker_counts = counts.empty() ? nullptr : counts.data();
  a->worker_names = names.empty() ? nullptr : names.data();
  a->num_specs = specs;
  a->spec_num_heads = h.empty() ? nullptr : h.data();
  a->spec_num_states = nst.empty() ? nullptr : nst.data();
  a->spec_page_size_bytes = pg.empty() ? nullptr : pg.data();
  a->env_value = has_env ? env.c_str() : nullptr;
  a->connector_layout = has_conn ? conn.c_str() : nullptr;
  if (fdp.ConsumeIntegralInRange<int>(0, 31) == 0) (fdp.ConsumeBool() ? a->reserved0 : a->reserved1) = 1;
  const auto snap = args.snapshot();

  // Model.
  bool ok = a->struct_size >= CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_SIZE && a->reserved0 == 0 &&
            a->reserved1 == 0;
  int want = -1, fell = 0, preset = 0;
  if (ok && state) {
    want = model_parse(*state);
    ok = want >= 0;
    preset = 1;
  } else if (ok) {
    ok = workers > 0 && !base.empty();
    for (const auto& l : lists) ok = ok && l == lists[0];
    std::vector<int> cand;
    for (const auto& s : base) {
      cand.push_back(model_parse(s));
      ok = ok && cand.back() >= 0;
    }
    bool mixed = false;
    for (int64_t s = 1; s < specs; ++s) mixed = mixed || h[s] != h[0];
    if (ok && mixed) {
      cand.erase(std::remove_if(cand.begin(), cand.end(), [](int i) { return !compact(i); }), cand.end());
      ok = !cand.empty();
    }
    auto is_cand = [&](int i) { return std::find(cand.begin(), cand.end(), i) != cand.end(); };
    if (ok && has_env) {
      want = model_parse(env);
      ok = want >= 0 && is_cand(want);
    } else if (ok && has_conn) {
      want = model_parse(conn);
      ok = want >= 0;
      if (ok && !is_cand(want)) {
        want = cand[0];
        fell = 1;
      }
    } else if (ok) {
      want = cand[0];
    }
  }
  const cattn_status_t st = cattn_resolve_kv_cache_layout(ctx, a);
  check_status_valid(st);
  check_failure_message(st, "cattn_resolve_kv_cache_layout");
  FZ_CHECK((st == CATTN_OK) == ok, std::string("resolve returned ") + cattn_status_string(st));
  if (st == CATTN_OK) {
    FZ_CHECK(load(a->layout) == kValue[want] && a->connector_fell_back == fell && a->from_preset == preset,
             "resolved layout");
    if (!state) state = kNames[want];
  } else {
    FZ_CHECK(args.unchanged(snap), "a failed resolve wrote args");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  fuzz_names_and_properties(fdp);
  fuzz_strides(fdp);
  fuzz_supported(fdp);

  cattn_context_t* ctx = nullptr;
  FZ_CHECK(cattn_context_create(&ctx) == CATTN_OK, "context_create");
  std::optional<std::string> state;  // the model of the context's stored name
  const int steps = fdp.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < steps; ++i) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: {
        const bool clear = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
        const std::string s = pick_name(fdp);
        const cattn_status_t st = cattn_context_set_kv_cache_layout_preset(ctx, clear ? nullptr : s.c_str());
        check_status_valid(st);
        check_failure_message(st, "cattn_context_set_kv_cache_layout_preset");
        const bool ok = clear || s.size() <= CATTN_KV_CACHE_LAYOUT_NAME_MAX;
        FZ_CHECK((st == CATTN_OK) == ok, "set_preset status");
        if (ok) state = clear ? std::nullopt : std::optional<std::string>(s);
        break;
      }
      case 1: fuzz_resolve(fdp, ctx, state); break;
      case 2: {
        const std::string s = pick_name(fdp);
        const cattn_status_t st = cattn_record_kv_cache_layout(ctx, s.c_str());
        check_status_valid(st);
        check_failure_message(st, "cattn_record_kv_cache_layout");
        const int l = model_parse(s);
        const bool ok = l >= 0 && (!state || *state == kNames[l]);
        FZ_CHECK((st == CATTN_OK) == ok, "record status");
        if (ok) state = kNames[l];
        break;
      }
      default: {
        Bytes out(sizeof(int), kPoisonByte);
        const auto before = out.all();
        const cattn_status_t st =
            cattn_get_resolved_kv_cache_layout(ctx, reinterpret_cast<cattn_kv_cache_layout_t*>(out.payload()));
        check_status_valid(st);
        check_failure_message(st, "cattn_get_resolved_kv_cache_layout");
        const int l = state ? model_parse(*state) : -1;
        FZ_CHECK((st == CATTN_OK) == (l >= 0), "get_resolved status");
        if (st == CATTN_OK) {
          int v;
          std::memcpy(&v, out.payload(), sizeof v);
          FZ_CHECK(v == kValue[l], "get_resolved value");
        } else {
          FZ_CHECK(out.all() == before, "a failed get_resolved wrote");
        }
      }
    }
  }
  cattn_context_destroy(ctx);
  // A forged context at an odd address: refused without reading it (UBSan would report a
  // misaligned access); destroying it frees nothing.
  alignas(16) static unsigned char forged[64];
  auto* fake = reinterpret_cast<cattn_context_t*>(forged + 1 + fdp.ConsumeIntegralInRange<int>(0, 14));
  cattn_kv_cache_layout_t got;
  FZ_CHECK(cattn_get_resolved_kv_cache_layout(fake, &got) == CATTN_INVALID_ARGUMENT, "a forged context was read");
  FZ_CHECK(cattn_context_set_kv_cache_layout_preset(fake, "NHD") == CATTN_INVALID_ARGUMENT,
           "a forged context was written");
  FZ_CHECK(cattn_context_set_kv_cache_layout_override(fake, CATTN_KV_CACHE_LAYOUT_HND) == CATTN_INVALID_ARGUMENT,
           "a forged context was overridden");
  cattn_context_destroy(fake);
  return 0;
}
