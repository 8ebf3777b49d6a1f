// Visiting what a model holds: the graphs a node carries (If/Loop/Scan bodies), every node of a
// graph at any depth, every node of a model.
//
// One place for these walks, so no caller writes the loop over a node's attributes (`g` and
// `graphs`) by hand. The templates take the node or graph const or not, and hand the callback
// graphs and nodes of the same constness.
#pragma once

#include <functional>
#include <type_traits>

#include "ir/graph.h"

namespace kiln {

namespace walk_detail {
template <typename T, typename U>
using same_const_as = std::conditional_t<std::is_const_v<T>, const U, U>;
template <typename T, typename U>
concept is = std::is_same_v<std::remove_const_t<T>, U>;
}  // namespace walk_detail

// Calls fn(graph) on each graph node n holds, directly (not those nested in them), in attribute
// order: an attribute's `g`, then its `graphs`.
template <typename N, typename F>
  requires walk_detail::is<N, Node>
void for_each_subgraph(N& n, F&& fn) {
  using G = walk_detail::same_const_as<N, Graph>;
  for (auto& a : n.attrs) {
    if (a.g) fn(static_cast<G&>(*a.g));
    for (auto& sg : a.graphs)
      if (sg) fn(static_cast<G&>(*sg));
  }
}

// Whether n holds a subgraph (If, Loop, Scan, SequenceMap ...).
inline bool has_subgraph(const Node& n) {
  for (const auto& a : n.attrs)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

// Calls fn(graph) on g, then on every graph nested in it at any depth (depth first, each graph
// before the graphs its nodes hold).
template <typename Gr, typename F>
  requires walk_detail::is<Gr, Graph>
void for_each_nested_graph(Gr& g, F&& fn) {
  fn(g);
  for (const auto& n : g.nodes())
    for_each_subgraph(static_cast<walk_detail::same_const_as<Gr, Node>&>(*n),
                      [&](auto& sg) { for_each_nested_graph(sg, fn); });
}

// Calls fn(node) on every node of g and of the graphs nested in it at any depth, each node before
// the nodes of its subgraphs.
template <typename Gr, typename F>
  requires walk_detail::is<Gr, Graph>
void for_each_nested_node(Gr& g, F&& fn) {
  using N = walk_detail::same_const_as<Gr, Node>;
  for (const auto& n : g.nodes()) {
    fn(static_cast<N&>(*n));
    for_each_subgraph(static_cast<N&>(*n), [&](auto& sg) { for_each_nested_node(sg, fn); });
  }
}

// Calls fn on every node of the model: function bodies first (an error raised in one gets the
// prefix "function 'f': "), then the main graph, each node before the nodes of its subgraphs.
void for_each_node(const Model& m, const std::function<void(const Node&)>& fn);

}  // namespace kiln
