#include "opt/pass.h"

#include "opt/graph_edit.h"

namespace kiln::opt {

void PassContext::applied(std::string what, std::vector<std::string> removed,
                          std::vector<std::string> added) {
  ++applied_;
  rewrites_.push_back({pass_, std::move(what), std::move(removed), std::move(added)});
}

void PassContext::near_miss(std::string what, std::string reason) {
  near_misses_.push_back({pass_, std::move(what), std::move(reason)});
}

void GraphPass::run(Model& m, PassContext& ctx) const {
  // Inner graphs first, so an outer rewrite sees simplified subgraphs.
  for (Graph* g : graphs_inner_first(m)) run_graph(*g, m, ctx);
}

std::string node_label(const Node& n) {
  if (!n.name.empty()) return n.name;
  for (const Value* v : n.outputs)
    if (v) return fmt::format("{} producing '{}'", n.op_type, v->name);
  return n.op_type;
}

}  // namespace kiln::opt
