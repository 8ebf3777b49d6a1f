#include "engine/cpu/quantize.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {

namespace {

constexpr int64_t kGrain = 1 << 17;  // elements per thread at least (~15 us of work)
constexpr int64_t kDynamicGrain = 1 << 15;

const void* advance(const void* p, int64_t elems) { return static_cast<const int8_t*>(p) + elems; }
void* advance(void* p, int64_t elems) { return static_cast<int8_t*>(p) + elems; }

}  // namespace

void quantize(const float* x, int64_t n, const QuantScale& p, void* q) {
  const IsaKernels& k = kernels();
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { k.quantize(x + b, e - b, p, advance(q, b)); }, 64);
}

void dequantize(const void* q, int64_t n, const QuantScale& p, float* x) {
  const IsaKernels& k = kernels();
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { k.dequantize(advance(q, b), e - b, p, x + b); }, 64);
}

void quantized_add(const void* a, const QuantScale& pa, const void* b, const QuantScale& pb,
                   bool relu, int64_t n, const QuantScale& py, void* y) {
  const IsaKernels& k = kernels();
  parallel_for(n, kGrain, [&](int64_t from, int64_t to) {
    k.quantized_add(advance(a, from), pa, advance(b, from), pb, relu, to - from, py, advance(y, from));
  }, 64);
}

void dynamic_quantize(const float* x, int64_t n, uint8_t* q, float* scale, uint8_t* zero_point) {
  // A transformer's activations (seq x hidden: 98k floats at BERT-base seq 128) are below kGrain:
  // this pass reads them twice (range, then quantize), each split at a finer grain.
  const IsaKernels& k = kernels();
  float lo = 0.f, hi = 0.f;
  std::mutex mu;
  parallel_for(n, kDynamicGrain, [&](int64_t b, int64_t e) {
    float l = 0.f, h = 0.f;
    k.range(x + b, e - b, &l, &h);
    const std::lock_guard<std::mutex> lock(mu);
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }, 64);
  const float s = (hi == lo ? 1.0f : (hi - lo)) / 255.0f;
  const float z = std::clamp(0.0f - lo / s, 0.0f, 255.0f);
  const auto zp = static_cast<uint8_t>(std::nearbyint(z));
  *scale = s;
  *zero_point = zp;
  const QuantScale p{.scale = s, .zero_point = zp, .type = DataType::kUInt8};
  parallel_for(n, kDynamicGrain, [&](int64_t b, int64_t e) { k.quantize(x + b, e - b, p, q + b); }, 64);
}

}  // namespace kiln::cpu
