// Work estimates of a node: multiply-accumulates, FLOPs and bytes moved, from its inferred shapes
// (kiln inspect) or from the tensors of one run (kiln profile).
#pragma once

#include <span>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln {

struct NodeCost {
  double macs = 0;    // multiply-accumulates of the heavy ops (Conv, MatMul, Gemm, RNNs, Attention)
  double flops = 0;   // 2 * macs plus the per-element work (elementwise, norms, pools, softmax ...)
  double bytes = 0;   // bytes of the inputs read plus the outputs written
  bool exact = true;  // false when an unknown or symbolic dim was taken as 1
};

// One input or output as the estimates see it.
struct OperandShape {
  bool present = false;        // false: omitted, not produced, or no shape known
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;   // unknown and symbolic dims are 1 (and `exact` false)
  double bytes = 0;            // tensor data (all tensors of a sequence)
  bool exact = true;

  static OperandShape of(const Value* v);     // from the inferred type
  static OperandShape of(const RtValue* v);   // from a value of a run (null: omitted)
  double numel() const;
};

// From the node's inferred shapes.
NodeCost node_cost(const Node& n);
// From concrete operands, in the node's input and output order.
NodeCost node_cost(const Node& n, std::span<const OperandShape> inputs,
                   std::span<const OperandShape> outputs);

}  // namespace kiln
