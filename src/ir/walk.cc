#include "ir/walk.h"

#include "support/error.h"

namespace kiln {

namespace {

void for_each_node_in(const Graph& g, const std::function<void(const Node&)>& fn) {
  for (const auto& n : g.nodes()) {
    fn(*n);
    for (const auto& a : n->attrs) {
      if (a.g) for_each_node_in(*a.g, fn);
      for (const auto& sg : a.graphs) for_each_node_in(*sg, fn);
    }
  }
}

}  // namespace

void for_each_node(const Model& m, const std::function<void(const Node&)>& fn) {
  for (const auto& f : m.functions)
    with_context("function '" + f.name + "': ", [&] { for_each_node_in(*f.body, fn); });
  for_each_node_in(*m.graph, fn);
}

}  // namespace kiln
