// A group: the nodes one step runs. An anchor node, the nodes folded into how it reads its inputs
// (a Transpose read through strides) and the chain applied to its result (bias, activations,
// residual add), each chain link a unit of one or more nodes applying post-ops (epilogue.h).
#pragma once

#include <vector>

#include "engine/activation.h"
#include "engine/cpu/elementwise.h"
#include "ir/graph.h"

namespace kiln::engine {

struct KernelImpl;

// One operation of a chain on the running result y: an activation of y, y + a value of y's
// dims (a residual: oneDNN writes it in place of the value), or y op a broadcast operand.
struct PostOp {
  enum class Kind { kEltwise, kSum, kBinary };
  Kind kind = Kind::kEltwise;
  Activation act;                              // kEltwise: in its epilogue_form
  kiln::cpu::BinaryOp binary = kiln::cpu::BinaryOp::kAdd;  // kBinary: kAdd, kSub, kMul or kDiv
  const Value* operand = nullptr;              // kSum: the value added; kBinary: src1
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
  int external = -1;  // >= 0: the index of the external partition (placement.h) the group is;
                      // its members are the partition's nodes (anchor: the last, prologue: the rest)

  const Value* output() const { return epilogue.empty() ? anchor->outputs[0] : epilogue.back().out; }
  std::vector<const Node*> members() const;
};

}  // namespace kiln::engine
