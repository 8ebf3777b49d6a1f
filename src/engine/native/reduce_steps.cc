// ReduceSum, ReduceMean and ReduceMax of float32 over one contiguous run of axes, on kiln's CPU
// kernels.
#include "engine/cpu/reduce.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

std::optional<cpu::ReduceShape> reduce_geometry(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.outputs[0] || f.dtype(n.inputs[0]) != DataType::kFloat) return std::nullopt;
  const auto* d = f.dims(n.inputs[0]);
  if (!d || !f.dims(n.outputs[0])) return std::nullopt;
  std::vector<int64_t> axes;
  if (n.has_input(1)) {
    const Tensor* a = f.constant(n.inputs[1]);
    if (!a || !is_integer(a->dtype())) return std::nullopt;
    axes = a->to_int64s();
  }
  const int rank = static_cast<int>(d->size());
  if (axes.empty()) {
    if (attr_int(n, "noop_with_empty_axes", 0) != 0) return std::nullopt;  // Identity: rare
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  auto s = cpu::reduce_shape(*d, axes);
  if (!s || s->len == 0) return std::nullopt;  // an empty reduction: the reference's values
  return s;
}

class ReduceStep : public NativeStep {
 public:
  ReduceStep(const Node& n, cpu::ReduceOp op, cpu::ReduceShape s)
      : NativeStep(n, "cpu.reduce"), op_(op), s_(s) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    cpu::reduce(op_, in(st, 0).data<float>(), out(st, 0).data<float>(), s_.outer, s_.len, s_.inner);
  }

 private:
  cpu::ReduceOp op_;
  cpu::ReduceShape s_;
};

cpu::ReduceOp reduce_op(const Node& n) {
  return n.op_type == "ReduceSum" ? cpu::ReduceOp::kSum
         : n.op_type == "ReduceMax" ? cpu::ReduceOp::kMax : cpu::ReduceOp::kMean;
}

bool match_reduce(const Node& n, const MatchContext& ctx, Group& g) {
  return reduce_geometry(n, ctx.facts).has_value();
}

bool build_reduce(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  auto step = std::make_unique<ReduceStep>(n, reduce_op(n), *reduce_geometry(n, lw.facts()));
  step->read(lw.plain(n.inputs[0]), *lw.facts().dims(n.inputs[0]));
  step->write(lw.define(n.outputs[0]));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuReduce{.name = "cpu.reduce", .match = match_reduce,
                                      .build = build_reduce};

}  // namespace kiln::engine
