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
#include <numeric>

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

// The order a chain works in on a result of dims `out_dims`: a dense permutation of the axes
// (row-major, channels-last), or channel blocks ([N, C / b, H, W, b]). `out` is the result's dims
// in memory order; operand() the dims in that order of an operand whose row-major bytes (or, at
// full size, whose own layout) lie so, nullopt for one that does not.
struct PhysicalLayout {
  std::vector<int> order;  // a permutation; empty when blocked
  int64_t block = 0;
  std::vector<int64_t> out;

  // nullopt order: not a dense permutation; an empty one: row-major.
  static std::optional<PhysicalLayout> permuted(const std::vector<int64_t>& out_dims,
                                                std::optional<std::vector<int>> order) {
    if (!order) return std::nullopt;
    PhysicalLayout p;
    p.order = std::move(*order);
    if (p.order.empty()) {
      p.order.resize(out_dims.size());
      std::iota(p.order.begin(), p.order.end(), 0);
    }
    for (int a : p.order) p.out.push_back(out_dims[a]);
    return p;
  }
  static std::optional<PhysicalLayout> channel_blocked(const dnnl::memory::desc& md,
                                                       const std::vector<int64_t>& out_dims) {
    const int64_t block = channel_block(md, out_dims);
    if (block <= 0) return std::nullopt;
    return PhysicalLayout{.block = block,
                          .out = {out_dims[0], out_dims[1] / block, out_dims[2], out_dims[3], block}};
  }
  std::optional<std::vector<int64_t>> operand(const std::vector<int64_t>& dims,
                                              const std::vector<int64_t>& out_dims) const {
    if (dims == out_dims) return out;  // read in the chosen layout itself
    return block ? in_channel_blocks(dims, out_dims[1], block) : in_physical_order(dims, order);
  }
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
  // The layout: that of a full-size operand made in a dense non-row-major one (channels-last),
  // else in channel blocks (AVX2's convs write nChw8c), when every operand reads right in its
  // physical order; else row-major.
  const auto dims_in = [&](const PhysicalLayout& p) -> std::optional<std::vector<std::vector<int64_t>>> {
    std::vector<std::vector<int64_t>> dims;
    for (const Value* v : operands) {
      auto d = p.operand(*f.dims(v), out_dims);
      if (!d) return std::nullopt;
      dims.push_back(std::move(*d));
    }
    return dims;
  };
  std::optional<dnnl::memory::desc> layout;
  PhysicalLayout physical = *PhysicalLayout::permuted(out_dims, std::vector<int>{});  // row-major
  auto dims = dims_in(physical);
  for (const bool blocked : {false, true})
    for (const Value* v : operands) {
      const auto l = lw.layout(v);
      if (layout || !l || *f.dims(v) != out_dims) continue;
      auto p = blocked ? PhysicalLayout::channel_blocked(*l, out_dims)
                       : PhysicalLayout::permuted(out_dims, physical_order(*l));
      if (auto d = p ? dims_in(*p) : std::nullopt) {
        layout = l;
        physical = std::move(*p);
        dims = std::move(d);
      }
    }
  auto step = std::make_unique<ChainStep>(*g.anchor, std::move(program), std::move(*dims),
                                           physical.out);
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
