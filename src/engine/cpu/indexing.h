// NonZero and GatherND (batch_dims 0) on row-major tensors: detection post-processing runs them
// hundreds of times per image (SSDlite: 180 each on a few thousand elements), where the reference
// kernels' per-element generality costs more than the work.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/tensor.h"

namespace kiln::cpu {

// ONNX NonZero: [rank, count] int64 coordinates of the nonzero elements in row-major order, for
// bool, (u)int8, int32, int64 and float tensors of rank >= 1 (a float -0 is zero, a NaN is not);
// nullopt for other element types and scalars.
std::optional<Tensor> non_zero(const Tensor& x);

// ONNX GatherND with batch_dims 0 and int64 indices: out[i...] = data[indices[i..., :], ...].
// Negative indices count from the end; nullopt when an index is out of range or the shapes do
// not fit (the reference kernel then says why).
std::optional<Tensor> gather_nd(const Tensor& data, const Tensor& indices);

}  // namespace kiln::cpu
