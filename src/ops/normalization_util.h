// Helpers private to the normalization family (normalization_*.cc, resize.cc, sampling.cc, nms.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/kernel_util.h"

namespace kiln::norm {

// The family's registration, split over its files.
void register_norms(OpRegistry& r);    // normalization_norms.cc
void register_softmax(OpRegistry& r);  // normalization_softmax.cc
void register_reduce(OpRegistry& r);   // normalization_reduce.cc
void register_resize(OpRegistry& r);   // resize.cc
void register_sampling(
    OpRegistry& r);  // sampling.cc (GridSample, AffineGrid, RoiAlign)
void register_nms(OpRegistry& r);      // nms.cc (NonMaxSuppression)
void register_losses(OpRegistry& r);  // normalization_loss.cc (Dropout, NLL, SCE)
void register_sequence(
    OpRegistry& r);  // normalization_sequence.cc (SwiGLU, LinearAttention, CausalConv)

// A float tensor (float, double, float16, bfloat16) read into doubles, and doubles written back.
std::vector<double> to_doubles(const Node& n, const Tensor& t);
Tensor from_doubles(const Node& n, DataType dtype, std::vector<int64_t> dims,
                    const std::vector<double>& v);

// Fails (kRuntime) unless a work buffer of doubles of these dims stays within the allocation cap
// (each dim and their product). For sizes that come from attributes or input values.
void check_work(const Node& n, const std::vector<int64_t>& dims);

// Product of dims[lo, hi).
inline int64_t prod(const std::vector<int64_t>& dims, size_t lo, size_t hi) {
  int64_t p = 1;
  for (size_t i = lo; i < hi && i < dims.size(); ++i) p *= dims[i];
  return p;
}
inline int64_t prod(const std::vector<int64_t>& dims) { return prod(dims, 0, dims.size()); }

// Values of `t` (any numeric type) repeated to `out` by unidirectional (numpy) broadcasting:
// element i of the result is t's element broadcast to out_dims' element i.
std::vector<double> broadcast_to(const Node& n, const Tensor& t,
                                 const std::vector<int64_t>& out_dims);

// The shape of input i with dims [axis, rank) set to 1 (stats of a normalization over those).
std::optional<Shape> keep_leading(const std::optional<Shape>& s, int axis);

}  // namespace kiln::norm
