// Work estimates of a node from its inferred shapes: multiply-accumulates and FLOPs.
#pragma once

#include "ir/graph.h"

namespace kiln {

struct NodeCost {
  double macs = 0;    // multiply-accumulates of the heavy ops (Conv, MatMul, Gemm ...)
  double flops = 0;   // 2 * macs for those; one per output element for elementwise work
  bool exact = true;  // false when an unknown or symbolic dim was taken as 1
};

NodeCost node_cost(const Node& n);

}  // namespace kiln
