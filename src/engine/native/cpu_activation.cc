#include "engine/native/cpu_activation.h"

namespace kiln::engine {

std::optional<cpu::RowOp> cpu_row_op(const Activation& a) {
  using cpu::UnaryOp;
  auto unary = [&](UnaryOp op) { return cpu::RowOp{.op = op, .p = {.alpha = a.alpha, .beta = a.beta}}; };
  switch (a.kind) {
    case ActKind::kRelu: return unary(UnaryOp::kRelu);
    case ActKind::kLeakyRelu: return unary(UnaryOp::kLeakyRelu);
    case ActKind::kSigmoid: return unary(UnaryOp::kSigmoid);
    case ActKind::kTanh: return unary(UnaryOp::kTanh);
    case ActKind::kHardSwish: return unary(UnaryOp::kHardSwish);
    case ActKind::kHardSigmoid: return unary(UnaryOp::kHardSigmoid);
    case ActKind::kAbs: return unary(UnaryOp::kAbs);
    case ActKind::kSqrt: return unary(UnaryOp::kSqrt);
    case ActKind::kExp: return unary(UnaryOp::kExp);
    case ActKind::kNeg: return unary(UnaryOp::kNeg);
    case ActKind::kErf: return unary(UnaryOp::kErf);
    case ActKind::kReciprocal: return unary(UnaryOp::kReciprocal);
    case ActKind::kGeluErf: return unary(UnaryOp::kGeluErf);
    case ActKind::kGeluTanh: return unary(UnaryOp::kGeluTanh);
    case ActKind::kClip: return unary(UnaryOp::kClip);
    case ActKind::kSwish: return unary(UnaryOp::kSwish);
    case ActKind::kLinear: return cpu::RowOp{.affine = true, .p = {.alpha = a.alpha, .beta = a.beta}};
    case ActKind::kElu:
    case ActKind::kLog: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace kiln::engine
