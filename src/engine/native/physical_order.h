// A dense layout seen as a permutation of the logical axes: a channels-last [N, C, H, W] tensor is
// the row-major [N, H, W, C]. Elementwise work on such a tensor runs in that physical order, and
// an operand broadcast along the channels ([1, C, 1, 1], row-major) reads right in it.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <vector>

namespace kiln::engine {

// The axes of md in memory order (outermost first), when md is dense and strided (no blocking,
// no padding); nullopt otherwise. Row-major gives 0, 1, ..., rank-1.
std::optional<std::vector<int>> physical_order(const dnnl::memory::desc& md);

// The dense float32 layout of dims whose axes lie in memory in `order` (outermost first).
dnnl::memory::desc dense_md(const std::vector<int64_t>& dims, const std::vector<int>& order);

// dims (right-aligned, padded with 1s to order.size()) in physical order, when a row-major
// tensor of dims holds its elements in that order too (its axes larger than 1 keep their
// relative order); nullopt otherwise.
std::optional<std::vector<int64_t>> in_physical_order(std::vector<int64_t> dims,
                                                      const std::vector<int>& order);

}  // namespace kiln::engine
