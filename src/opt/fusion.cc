#include "opt/fusion.h"

#include <algorithm>
#include <cmath>

namespace kiln::opt {

Node* made_by(const Graph& g, const Value* v, std::string_view op) {
  Node* p = v ? v->producer : nullptr;
  return p && p->owner == &g && p->domain.empty() && p->op_type == op ? p : nullptr;
}

Node* read_by(const Graph& g, const Value* v, std::string_view op) {
  Node* n = v ? single_consumer(g, v) : nullptr;
  return n && n->domain.empty() && n->op_type == op ? n : nullptr;
}

std::optional<double> scalar(const Value* v, const InferFacts& f) {
  auto vals = constant_values(v, f);
  if (!vals || vals->empty()) return std::nullopt;
  for (double x : *vals)
    if (x != vals->front()) return std::nullopt;
  return vals->front();
}

bool is_scalar(const Value* v, const InferFacts& f, double want) {
  auto s = scalar(v, f);
  return s && std::abs(*s - want) <= 1e-4 * std::max(1.0, std::abs(want));
}

void replace_match(Graph& g, const Match& match, Node* fused) {
  replace_value(g, match.out, fused->outputs[0], nullptr);
  std::vector<Node*> nodes = match.nodes;
  for (Node* n : nodes)
    for (Value* v : n->outputs)
      if (v && v->producer == n) v->producer = nullptr;
  for (Node* n : nodes) g.remove_node(n);
}

std::vector<std::string> labels(const Match& m) {
  std::vector<std::string> out;
  for (const Node* n : m.nodes) out.push_back(node_label(*n));
  return out;
}

bool FusionPass::opset_allows(const Model& m, const Node& anchor, PassContext& ctx, int needed,
                              std::string_view op) {
  const int have = model_opset(m);
  if (have >= needed) return true;
  ctx.near_miss(anchor, fmt::format("{} pattern found, but {} needs opset {} and the model has "
                                    "{} (raise it with --opset {} or -O3)",
                                    op, op, needed, have, needed));
  return false;
}

}  // namespace kiln::opt
