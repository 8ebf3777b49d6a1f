#include "ir/walk.h"

#include "support/error.h"

namespace kiln {

void for_each_node(const Model& m, const std::function<void(const Node&)>& fn) {
  for (const auto& f : m.functions)
    with_context("function '" + f.name + "': ", [&] { for_each_nested_node(*f.body, fn); });
  for_each_nested_node(*m.graph, fn);
}

}  // namespace kiln
