// Elementwise ops on float32, a chain of them fused into one pass (cpu::run_fused): a node, then
// each next node that alone reads the running result (Add -> Relu, the ops of an erf Gelu, x *
// sigmoid(x) ...). Scalar constants become immediates; other operands broadcast. A tensor in a
// dense non-row-major layout (channels-last after a conv) is worked on in its physical order, one
// in channel blocks as [N, C / b, H, W, b] (operands broadcast along the channels, or per-channel,
// read right in it), so no reorder is needed, and the result keeps that layout.
#include "engine/activation.h"
#include "engine/cpu/fused_elementwise.h"
#include "engine/lowering.h"
#include "engine/native/cpu_activation.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"

#include <map>

namespace kiln::engine {

namespace {

using cpu::BinaryOp;
using cpu::UnaryOp;
constexpr size_t kMaxChain = 16;

struct EwOp {
  bool unary = true;
  UnaryOp u = UnaryOp::kIdentity;
  BinaryOp b = BinaryOp::kAdd;
  cpu::UnaryParams p;
};

std::optional<EwOp> unary_op(const Node& n, const GraphFacts& f) {
  const auto a = decode_activation(n, f);
  const auto op = a ? cpu_row_op(*a) : std::nullopt;
  if (!op || op->affine) return std::nullopt;
  return EwOp{.u = op->op, .p = op->p};
}

std::optional<EwOp> ew_op(const Node& n, const GraphFacts& f) {
  if (!n.domain.empty() || n.num_outputs() != 1 || !n.outputs[0] || !n.has_input(0)) return std::nullopt;
  for (const Value* v : n.inputs)
    if (v && (f.dtype(v) != DataType::kFloat || !f.dims(v))) return std::nullopt;
  if (f.dtype(n.outputs[0]) != DataType::kFloat || !f.dims(n.outputs[0])) return std::nullopt;
  static const std::map<std::string, BinaryOp> binary = {
      {"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul},
      {"Div", BinaryOp::kDiv}, {"Max", BinaryOp::kMax}, {"Min", BinaryOp::kMin},
      {"Pow", BinaryOp::kPow}};
  auto it = binary.find(n.op_type);
  if (it == binary.end()) return unary_op(n, f);
  if (n.num_inputs() != 2 || !n.has_input(1)) return std::nullopt;
  return EwOp{.unary = false, .b = it->second};
}

bool match_chain(const Node& n, const MatchContext& ctx, Group& g) {
  const GraphFacts& f = ctx.facts;
  if (!ew_op(n, f)) return false;
  const Value* cur = n.outputs[0];
  const auto& out_dims = *f.dims(cur);
  while (!ctx.standalone && g.epilogue.size() + 1 < kMaxChain) {
    const auto& c = f.consumers(cur);
    if (f.is_graph_output(cur) || c.size() != 1 || !ctx.is_free(c[0]) || !ew_op(*c[0], f) ||
        *f.dims(c[0]->outputs[0]) != out_dims)
      break;
    g.epilogue.push_back(EpilogueUnit{.nodes = {c[0]}, .out = c[0]->outputs[0]});
    cur = c[0]->outputs[0];
  }
  return true;
}

class ChainStep : public NativeStep {
 public:
  ChainStep(const Node& n, cpu::EwProgram program, std::vector<std::vector<int64_t>> dims,
            std::vector<int64_t> out_dims)
      : NativeStep(n, "cpu.elementwise"), program_(std::move(program)),
        dims_(std::move(dims)), out_dims_(std::move(out_dims)) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    args_.resize(dims_.size());
    for (size_t k = 0; k < dims_.size(); ++k) args_[k] = {in(st, k).data<float>(), dims_[k]};
    cpu::run_fused(program_, args_, out(st, 0).data<float>(), out_dims_);
  }

 private:
  cpu::EwProgram program_;
  std::vector<std::vector<int64_t>> dims_;  // of the program's inputs, in physical order
  std::vector<int64_t> out_dims_;
  std::vector<cpu::EwInput> args_;
};

bool build_chain(Group& g, Lowering& lw) {
  const GraphFacts& f = lw.facts();
  const auto members = g.members();
  const Value* result = g.output();
  const auto& out_dims = *f.dims(result);
  // The program, with the chain's outside operands as inputs.
  cpu::EwProgram program;
  std::map<const Value*, cpu::EwValue> values;
  std::vector<const Value*> operands;
  auto value_of = [&](const Value* v) {
    if (auto it = values.find(v); it != values.end()) return it->second;
    if (auto s = f.scalar(v)) return values[v] = cpu::EwProgram::constant(*s);
    operands.push_back(v);
    return values[v] = program.input(static_cast<int>(operands.size()) - 1);
  };
  for (const Node* m : members) {
    const EwOp op = *ew_op(*m, f);
    values[m->outputs[0]] = op.unary ? program.unary(op.u, value_of(m->inputs[0]), op.p)
                                     : program.binary(op.b, value_of(m->inputs[0]), value_of(m->inputs[1]));
  }
  program.set_result(values.at(result));
  // The layout: that of a full-size operand made in a dense non-row-major one, when every
  // operand reads right in its physical order; else row-major.
  auto dims_in = [&](const std::vector<int>& order) -> std::optional<std::vector<std::vector<int64_t>>> {
    std::vector<std::vector<int64_t>> dims;
    for (const Value* v : operands) {
      const auto& vd = *f.dims(v);
      if (vd == out_dims) {  // read in the chosen layout itself
        dims.emplace_back();
        for (int a : order) dims.back().push_back(vd[a]);
        continue;
      }
      auto d = in_physical_order(vd, order);  // row-major, broadcast
      if (!d) return std::nullopt;
      dims.push_back(std::move(*d));
    }
    return dims;
  };
  std::optional<dnnl::memory::desc> layout;
  std::vector<int> order(out_dims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  for (const Value* v : operands) {
    const auto l = lw.layout(v);
    if (!l || *f.dims(v) != out_dims) continue;
    if (auto o = physical_order(*l); o && dims_in(*o)) {
      layout = l;
      order = *o;
      break;
    }
  }
  // Else a full-size operand in channel blocks (AVX2's convs write nChw8c): the chain runs on
  // [N, C / b, H, W, b], the other operands read row-major where their bytes lie in that order
  // (broadcast along the channels, or a per-channel scale: squeeze-and-excitation), so neither
  // a hard-swish between two convs nor an SE block's Mul is two reorders.
  std::vector<int64_t> physical_out;
  std::optional<std::vector<std::vector<int64_t>>> dims;
  for (const Value* v : operands) {
    const auto l = lw.layout(v);
    if (layout || !l || *f.dims(v) != out_dims) continue;
    const int64_t block = channel_block(*l, out_dims);
    if (block <= 0) continue;
    std::vector<std::vector<int64_t>> blocked;
    for (const Value* u : operands) {
      auto d = *f.dims(u) == out_dims ? std::optional(std::vector<int64_t>{})
                                      : in_channel_blocks(*f.dims(u), out_dims[1], block);
      if (!d) break;
      blocked.push_back(std::move(*d));
    }
    if (blocked.size() != operands.size()) continue;
    layout = l;
    physical_out = {out_dims[0], out_dims[1] / block, out_dims[2], out_dims[3], block};
    for (auto& d : blocked)
      if (d.empty()) d = physical_out;
    dims = std::move(blocked);
  }
  if (!dims) {
    dims = *dims_in(order);
    for (int a : order) physical_out.push_back(out_dims[a]);
  }
  auto step = std::make_unique<ChainStep>(*g.anchor, std::move(program), std::move(*dims),
                                           physical_out);
  int share = -1;
  const int out = lw.define(result, layout);
  for (const Value* v : operands) {
    const bool full = *f.dims(v) == out_dims;
    const int s = full && layout ? lw.in_layout(v, *layout) : lw.plain(v);
    step->read(s, *f.dims(v));
    if (full && share < 0) share = in_place_share(lw, s, lw.slot(out).bytes());
  }
  step->write(out, share);
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuElementwise{.name = "cpu.elementwise", .match = match_chain,
                                           .build = build_chain};

}  // namespace kiln::engine
