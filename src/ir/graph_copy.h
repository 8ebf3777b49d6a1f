// Deep copies of graphs: a subgraph (If branch, Loop/Scan body) made into a standalone graph that
// an executor can compile as a model of its own.
#pragma once

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace kiln {

struct SubgraphCopy {
  std::unique_ptr<Graph> graph;  // no parent: every value it reads is its own
  // The values of enclosing graphs that became graph inputs, in order, after the body's own inputs.
  std::vector<const Value*> outer_inputs;
  // Every node of the copy (nested subgraphs' included) -> the node it was copied from.
  std::unordered_map<const Node*, const Node*> origin;
};

// The value of an outer-scope value when it is a constant (its data becomes an initializer of the
// copy), or null (it becomes a graph input).
using OuterConstant = std::function<const Tensor*(const Value*)>;

// Copies `body` and the graphs nested in it. Values of the graphs enclosing `body` that it reads
// (at any depth, as node inputs or as outputs) become graph inputs of the copy, appended after its
// own in the order first read, or initializers where `constant_of` gives their value (by default,
// the ones with data). Tensor data is shared, not copied. Fails (kBadModel) on a value read before
// its graph makes it.
SubgraphCopy copy_subgraph(const Graph& body, const OuterConstant& constant_of = nullptr);

}  // namespace kiln
