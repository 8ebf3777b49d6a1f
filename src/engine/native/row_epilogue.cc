#include "engine/native/row_epilogue.h"

#include "engine/onednn/post_ops.h"

namespace kiln::engine {

namespace {

using alg = dnnl::algorithm;

// A post-op as a row operation; nullopt for those the rows do not apply.
std::optional<cpu::RowOp> row_op(const PostOp& p) {
  if (p.kind != PostOp::Kind::kEltwise) return std::nullopt;
  auto act = [&](cpu::UnaryOp op, float alpha = 0, float beta = 0) {
    return cpu::RowOp{.op = op, .p = {.alpha = alpha, .beta = beta}};
  };
  switch (p.alg) {
    case alg::eltwise_relu: return p.alpha == 0 ? act(cpu::UnaryOp::kRelu) : act(cpu::UnaryOp::kLeakyRelu, p.alpha);
    case alg::eltwise_logistic: return act(cpu::UnaryOp::kSigmoid);
    case alg::eltwise_tanh: return act(cpu::UnaryOp::kTanh);
    case alg::eltwise_hardswish: return act(cpu::UnaryOp::kHardSwish);
    case alg::eltwise_abs: return act(cpu::UnaryOp::kAbs);
    case alg::eltwise_sqrt: return act(cpu::UnaryOp::kSqrt);
    case alg::eltwise_exp: return act(cpu::UnaryOp::kExp);
    case alg::eltwise_gelu_erf: return act(cpu::UnaryOp::kGeluErf);
    case alg::eltwise_gelu_tanh: return act(cpu::UnaryOp::kGeluTanh);
    case alg::eltwise_clip: return act(cpu::UnaryOp::kClip, p.alpha, p.beta);
    case alg::eltwise_swish: return act(cpu::UnaryOp::kSwish, p.alpha);
    case alg::eltwise_linear: return cpu::RowOp{.affine = true, .p = {.alpha = p.alpha, .beta = p.beta}};
    default: return std::nullopt;
  }
}

}  // namespace

void keep_row_ops(std::vector<EpilogueUnit>& units) {
  size_t keep = 0;
  for (; keep < units.size(); ++keep) {
    const EpilogueUnit& u = units[keep];
    if (u.is_bias && keep == 0) continue;
    if (u.is_bias || !u.perm.empty() || u.ops.empty()) break;
    bool all = true;
    for (const PostOp& p : u.ops) all = all && row_op(p).has_value();
    if (!all) break;
  }
  units.resize(keep);
}

RowEpilogue row_epilogue(const Group& g, const Tensor* own, int64_t channels, const GraphFacts& f) {
  const bool unit_bias = !g.epilogue.empty() && g.epilogue[0].is_bias;
  RowEpilogue e{.bias = combined_bias(own, unit_bias ? bias_constant(g.epilogue[0], f) : nullptr, channels)};
  for (size_t u = unit_bias ? 1 : 0; u < g.epilogue.size(); ++u)
    for (const PostOp& p : g.epilogue[u].ops) e.ops.push_back(*row_op(p));
  return e;
}

}  // namespace kiln::engine
