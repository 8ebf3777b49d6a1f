#include "engine/activation.h"

#include <limits>
#include <string_view>

#include "engine/graph_facts.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

// One row per ONNX op: its kind and the attributes alpha and beta are read from, with the
// defaults the op's schema declares (none: 0).
struct ActivationOp {
  std::string_view op;
  ActKind kind;
  std::string_view alpha = {};
  std::string_view beta = {};
};

constexpr ActivationOp kActivationOps[] = {
    {"Relu", ActKind::kRelu},
    {"LeakyRelu", ActKind::kLeakyRelu, "alpha"},
    {"Elu", ActKind::kElu, "alpha"},
    {"Sigmoid", ActKind::kSigmoid},
    {"Tanh", ActKind::kTanh},
    {"HardSwish", ActKind::kHardSwish},
    {"HardSigmoid", ActKind::kHardSigmoid, "alpha", "beta"},
    {"Abs", ActKind::kAbs},
    {"Sqrt", ActKind::kSqrt},
    {"Exp", ActKind::kExp},
    {"Log", ActKind::kLog},
    {"Neg", ActKind::kNeg},
    {"Erf", ActKind::kErf},
    {"Reciprocal", ActKind::kReciprocal},
    {"Gelu", ActKind::kGeluErf},  // approximate = "tanh": kGeluTanh
    {"Clip", ActKind::kClip},     // bounds: inputs 1 and 2, when given
};

}  // namespace

std::optional<Activation> decode_activation(const Node& n, const GraphFacts& f) {
  if (!n.domain.empty() || n.num_outputs() != 1) return std::nullopt;
  const ActivationOp* row = nullptr;
  for (const ActivationOp& r : kActivationOps)
    if (n.op_type == r.op) row = &r;
  if (!row) return std::nullopt;
  Activation a{.kind = row->kind,
               .alpha = row->alpha.empty() ? 0.f : attr_float(n, row->alpha),
               .beta = row->beta.empty() ? 0.f : attr_float(n, row->beta)};
  if (a.kind == ActKind::kGeluErf) {
    const std::string approx = attr_string(n, "approximate");
    if (approx == "tanh") a.kind = ActKind::kGeluTanh;
    else if (approx != "none") return std::nullopt;
  }
  if (a.kind == ActKind::kClip) {
    // ONNX: a missing bound is the type's lowest or max (so infinities are clipped)
    a.alpha = std::numeric_limits<float>::lowest();
    a.beta = std::numeric_limits<float>::max();
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
