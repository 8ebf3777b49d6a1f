// ConvTranspose's geometry as oneDNN's deconvolution takes it, shared by the lowerings of
// ConvTranspose (onednn.deconv, and cpu.patch_deconv for kernels equal to their strides).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/graph_facts.h"

namespace kiln::engine {

struct DeconvGeometry {
  std::vector<int64_t> src, dst, weights, weight_strides;  // weights as oneDNN sees them
  std::vector<int64_t> strides, dilations, pad_l, pad_r;   // dilations: 0 for none (oneDNN's)
  int64_t channels_out = 0;
};

// Float ConvTranspose with constant weights (and bias), known positive dims, explicit pads
// (output_padding taken off the end pad) and an output of the dims they give; nullopt otherwise.
std::optional<DeconvGeometry> deconv_geometry(const Node& n, const GraphFacts& f);

}  // namespace kiln::engine
