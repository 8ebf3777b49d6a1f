// Softmax and LogSoftmax: rows (or column blocks) split over the threads.
#include "engine/cpu/softmax.h"

#include <algorithm>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kGrain = 16 << 10;  // elements per thread
constexpr int64_t kColumnBlock = 256;  // columns per task when the axis is not the last

void run_softmax(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, bool log) {
  if (outer == 0 || len == 0 || inner == 0) return;
  const IsaKernels& k = kernels();
  const int64_t row_grain = std::max<int64_t>(1, kGrain / len);
  if (inner == 1) {
    parallel_for(outer, row_grain, [&](int64_t b, int64_t e) {
      k.softmax_rows(x + b * len, y + b * len, e - b, len, log);
    }, 1);
    return;
  }
  // Tasks: (slice of outer, block of columns), so one large slice still uses every thread.
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t task_size = len * std::min(inner, kColumnBlock);
  parallel_for(outer * blocks, std::max<int64_t>(1, kGrain / task_size), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, c = t % blocks * kColumnBlock;
      const int64_t off = o * len * inner + c;
      k.softmax_strided(x + off, y + off, len, inner, std::min(kColumnBlock, inner - c), log);
    }
  }, 1);
}

}  // namespace

void softmax(const float* x, float* y, int64_t outer, int64_t len, int64_t inner) {
  run_softmax(x, y, outer, len, inner, false);
}

void log_softmax(const float* x, float* y, int64_t outer, int64_t len, int64_t inner) {
  run_softmax(x, y, outer, len, inner, true);
}

}  // namespace kiln::cpu
