// Vectorized reductions on float32: ReduceSum, ReduceMean, ReduceMax over a contiguous run of axes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace kiln::cpu {

enum class ReduceOp : uint8_t { kSum, kMean, kMax };

// y[o, i] = reduction over k of x[o, k, i], x viewed as [outer, len, inner]: trailing axes are
// inner == 1, leading axes outer == 1. An empty reduction (len == 0) gives 0 for kSum, NaN for
// kMean and -inf for kMax; NaN in the input propagates through kMax.
void reduce(ReduceOp op, const float* x, float* y, int64_t outer, int64_t len, int64_t inner);

// x's dims and the (normalized, any order) axes to reduce, as [outer, len, inner]; nullopt when
// the reduced axes are not one contiguous run (axes of size 1 are ignored).
struct ReduceShape {
  int64_t outer = 1, len = 1, inner = 1;
};
std::optional<ReduceShape> reduce_shape(std::span<const int64_t> dims, std::span<const int64_t> axes);

}  // namespace kiln::cpu
