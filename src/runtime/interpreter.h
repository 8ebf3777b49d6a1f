// Runs one graph (or subgraph) on concrete values, frame by frame for control flow.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln {

// Values bound while a graph runs; subgraph frames see their parent's (outer scope).
class Frame {
 public:
  explicit Frame(const Frame* parent = nullptr) : parent_(parent) {}
  const RtValue* find(const Value* v) const;
  void bind(const Value* v, RtValue x) { values_[v] = std::move(x); }
  void release(const Value* v) { values_.erase(v); }

 private:
  const Frame* parent_;
  std::unordered_map<const Value*, RtValue> values_;
};

// Runs g with its inputs bound to `inputs` (in g.inputs order) and returns its outputs.
std::vector<RtValue> run_graph(const Graph& g, const std::vector<RtValue>& inputs,
                               const Frame* outer);

}  // namespace kiln
