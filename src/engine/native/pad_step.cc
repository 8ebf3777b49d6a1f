// Pad on kiln's CPU kernel (cpu/pad.h): any fixed-size element type, every mode, with constant
// pads, axes and constant value; row-major in and out. (A Pad before a Conv or a pool is folded
// into its window by the optimizer's fuse-pad at -O1 and up; this runs the rest.)
#include "engine/cpu/pad.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "ops/attrs.h"
#include "ops/pad_geometry.h"

namespace kiln::engine {

namespace {

struct PadPlan {
  cpu::PadTables tables;
  size_t elem = 0;
  std::optional<Tensor> value;  // the constant value, when given
};

std::optional<std::vector<int64_t>> constant_ints(const Node& n, int i, const GraphFacts& f) {
  const Tensor* t = f.constant(n.inputs[i]);
  if (!t || (t->dtype() != DataType::kInt64 && t->dtype() != DataType::kInt32) || t->rank() > 1)
    return std::nullopt;
  std::vector<int64_t> v(t->numel());
  for (int64_t k = 0; k < t->numel(); ++k) v[k] = t->get_i64(k);
  return v;
}

std::optional<PadPlan> pad_plan(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.has_input(1) || !n.outputs[0]) return std::nullopt;
  const Value* x = n.inputs[0];
  const DataType dt = f.dtype(x);
  const auto* dims = f.dims(x);
  const auto* out = f.dims(n.outputs[0]);
  if (!dims || !out || !x->type.is_tensor() || dt == DataType::kString || dtype_size(dt) == 0)
    return std::nullopt;
  const auto mode = parse_pad_mode(attr_string(n, "mode", "constant"));
  const auto pads = constant_ints(n, 1, f);
  std::optional<std::vector<int64_t>> axes;
  if (n.has_input(3) && !(axes = constant_ints(n, 3, f))) return std::nullopt;
  if (!mode || !pads) return std::nullopt;
  std::string error;
  auto geometry = pad_geometry(*mode, *dims, *pads, axes, &error);
  if (!geometry || geometry->out_dims != *out) return std::nullopt;  // the reference reports it
  PadPlan p{.tables = {.x_dims = *dims, .y_dims = geometry->out_dims, .src = std::move(geometry->src)},
            .elem = dtype_size(dt),
            .value = std::nullopt};
  if (*mode == PadMode::kConstant && n.has_input(2)) {
    const Tensor* v = f.constant(n.inputs[2]);
    if (!v || v->dtype() != dt || v->numel() > 1) return std::nullopt;
    if (v->numel() == 1) p.value = *v;
  }
  return p;
}

class PadStep : public NativeStep {
 public:
  PadStep(const Node& n, PadPlan p) : NativeStep(n, "cpu.pad"), p_(std::move(p)) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    cpu::pad(in(st, 0).raw(), out(st, 0).raw(), p_.tables, p_.value ? p_.value->raw() : nullptr,
             p_.elem);
  }

 private:
  PadPlan p_;
};

bool match_pad(const Node& n, const MatchContext& ctx, Group& g) {
  return pad_plan(n, ctx.facts).has_value();
}

bool build_pad(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  auto plan = pad_plan(n, lw.facts());
  if (!plan) return false;
  std::vector<int64_t> dims = plan->tables.x_dims;
  auto step = std::make_unique<PadStep>(n, std::move(*plan));
  step->read(lw.plain(n.inputs[0]), std::move(dims));
  step->write(lw.define(n.outputs[0]));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuPad{.name = "cpu.pad", .match = match_pad, .build = build_pad};

}  // namespace kiln::engine
