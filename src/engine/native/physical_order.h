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

// [N, C, H, W] float32 in blocks of `block` channels (16: nChw16c, 8: nChw8c).
dnnl::memory::desc channel_blocked_md(const std::vector<int64_t>& dims, int64_t block);
// The channel block of md when it holds [N, C, H, W] in whole blocks of 16 or 8 channels (what
// AVX-512's Winograd convs and AVX2's convs write), 0 when channels-last, -1 otherwise.
int64_t channel_block(const dnnl::memory::desc& md, const std::vector<int64_t>& dims);
// An operand of dims (right-aligned against [N, C, H, W]) in the physical order of a blocked
// [N, C, H, W] result, [N, C / block, H, W, block], when its row-major bytes lie in that order:
// it broadcasts along the channels (C 1), or holds them all with H = W = 1 (a per-channel
// scale); nullopt otherwise. `channels` is the result's C.
std::optional<std::vector<int64_t>> in_channel_blocks(std::vector<int64_t> dims, int64_t channels,
                                                      int64_t block);

}  // namespace kiln::engine
