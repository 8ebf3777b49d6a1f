// A group: the nodes one step runs. An anchor node, the nodes folded into how it reads its inputs
// (a Transpose read through strides) and the chain applied to its result (bias, activations,
// residual add), each chain link a unit of one or more nodes that becomes oneDNN post-ops.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <vector>

#include "ir/graph.h"

namespace kiln::engine {

struct KernelImpl;

struct PostOp {
  enum class Kind { kEltwise, kSum, kBinary };
  Kind kind = Kind::kEltwise;
  dnnl::algorithm alg = dnnl::algorithm::undef;  // eltwise or binary algorithm
  float alpha = 0, beta = 0;                      // eltwise parameters
  const Value* operand = nullptr;                 // kSum: the value added; kBinary: src1
  Tensor data;  // kBinary: src1's values when made at preparation (else the operand's constant)
};

// One link of the chain: nodes that together apply `ops` to the running result and produce `out`.
struct EpilogueUnit {
  std::vector<const Node*> nodes;
  std::vector<PostOp> ops;
  const Value* out = nullptr;
  bool is_bias = false;  // an Add of a constant along the channel axis, taken as the anchor's bias
  std::vector<int64_t> perm;  // a Transpose of the result, written through strides (last unit)
};

struct Group {
  const KernelImpl* impl = nullptr;
  const Node* anchor = nullptr;
  std::vector<const Node*> prologue;
  std::vector<EpilogueUnit> epilogue;
  // Nodes reading the group's result that its step computes alongside (a GlobalAveragePool of the
  // result, summed while each row is in cache); their outputs are the step's other outputs.
  std::vector<const Node*> side;
  int position = 0;  // of the last member in the graph's node order: where the group runs

  const Value* output() const { return epilogue.empty() ? anchor->outputs[0] : epilogue.back().out; }
  std::vector<const Node*> members() const;
};

}  // namespace kiln::engine
