// Conv's geometry as oneDNN's convolution takes it, shared by the lowerings of Conv (onednn.conv,
// and cpu.depthwise_conv for one filter per channel).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/graph_facts.h"

namespace kiln::engine {

struct ConvGeometry {
  std::vector<int64_t> src, weights, dst;  // weights grouped [G, M/G, C/G, k...] when G > 1
  std::vector<int64_t> strides, dilations, pad_l, pad_r;  // dilations: 0 for none (oneDNN's)
  int64_t channels_out = 0;
};

// Float Conv of rank 3 to 5 with constant weights (and bias), known positive dims, pads resolved
// (auto_pad included) and an output of positive dims; nullopt otherwise (the reference kernel
// reports what is wrong).
std::optional<ConvGeometry> conv_geometry(const Node& n, const GraphFacts& f);
// The same for input dims x (null: unknown) and the dims of constant weights of any element type
// (a QLinearConv's); the bias is not looked at.
std::optional<ConvGeometry> conv_geometry_of(const Node& n, const std::vector<int64_t>* x,
                                             const std::vector<int64_t>& weight_dims);

}  // namespace kiln::engine
