// Raising the model's ai.onnx opset, so fusions into newer ops (Gelu 20, RMSNormalization 23)
// can apply. kiln's IR holds each op in its newest form (src/onnx/normalize.cc) and export writes
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
        if (c.op == n->op_type && n->opset < c.version && c.version <= target) {
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
