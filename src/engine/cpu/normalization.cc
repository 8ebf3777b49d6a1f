// LayerNormalization and RMSNormalization: rows split over the threads.
#include "engine/cpu/normalization.h"

#include <algorithm>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kGrain = 32 << 10;  // elements per thread

void run_norm(const float* x, const float* scale, const float* bias, float* y, int64_t rows,
              int64_t cols, float epsilon, bool rms, float* mean, float* inv_std) {
  if (rows <= 0) return;
  const IsaKernels& k = kernels();
  parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(cols, 1)),
               [&](int64_t b, int64_t e) {
                 k.norm_rows(x + b * cols, scale, bias, y + b * cols, e - b, cols, epsilon, rms,
                             mean ? mean + b : nullptr, inv_std ? inv_std + b : nullptr);
               }, 1);
}

}  // namespace

void layer_norm(const float* x, const float* scale, const float* bias, float* y, int64_t rows,
                int64_t cols, float epsilon, float* mean, float* inv_std) {
  run_norm(x, scale, bias, y, rows, cols, epsilon, false, mean, inv_std);
}

void rms_norm(const float* x, const float* scale, float* y, int64_t rows, int64_t cols,
              float epsilon) {
  run_norm(x, scale, nullptr, y, rows, cols, epsilon, true, nullptr, nullptr);
}

}  // namespace kiln::cpu
