// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 11: cattn_get_per_layer_parameters and
// cattn_infer_global_hyperparameters. Arrays of versioned structs whose stride is their
// struct_size (the known size, larger ones from a newer header, smaller or inconsistent ones),
// placed at unaligned addresses, with flags that are not booleans, NaN/-0.0/inf fields, and
// element counts past the address space. The output array (or struct) may share one buffer with
// the input array: overlapping it (refused), touching it, or apart. The reference states vLLM's
// rules field by field.
#include <cmath>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

double pick_double(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return std::nan("");
    case 1: return -0.0;
    case 2: return 0.0;
    case 3: return INFINITY;
    case 4: return 1.0;
    case 5: return 0.5;
    default: return fdp.ConsumeFloatingPoint<double>();
  }
}
int32_t pick_flag(FuzzedDataProvider& fdp) {
  return fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? fdp.ConsumeIntegral<int32_t>()
                                                    : fdp.ConsumeIntegralInRange<int32_t>(0, 1);
}

// An array of `count` structs of `stride` bytes at an unaligned offset, in owned memory (its
// own, or a buffer it shares with another array).
struct Array {
  std::shared_ptr<Bytes> mem;
  size_t offset, stride, count;
  Array(size_t count_, size_t stride_, size_t offset_, size_t known)
      : mem(std::make_shared<Bytes>(offset_ + count_ * std::max(stride_, known) + known, kPoisonByte)),
        offset(offset_), stride(stride_), count(count_) {}
  Array(std::shared_ptr<Bytes> shared, size_t count_, size_t stride_, size_t offset_)
      : mem(std::move(shared)), offset(offset_), stride(stride_), count(count_) {}
  uint8_t* at(size_t i) { return mem->payload() + offset + i * stride; }
  // The bytes the library sees the array span: count x element 0's struct_size.
  size_t bytes() const { return count * stride; }
};

// Offsets of two arrays (or an array and a struct) of `a` and `b` bytes in one buffer: b's start
// relative to a's at a's start, inside a, touching a's end or start, or anywhere near, shifted
// so that both start at offset >= 0; b's offset a multiple of `b_align`. Returns the buffer size
// needed, with `slack` bytes after the later end (reads of inconsistent strides stay inside).
size_t place_pair(FuzzedDataProvider& fdp, size_t a, size_t b, size_t b_align, size_t slack, size_t* a_off, size_t* b_off) {
  const int64_t ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b);
  int64_t rel = 0;  // b's start minus a's start
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: rel = 0; break;
    case 1: rel = fdp.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(ia - 1, 0)); break;
    case 2: rel = ia; break;
    case 3: rel = -ib; break;
    case 4: rel = -fdp.ConsumeIntegralInRange<int64_t>(0, ib); break;
    default: rel = fdp.ConsumeIntegralInRange<int64_t>(-ib - 8, ia + 8); break;
  }
  int64_t ao = fdp.ConsumeIntegralInRange<int64_t>(0, 7) + std::max<int64_t>(0, -rel) + static_cast<int64_t>(b_align);
  int64_t bo = ao + rel;
  bo -= bo % static_cast<int64_t>(b_align);  // keep b aligned (it may then move by < b_align)
  *a_off = static_cast<size_t>(ao);
  *b_off = static_cast<size_t>(bo);
  return static_cast<size_t>(std::max(ao + ia, bo + ib)) + slack;
}

bool ranges_overlap(size_t a0, size_t an, size_t b0, size_t bn) { return a0 < b0 + bn && b0 < a0 + an; }

size_t pick_count(FuzzedDataProvider& fdp, bool* past_memory) {
  *past_memory = false;
  if (fdp.ConsumeIntegralInRange<int>(0, 31) != 0) return fdp.ConsumeIntegralInRange<size_t>(0, 6);
  *past_memory = true;  // more elements than the address space holds: refused from the numbers
  const size_t big[] = {SIZE_MAX, SIZE_MAX / 2, size_t{1} << 62};
  return big[fdp.ConsumeIntegralInRange<int>(0, 2)];
}

