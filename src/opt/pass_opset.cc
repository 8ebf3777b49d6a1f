// Raising the model's ai.onnx opset, so fusions into newer ops (Gelu 20, RMSNormalization 23)
// can apply. kiln's IR holds each op in its newest form (src/spec/normalize.cc) and export writes
// the form of the declared opset, so raising is a change of the declared version, allowed only
// when no op of the model changes meaning or disappears between the two versions.
#include "ops/op.h"
#include "opt/graph_edit.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

// Ops whose behaviour (not only their form) changed at a version: raising across it would change
// what the model computes.
struct MeaningChange {
  std::string_view op;
  int version;
};
constexpr MeaningChange kMeaningChanges[] = {
    {"Softmax", 13}, {"LogSoftmax", 13}, {"Hardmax", 13},       {"Loop", 9},
    {"Scan", 9},     {"Resize", 11},     {"Resize", 13},        {"Resize", 18},
    {"Resize", 19},  {"GridSample", 20}, {"RoiAlign", 16},      {"GroupNormalization", 21},
    {"DFT", 20},     {"Upsample", 10},   {"BatchNormalization", 14}, {"Dropout", 12},
};

constexpr int kDefaultTarget = 21;

// Whether n computes the same on both sides of its op's change at `version` all the same. Softmax,
// LogSoftmax and Hardmax before 13 flatten the input to 2-D at `axis` (default 1) and normalize
// the rows; from 13 they normalize along `axis` (default -1): the same when axis is the last dim.
bool same_meaning_across(const Node& n, int version) {
  const bool softmax_family = n.op_type == "Softmax" || n.op_type == "LogSoftmax" || n.op_type == "Hardmax";
  if (!softmax_family || version != 13 || !n.has_input(0)) return false;
  const auto& shape = n.inputs[0]->type.shape;
  if (!n.inputs[0]->type.is_tensor() || !shape) return false;
  const int64_t rank = static_cast<int64_t>(shape->size());
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < 0) axis += rank;
  // the new form gets the explicit axis: the same number means the last dim on both sides
  return rank > 0 && axis == rank - 1;
}

class RaiseOpset final : public Pass {
 public:
  std::string_view name() const override { return "raise-opset"; }
  std::string_view summary() const override {
    return "raises the ai.onnx opset (--opset N; -O3: 21) when no op changes meaning";
  }

  void run(Model& m, PassContext& ctx) const override {
    const int target = ctx.options().target_opset > 0 ? ctx.options().target_opset : kDefaultTarget;
    const int have = model_opset(m);
    if (have == 0 || have >= target) return;
    std::vector<Node*> nodes;
    collect(*m.graph, nodes);  // local functions keep their own opset imports
    for (const Node* n : nodes) {
      if (!n->domain.empty()) continue;
      const OpSchema* s = OpRegistry::global().find("", n->op_type);
      if (s && s->removed != 0 && s->removed <= target) {
        ctx.near_miss(*n, fmt::format("opset stays {}: {} is gone by opset {}", have, n->op_type, target));
        return;
      }
      for (const auto& c : kMeaningChanges) {
        if (c.op == n->op_type && n->opset < c.version && c.version <= target &&
            !same_meaning_across(*n, c.version)) {
          ctx.near_miss(*n, fmt::format("opset stays {}: {} changes meaning at opset {}", have,
                                        n->op_type, c.version));
          return;
        }
      }
    }
    if (!ctx.allow()) return;
    m.opsets[""] = target;
    for (Node* n : nodes)
      if (n->domain.empty()) n->opset = target;
    ctx.applied(fmt::format("ai.onnx opset {} -> {}", have, target), {}, {});
  }

 private:
  static void collect(Graph& g, std::vector<Node*>& out) {
    for (const auto& n : g.nodes()) out.push_back(n.get());
    for (Graph* sg : g.subgraphs()) collect(*sg, out);
  }
};

}  // namespace

std::unique_ptr<Pass> make_raise_opset() { return std::make_unique<RaiseOpset>(); }

}  // namespace kiln::opt
