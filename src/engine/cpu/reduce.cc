// ReduceSum / ReduceMean / ReduceMax over [outer, len, inner]: rows, column blocks or, for a few
// long rows, pieces of a row combined at the end.
#include "engine/cpu/reduce.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kGrain = 64 << 10;     // elements per thread
constexpr int64_t kColumnBlock = 1024;   // columns per task when reducing leading axes

// One long row split over the threads: partial sums (or maxima) per piece, then combined.
float reduce_long_row(const IsaKernels& k, ReduceOp op, const float* x, int64_t len) {
  const ReduceOp part_op = op == ReduceOp::kMax ? ReduceOp::kMax : ReduceOp::kSum;
  const int pieces = worker_threads();
  std::vector<float> part(pieces, 0.0f);
  std::vector<int64_t> begin(pieces + 1);
  for (int t = 0; t <= pieces; ++t) begin[t] = len * t / pieces / 16 * 16;
  begin[pieces] = len;
  parallel_for(pieces, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t)
      k.reduce_rows(part_op, x + begin[t], &part[t], 1, begin[t + 1] - begin[t]);
  }, 1);
  float r = op == ReduceOp::kMax ? part[0] : 0.0f;
  for (int t = 0; t < pieces; ++t) {
    if (op != ReduceOp::kMax) r += part[t];
    else if (std::isnan(part[t]) || part[t] > r) r = std::isnan(r) ? r : part[t];
  }
  return op == ReduceOp::kMean ? r / static_cast<float>(len) : r;
}

}  // namespace

void reduce(ReduceOp op, const float* x, float* y, int64_t outer, int64_t len, int64_t inner) {
  if (outer <= 0 || inner <= 0) return;
  const IsaKernels& k = kernels();
  if (inner == 1) {
    const int threads = worker_threads();
    if (outer < threads && len >= 2 * kGrain) {
      for (int64_t o = 0; o < outer; ++o) y[o] = reduce_long_row(k, op, x + o * len, len);
      return;
    }
    parallel_for(outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(len, 1)),
                 [&](int64_t b, int64_t e) { k.reduce_rows(op, x + b * len, y + b, e - b, len); },
                 1);
    return;
  }
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t task_size = std::max<int64_t>(1, len * std::min(inner, kColumnBlock));
  parallel_for(outer * blocks, std::max<int64_t>(1, kGrain / task_size), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, c = t % blocks * kColumnBlock;
      k.reduce_cols(op, x + o * len * inner + c, y + o * inner + c, len, inner,
                    std::min(kColumnBlock, inner - c));
    }
  }, 1);
}

std::optional<ReduceShape> reduce_shape(std::span<const int64_t> dims,
                                        std::span<const int64_t> axes) {
  const int rank = static_cast<int>(dims.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    if (a < 0 || a >= rank) return std::nullopt;
    reduced[a] = true;
  }
  // Axes of size 1 go either way; the others must read [kept..., reduced..., kept...].
  ReduceShape s;
  int phase = 0;  // 0: before the reduced run, 1: in it, 2: after it
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    if (reduced[d]) {
      if (phase == 2) return std::nullopt;
      phase = 1;
      s.len *= dims[d];
    } else {
      if (phase == 1) phase = 2;
      (phase == 0 ? s.outer : s.inner) *= dims[d];
    }
  }
  return s;
}

}  // namespace kiln::cpu
