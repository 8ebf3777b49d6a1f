#include "engine/onednn/gemm_probe.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "engine/cpu/int16_gemm.h"
#include "engine/cpu/parallel.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/int8_support.h"
#include "engine/threads.h"
#include "engine/tuning.h"

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct Types {
  dt src, weights, dst;
};

Types types_of(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kF32: return {dt::f32, dt::f32, dt::f32};
    case GemmPrecision::kInt8: return {dt::u8, dt::s8, dt::s32};
    case GemmPrecision::kBf16: return {dt::bf16, dt::bf16, dt::f32};
  }
  return {dt::f32, dt::f32, dt::f32};
}

// Multiply-adds x 2 per second of f(), best of 8 rounds after one (the first pays for the JIT and
// the caches).
double best_rate(double flops, const std::function<void()>& f) {
  return flops / (best_micros(f, 8, std::numeric_limits<double>::infinity()) * 1e-6);
}

// kiln's int16 kernel, what int8 matmuls run on without an int8 dot product (int16_gemm.h).
double measure_int16_gemm(int64_t m, int64_t k, int64_t n) {
  std::vector<int8_t> w(static_cast<size_t>(k * n), 63);
  const kiln::cpu::Int16Weights b(w.data(), k, n, false);
  std::vector<uint8_t> a(static_cast<size_t>(m * k), 63);
  std::vector<int16_t> a16(static_cast<size_t>(kiln::cpu::int16_gemm_a_elements(m, b)));
  std::vector<float> y(static_cast<size_t>(m * n));
  const float scale = 1.f;
  const kiln::cpu::Int16Epilogue e{.scale = &scale, .y = y.data(), .ldy = n};
  return best_rate(2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n),
                   [&] { kiln::cpu::int16_gemm(a.data(), false, m, b, a16.data(), e, kiln::cpu::worker_threads()); });
}

}  // namespace

double measure_gemm_ops(GemmPrecision p, int64_t m, int64_t k, int64_t n, int threads) {
  const ThreadScope scope(threads);
  if (p == GemmPrecision::kInt8 && !int8_dot_product())
    return kiln::cpu::int16_gemm_supported() ? measure_int16_gemm(m, k, n) : 0;
  const Types t = types_of(p);
  const dnnl::engine& eng = dnnl_engine();
  dnnl::stream& stream = dnnl_stream();
  try {
    const dnnl::memory::desc src_md({m, k}, t.src, tag::ab), dst_md({m, n}, t.dst, tag::ab);
    const dnnl::memory::desc weights_any({k, n}, t.weights, tag::any);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, weights_any, dst_md), eng);
    // oneDNN falls back to a reference kernel where the CPU lacks the ISA: that is "no kernel".
    const std::string impl = pd.impl_info_str();
    if (impl.find("ref") != std::string::npos) return 0;
    dnnl::memory src(src_md, eng), weights(pd.weights_desc(), eng), dst(dst_md, eng);
    std::fill_n(static_cast<uint8_t*>(src.get_data_handle()), src_md.get_size(), uint8_t{0x3f});
    std::fill_n(static_cast<uint8_t*>(weights.get_data_handle()), pd.weights_desc().get_size(),
                uint8_t{0x3f});  // 0.75 in f32 and bf16, 63 in int8: no denormals, no overflow
    const dnnl::matmul mm(pd);
    auto run = [&] {
      mm.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
      stream.wait();
    };
    return best_rate(2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n), run);
  } catch (const dnnl::error&) {
    return 0;  // no implementation for these types here
  }
}

}  // namespace kiln::engine