bool same_params(const cattn_per_layer_parameters_t& a, const cattn_per_layer_parameters_t& b) {
  const bool cap = a.has_logits_soft_cap == b.has_logits_soft_cap &&
                   (a.has_logits_soft_cap == 0 || a.logits_soft_cap == b.logits_soft_cap);
  return a.window_left == b.window_left && cap && a.sm_scale == b.sm_scale && a.has_sinks == b.has_sinks;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  {  // get_per_layer_parameters
    bool past = false;
    const size_t count = pick_count(fdp, &past);
    const size_t owned = past ? 2 : count;  // elements actually laid out
    const size_t in_size = pick_element_size(fdp, CATTN_ATTENTION_LAYER_DESC_SIZE);
    const size_t out_size = pick_element_size(fdp, CATTN_PER_LAYER_PARAMETERS_SIZE);
    // Separate buffers, or one shared by both arrays (bytes for strides up to 16 past the
    // known sizes, so that reading an inconsistent stride stays in owned memory).
    const bool shared = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
    const size_t widest = std::max(CATTN_ATTENTION_LAYER_DESC_SIZE, CATTN_PER_LAYER_PARAMETERS_SIZE) + 16;
    size_t in_off = fdp.ConsumeIntegralInRange<size_t>(0, 7), out_off = fdp.ConsumeIntegralInRange<size_t>(0, 7);
    std::shared_ptr<Bytes> buffer;
    if (shared) {
      const size_t total = place_pair(fdp, owned * std::max(in_size, CATTN_ATTENTION_LAYER_DESC_SIZE),
                                      owned * std::max(out_size, CATTN_PER_LAYER_PARAMETERS_SIZE), 1,
                                      (owned + 2) * widest, &in_off, &out_off);
      in_off += 8;
      out_off += 8;
      // out's struct_size stores (written after layers) must not change layers' stride into an
      // arbitrary number, which would claim memory the harness does not own: one that touches
      // layers[0].struct_size covers it exactly.
      for (size_t k = 0; k < owned; ++k) {
        const size_t at = out_off + k * out_size;
        if (at < in_off + 8 && in_off < at + 8 && at != in_off) {
          out_off = out_off + in_off - at;
          break;
        }
      }
      buffer = std::make_shared<Bytes>(total + 16, kPoisonByte);
    }
    Array in = shared ? Array(buffer, owned, in_size, in_off)
                      : Array(owned, in_size, in_off, CATTN_ATTENTION_LAYER_DESC_SIZE);
    Array out = shared ? Array(buffer, owned, out_size, out_off)
                       : Array(owned, out_size, out_off, CATTN_PER_LAYER_PARAMETERS_SIZE);
    bool ok = !past;
    std::vector<cattn_attention_layer_desc_t> descs;
    for (size_t i = 0; i < owned; ++i) {
      cattn_attention_layer_desc_t d = CATTN_ATTENTION_LAYER_DESC_INIT;
      // Element 0's struct_size is the array's stride; a later one may disagree with it.
      d.struct_size = i > 0 && fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? pick_element_size(fdp, in_size + 1) : in_size;
      d.sliding_window_left = pick_value(fdp, 4096);
      d.sliding_window_right = pick_value(fdp, 4096);
      d.logits_soft_cap = pick_double(fdp);
      d.scale = pick_double(fdp);
      d.has_sliding_window = pick_flag(fdp);
      d.has_logits_soft_cap = pick_flag(fdp);
      d.has_sinks = pick_flag(fdp);
      d.reserved0 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
      std::memcpy(in.at(i), &d, std::min(sizeof d, in_size >= sizeof d ? sizeof d : sizeof(size_t)));
      if (i > 0 && in_size < sizeof d) continue;
      descs.push_back(d);
      ok = ok && d.struct_size == in_size && (d.has_sliding_window & ~1) == 0 &&
           (d.has_logits_soft_cap & ~1) == 0 && (d.has_sinks & ~1) == 0 && d.reserved0 == 0;
    }
    for (size_t i = 0; i < owned; ++i) {
      const size_t s = i > 0 && fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? out_size + 8 : out_size;
      std::memcpy(out.at(i), &s, sizeof s);
      ok = ok && s == out_size;
    }
    ok = ok && in_size >= CATTN_ATTENTION_LAYER_DESC_SIZE && out_size >= CATTN_PER_LAYER_PARAMETERS_SIZE;
    // Arrays sharing a byte are refused. (When they do not, writing out's struct sizes touched
    // nothing of layers; when they do, any clobbered layer makes the call fail all the same.)
    if (shared) ok = ok && !ranges_overlap(in.offset, in.bytes(), out.offset, out.bytes());
    const bool null_in = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
    const bool null_out = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
    ok = count == 0 || (ok && !null_in && !null_out);
    FZ_LOG("layers: count %zu shared %d in %zu+%zux%zu out %zu+%zux%zu buffer %zu predicted %d\n", count, shared,
           in.offset, in.stride, in.count, out.offset, out.stride, out.count, in.mem->payload_size(), ok);
    const auto in_snap = in.mem->all(), out_snap = out.mem->all();
    const cattn_status_t s = cattn_get_per_layer_parameters(
        null_in ? nullptr : reinterpret_cast<const cattn_attention_layer_desc_t*>(in.at(0)), count,
        null_out ? nullptr : reinterpret_cast<cattn_per_layer_parameters_t*>(out.at(0)));
    check_status_valid(s);
    check_failure_message(s, "cattn_get_per_layer_parameters");
    FZ_CHECK((s == CATTN_OK) == ok, std::string("get_per_layer_parameters: ") + cattn_status_string(s));
    if (!shared) FZ_CHECK(in.mem->all() == in_snap, "layers were written");
    std::vector<uint8_t> image = out_snap;  // (the shared buffer's image covers layers too)
    if (s == CATTN_OK) {
      for (size_t i = 0; i < count; ++i) {
        const cattn_attention_layer_desc_t& d = descs[i];
        cattn_per_layer_parameters_t p{};
        p.struct_size = out_size;
        p.window_left = d.has_sliding_window ? d.sliding_window_left : -1;
        p.logits_soft_cap = d.has_logits_soft_cap ? d.logits_soft_cap : 0.0;
        p.sm_scale = d.scale;
        p.has_logits_soft_cap = d.has_logits_soft_cap;
        p.has_sinks = d.has_sinks;
        std::memcpy(image.data() + kGuard + out.offset + i * out_size, &p, sizeof p);
      }
    }
    FZ_CHECK(out.mem->all() == image, "out differs: " + first_difference(out.mem->all(), image));
  }
  {  // infer_global_hyperparameters
    bool past = false;
    const size_t count = pick_count(fdp, &past);
    const size_t owned = past ? 2 : count;
    const size_t p_size = pick_element_size(fdp, CATTN_PER_LAYER_PARAMETERS_SIZE);
    // *out in a buffer of its own, or in the params array's buffer (8-aligned, as a struct).
    const bool shared = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
    size_t p_off = fdp.ConsumeIntegralInRange<size_t>(0, 7), g_off = 0;
    std::shared_ptr<Bytes> buffer;
    if (shared) {
      const size_t total = place_pair(fdp, owned * std::max(p_size, CATTN_PER_LAYER_PARAMETERS_SIZE),
                                      sizeof(cattn_global_hyperparameters_t), 8,
                                      (owned + 2) * (CATTN_PER_LAYER_PARAMETERS_SIZE + 16), &p_off, &g_off);
      buffer = std::make_shared<Bytes>(total, kPoisonByte);
    }
    Array params = shared ? Array(buffer, owned, p_size, p_off)
                          : Array(owned, p_size, p_off, CATTN_PER_LAYER_PARAMETERS_SIZE);
    // *out's initial bytes, written before params (so that params' struct sizes, which claim its
    // memory, stay as written; *out's may be clobbered, which fails all the same).
    const size_t g_size = pick_struct_size(fdp, CATTN_GLOBAL_HYPERPARAMETERS_SIZE);
    Struct<cattn_global_hyperparameters_t> own_g(CATTN_GLOBAL_HYPERPARAMETERS_INIT, g_size);
    cattn_global_hyperparameters_t* gp = own_g.get();
    if (shared) {
      cattn_global_hyperparameters_t init = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
      init.struct_size = g_size;
      gp = reinterpret_cast<cattn_global_hyperparameters_t*>(buffer->payload() + g_off);
      std::memcpy(static_cast<void*>(gp), &init, sizeof init);
    }
    std::vector<cattn_per_layer_parameters_t> ps;
    bool ok = !past && count >= 1 && p_size >= CATTN_PER_LAYER_PARAMETERS_SIZE;
    const bool similar = fdp.ConsumeBool();  // layers mostly alike, so the flags can be 1
    cattn_per_layer_parameters_t first = CATTN_PER_LAYER_PARAMETERS_INIT;
    for (size_t i = 0; i < owned; ++i) {
      cattn_per_layer_parameters_t p = CATTN_PER_LAYER_PARAMETERS_INIT;
      p.struct_size = i > 0 && fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? p_size + 8 : p_size;
      if (similar && i > 0 && fdp.ConsumeBool()) {
        p = first;
        p.struct_size = p_size;
      } else {
        p.window_left = fdp.ConsumeBool() ? -1 : pick_value(fdp, 4096);
        p.logits_soft_cap = pick_double(fdp);
        p.sm_scale = pick_double(fdp);
        p.has_logits_soft_cap = pick_flag(fdp);
        p.has_sinks = pick_flag(fdp);
      }
      if (i == 0) first = p;
      std::memcpy(params.at(i), &p, p_size >= sizeof p ? sizeof p : sizeof(size_t));
      if (i > 0 && p_size < sizeof p) continue;
      ps.push_back(p);
      ok = ok && p.struct_size == p_size && (p.has_logits_soft_cap & ~1) == 0 && (p.has_sinks & ~1) == 0;
    }
    // Arrays sharing a byte are refused.
    if (shared) ok = ok && !ranges_overlap(params.offset, params.bytes(), g_off, sizeof(cattn_global_hyperparameters_t));
    const bool null_params = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
    const bool null_out = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
    ok = ok && !null_params && !null_out && g_size >= CATTN_GLOBAL_HYPERPARAMETERS_SIZE;
    const auto p_snap = params.mem->all(), g_snap = own_g.snapshot();
    const cattn_status_t s = cattn_infer_global_hyperparameters(
        null_params ? nullptr : reinterpret_cast<const cattn_per_layer_parameters_t*>(params.at(0)), count,
        null_out ? nullptr : gp);
    check_status_valid(s);
    check_failure_message(s, "cattn_infer_global_hyperparameters");
    FZ_CHECK((s == CATTN_OK) == ok, std::string("infer_global_hyperparameters: ") + cattn_status_string(s));
    if (!shared) FZ_CHECK(params.mem->all() == p_snap, "params were written");
    if (s != CATTN_OK) {
      FZ_CHECK(own_g.unchanged(g_snap) && params.mem->all() == p_snap, "a failed call wrote out");
      return 0;
    }
    cattn_global_hyperparameters_t e{};
    const cattn_per_layer_parameters_t& f = ps[0];
    e.struct_size = g_size;
    e.window_left = f.window_left;
    e.logits_soft_cap = f.has_logits_soft_cap ? f.logits_soft_cap : 0.0;
    e.sm_scale = f.sm_scale;
    e.has_logits_soft_cap = f.has_logits_soft_cap;
    e.has_sinks = f.has_sinks;
    e.has_same_window_lefts = 1;
    e.has_same_all_params = 1;
    for (size_t i = 1; i < count; ++i) {
      e.has_same_window_lefts &= ps[i].window_left == f.window_left;
      e.has_same_all_params &= same_params(ps[i], f);
    }
    if (shared) {
      std::vector<uint8_t> image = p_snap;
      std::memcpy(image.data() + kGuard + g_off, &e, sizeof e);
      FZ_CHECK(params.mem->all() == image, "global hyperparameters differ (or params changed): " +
                                               first_difference(params.mem->all(), image));
    } else {
      FZ_CHECK(own_g.equals(g_snap, e), "global hyperparameters differ");
    }
  }
  return 0;
}
