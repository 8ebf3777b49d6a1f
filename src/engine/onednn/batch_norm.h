// BatchNormalization in inference: what the lowerings that run it (onednn.batch_norm, and a
// concat applying it as it copies) share.
#pragma once

#include <vector>

#include "engine/graph_facts.h"

namespace kiln::engine {

// X with known positive dims (rank 2 to 5), the four per-channel inputs constant, only Y asked
// for, not training.
bool batch_norm_fits(const Node& n, const GraphFacts& f);

// Its per-channel y = scale x + shift (n fits).
struct ChannelAffine {
  std::vector<float> scale, shift;
};
ChannelAffine batch_norm_affine(const Node& n, const GraphFacts& f);

}  // namespace kiln::engine
