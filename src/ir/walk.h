// Visiting every node of a model: function bodies, the main graph and all their subgraphs.
#pragma once

#include <functional>

#include "ir/graph.h"

namespace kiln {

// Calls fn on every node of the model: function bodies first (an error raised in one gets the
// prefix "function 'f': "), then the main graph, each node before the nodes of its subgraphs.
void for_each_node(const Model& m, const std::function<void(const Node&)>& fn);

}  // namespace kiln
