#include "engine/cpu/float16.h"

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {

namespace {
constexpr int64_t kGrain = 1 << 14;  // elements a thread takes at least
}  // namespace

void widen(DataType from, const uint16_t* x, float* y, int64_t n) {
  const IsaKernels& k = kernels();
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { k.widen(from, x + b, y + b, e - b); });
}

void narrow(DataType to, const float* x, uint16_t* y, int64_t n) {
  const IsaKernels& k = kernels();
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { k.narrow(to, x + b, y + b, e - b); });
}

}  // namespace kiln::cpu
