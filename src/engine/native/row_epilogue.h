// The chain after a native kernel's result (patch ConvTranspose, depthwise Conv) as what the
// kernel applies to each finished row while it is in cache: a bias first, folded into the
// kernel's own, then activations and scalings (cpu::RowOp).
#pragma once

#include <optional>
#include <vector>

#include "engine/cpu/elementwise.h"
#include "engine/graph_facts.h"
#include "engine/group.h"

namespace kiln::engine {

// The activations and scalings of `units` (no bias among them) as row operations; nullopt when
// one of them is not a row's.
std::optional<std::vector<cpu::RowOp>> row_ops_of(const std::vector<EpilogueUnit>& units);

// Cuts units (from match_epilogue) to the longest prefix rows can take.
void keep_row_ops(std::vector<EpilogueUnit>& units);

struct RowEpilogue {
  std::optional<Tensor> bias;  // the anchor's own bias plus a leading bias unit's; none if neither
  std::vector<cpu::RowOp> ops;
};
// g's epilogue (cut by keep_row_ops) for an anchor with `channels` output channels and its own
// bias `own` (may be null).
RowEpilogue row_epilogue(const Group& g, const Tensor* own, int64_t channels, const GraphFacts& f);

}  // namespace kiln::engine
