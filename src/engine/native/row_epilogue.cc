#include "engine/native/row_epilogue.h"

#include "engine/epilogue.h"
#include "engine/native/cpu_activation.h"

namespace kiln::engine {

namespace {

// A post-op as a row operation; nullopt for those the rows do not apply.
std::optional<cpu::RowOp> row_op(const PostOp& p) {
  if (p.kind != PostOp::Kind::kEltwise) return std::nullopt;
  // Relu reaches the chain as LeakyRelu of slope 0 (epilogue_form).
  if (p.act.kind == ActKind::kLeakyRelu && p.act.alpha == 0) return cpu::RowOp{.op = cpu::UnaryOp::kRelu};
  return cpu_row_op(p.act);
}

}  // namespace

std::optional<std::vector<cpu::RowOp>> row_ops_of(const std::vector<EpilogueUnit>& units) {
  std::vector<cpu::RowOp> ops;
  for (const EpilogueUnit& u : units) {
    if (u.is_bias || !u.perm.empty()) return std::nullopt;
    for (const PostOp& p : u.ops) {
      auto op = row_op(p);
      if (!op) return std::nullopt;
      ops.push_back(*op);
    }
  }
  return ops;
}

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
