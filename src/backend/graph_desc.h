// kiln's IR as the plugin ABI's C structs (include/kiln/backend_abi.h): the whole main graph, for
// a plugin's claims, or one partition, for its compile. The description points into the graph and
// the facts (names, dims, constants) and into storage of its own; it lives as long as both.
#pragma once

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "kiln/backend_abi.h"

namespace kiln::backend {

class GraphDesc {
 public:
  // Every node of facts.graph().nodes(), in order (node i of the description is node i there).
  explicit GraphDesc(const engine::GraphFacts& facts);
  // The partition's nodes, its inputs and outputs.
  explicit GraphDesc(const PartitionSpec& p);
  GraphDesc(const GraphDesc&) = delete;
  GraphDesc& operator=(const GraphDesc&) = delete;

  const kiln_graph_desc& c() const { return desc_; }

 private:
  void add_node(const Node& n);
  int32_t value_index(const Value* v);
  void finish();

  const engine::GraphFacts& facts_;
  std::vector<kiln_value_desc> values_;
  std::unordered_map<const Value*, int32_t> index_;
  std::deque<std::vector<int64_t>> dims_;
  std::vector<kiln_node_desc> nodes_;
  std::deque<std::vector<kiln_attr>> attrs_;
  std::deque<std::vector<int32_t>> io_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::vector<float>> floats_;
  std::vector<int32_t> inputs_, outputs_;
  kiln_graph_desc desc_{};
};

}  // namespace kiln::backend
