// Helpers shared by the control family's files (control_*.cc): type merging for subgraph ops,
// slicing and stacking along an axis, inputs that may be empty optionals.
#pragma once

#include <optional>
#include <vector>

#include "ops/op.h"

namespace kiln::control {

// Union of two shapes: equal dims stay, differing dims become unknown, differing ranks unknown.
std::optional<Shape> merge_shapes(const std::optional<Shape>& a, const std::optional<Shape>& b);
// Union of two types (tensor / sequence / optional, recursively). An unknown kind takes the other.
TypeInfo merge_types(const TypeInfo& a, const TypeInfo& b);
bool same_type(const TypeInfo& a, const TypeInfo& b);

// Input i as a value; an omitted input or an empty optional gives a kNone value.
RtValue input_or_none(const KernelContext& ctx, int i);

// Copies n elements src[src_off, src_off+n) to dst[dst_off, ...); same dtype, strings included.
void copy_elements(Tensor& dst, int64_t dst_off, const Tensor& src, int64_t src_off, int64_t n);
// The slice t[..., i, ...] along axis, with that axis removed.
Tensor take_along(const Tensor& t, int axis, int64_t i);
// Writes src (rank r) into dst (rank r+1) at index i of axis.
void put_along(Tensor& dst, int axis, int64_t i, const Tensor& src);
// Stacks equally shaped tensors along a new axis (parts must be non-empty).
Tensor stack_along(const Node& n, const std::vector<Tensor>& parts, int axis);

Tensor scalar_bool(bool v);
Tensor scalar_int64(int64_t v);
// A tensor type's dims with the first unknown; the dims when all are known.
std::optional<std::vector<int64_t>> known_shape(const TypeInfo& t);

}  // namespace kiln::control
