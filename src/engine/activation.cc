#include "engine/activation.h"

#include <limits>
#include <string_view>

#include "engine/graph_facts.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

// One row per ONNX op: its kind and where alpha and beta come from (an attribute, with ONNX's
// default; no attribute: the default is the value).
struct ActivationOp {
  std::string_view op;
  ActKind kind;
  std::string_view alpha_attr = {};
  float alpha = 0;
  std::string_view beta_attr = {};
  float beta = 0;
};

constexpr float kLowest = std::numeric_limits<float>::lowest();
constexpr float kMax = std::numeric_limits<float>::max();

constexpr ActivationOp kActivationOps[] = {
    {"Relu", ActKind::kRelu},
    {"LeakyRelu", ActKind::kLeakyRelu, "alpha", 0.01f},
    {"Elu", ActKind::kElu, "alpha", 1.0f},
    {"Sigmoid", ActKind::kSigmoid},
    {"Tanh", ActKind::kTanh},
    {"HardSwish", ActKind::kHardSwish},
    {"HardSigmoid", ActKind::kHardSigmoid, "alpha", 0.2f, "beta", 0.5f},
    {"Abs", ActKind::kAbs},
    {"Sqrt", ActKind::kSqrt},
    {"Exp", ActKind::kExp},
    {"Log", ActKind::kLog},
    {"Neg", ActKind::kNeg},
    {"Erf", ActKind::kErf},
    {"Reciprocal", ActKind::kReciprocal},
    {"Gelu", ActKind::kGeluErf},                   // approximate = "tanh": kGeluTanh
    {"Clip", ActKind::kClip, {}, kLowest, {}, kMax},  // bounds: inputs 1 and 2, when given
};

}  // namespace

std::optional<Activation> decode_activation(const Node& n, const GraphFacts& f) {
  if (!n.domain.empty() || n.num_outputs() != 1) return std::nullopt;
  const ActivationOp* row = nullptr;
  for (const ActivationOp& r : kActivationOps)
    if (n.op_type == r.op) row = &r;
  if (!row) return std::nullopt;
  Activation a{.kind = row->kind,
               .alpha = row->alpha_attr.empty() ? row->alpha : attr_float(n, row->alpha_attr, row->alpha),
               .beta = row->beta_attr.empty() ? row->beta : attr_float(n, row->beta_attr, row->beta)};
  if (a.kind == ActKind::kGeluErf) {
    const std::string approx = attr_string(n, "approximate", "none");
    if (approx == "tanh") a.kind = ActKind::kGeluTanh;
    else if (approx != "none") return std::nullopt;
  }
  if (a.kind == ActKind::kClip) {
    for (int i : {1, 2}) {
      if (!n.has_input(i)) continue;
      auto c = f.scalar(n.inputs[i]);
      if (!c) return std::nullopt;
      (i == 1 ? a.alpha : a.beta) = *c;
    }
  } else if (n.num_inputs() != 1) {
    return std::nullopt;
  }
  return a;
}

}  // namespace kiln::engine
