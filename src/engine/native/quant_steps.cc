// The boundaries of quantized execution on kiln's kernels (cpu/quantize.h): QuantizeLinear and
// DequantizeLinear per tensor ("cpu.quantize", "cpu.dequantize"), and the residual Add between
// quantized convs of the QDQ form, DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] ->
// QuantizeLinear ("cpu.quantized_add"), which reads and writes int8 so the activations stay
// quantized; DynamicQuantizeLinear ("cpu.dynamic_quantize": the range, then the quantization, at
// kernel speed), whose results the int8 matmuls read. Each works on a dense tensor in its physical order (the channels-last result of an
// int8 conv included) and keeps that layout; its results equal the reference kernels'. Per-axis
// and blocked quantization and other types go to the reference kernel; a DequantizeLinear's
// per-tensor parameters may be values of the run (DynamicQuantizeLinear's).
#include "engine/cpu/quantize.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/qdq_pattern.h"
#include "engine/runtime_quant_params.h"
#include "ops/attrs.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

cpu::QuantScale scale_of(const QuantParams& p) {
  return {.scale = p.scale[0], .zero_point = p.zero_point[0], .type = p.type};
}

// The layout a result of element type t takes after an operand made in `made` (dense, not
// row-major), or nullopt for row-major.
std::optional<dnnl::memory::desc> kept_layout(const std::optional<dnnl::memory::desc>& made,
                                              DataType t) {
  if (!made || !is_dense(*made) || is_plain(*made)) return std::nullopt;
  dnnl::memory::desc md = *made;
  md.data.data_type = static_cast<dnnl_data_type_t>(*dnnl_dtype(t));
  return md;
}

class QuantStep : public NativeStep {
 public:
  enum class Kind { kQuantize, kDequantize, kAdd, kDynamic };
  QuantStep(const Node& n, std::string_view name, Kind k) : NativeStep(n, name), kind_(k) {}
  cpu::QuantScale a, b, y;
  bool relu = false;
  using NativeStep::read;
  using NativeStep::write;

  // DequantizeLinear of parameters computed at run time (DynamicQuantizeLinear's).
  RuntimeQuantParams params;

  void run(RunState& st) override {
    if (params.present()) {
      a.scale = params.scale(st, 1, kernel).data<float>()[0];
      a.zero_point = params.zero_point(st, kernel);
    }
    const Tensor& x = in(st, 0);
    Tensor& r = out(st, 0);
    const int64_t n = x.numel();
    switch (kind_) {
      case Kind::kQuantize: return cpu::quantize(x.data<float>(), n, y, r.raw());
      case Kind::kDequantize: return cpu::dequantize(x.raw(), n, a, r.data<float>());
      case Kind::kAdd: return cpu::quantized_add(x.raw(), a, in(st, 1).raw(), b, relu, n, y, r.raw());
      case Kind::kDynamic:
        return cpu::dynamic_quantize(x.data<float>(), n, r.data<uint8_t>(), out(st, 1).data<float>(),
                                     out(st, 2).data<uint8_t>());
    }
  }

 private:
  Kind kind_;
};

// A DequantizeLinear per tensor whose scale (float) and zero point (x's type) are values of the
// run (DynamicQuantizeLinear's outputs, on CPUs where the int8 matmul does not take them).
bool runtime_dequantize(const Node& n, const GraphFacts& f) {
  if (!is_op(&n, "DequantizeLinear") || !n.has_input(0) || !n.has_input(1) || f.constant(n.inputs[1]))
    return false;
  const DataType t = f.dtype(n.inputs[0]);
  if ((t != DataType::kUInt8 && t != DataType::kInt8) || f.dtype(n.inputs[1]) != DataType::kFloat ||
      f.dtype(n.outputs[0]) != DataType::kFloat || !f.dims(n.inputs[0]) || attr_int(n, "block_size", 0) != 0)
    return false;
  auto scalar = [&](const Value* v) {
    const auto* d = f.dims(v);
    return d && (d->empty() || (d->size() == 1 && (*d)[0] == 1));
  };
  return scalar(n.inputs[1]) && (!n.has_input(2) || (f.dtype(n.inputs[2]) == t && scalar(n.inputs[2])));
}

bool match_quantize_linear(const Node& n, const MatchContext& ctx, Group& g) {
  if (runtime_dequantize(n, ctx.facts)) return true;
  const auto p = quant_params(n, ctx.facts);
  return p && p->per_tensor() && ctx.facts.dims(n.inputs[0]) && !ctx.facts.constant(n.inputs[0]);
}

bool build_quantize_linear(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const bool dq = is_op(&n, "DequantizeLinear");
  const bool runtime = runtime_dequantize(n, f);
  const auto p = runtime ? std::nullopt : quant_params(n, f);
  if (!p && !runtime) return false;
  auto step = std::make_unique<QuantStep>(n, dq ? "cpu.dequantize" : "cpu.quantize",
                                          dq ? QuantStep::Kind::kDequantize : QuantStep::Kind::kQuantize);
  if (runtime) {
    step->a.type = f.dtype(n.inputs[0]);
    step->params.read_by(*step, lw.plain(n.inputs[1]), n.has_input(2) ? lw.plain(n.inputs[2]) : -1);
  } else {
    (dq ? step->a : step->y) = scale_of(*p);
  }
  const Value* x = n.inputs[0];
  const auto layout = kept_layout(lw.layout(x), f.dtype(n.outputs[0]));
  const int out = lw.define(n.outputs[0], layout);
  step->read(layout ? lw.in_layout(x, *lw.layout(x)) : lw.plain(x), *f.dims(x));
  step->write(out);
  lw.add(std::move(step));
  return true;
}

// DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] -> QuantizeLinear, a and b of one shape.
struct QuantAddForm {
  DequantizedInput a, b;
  const Node* relu = nullptr;
  Requantize y;
};

std::optional<QuantAddForm> quant_add_form(const Node& n, const MatchContext& ctx) {
  const GraphFacts& f = ctx.facts;
  if (n.num_inputs() != 2 || !n.has_input(0) || !n.has_input(1) || n.inputs[0] == n.inputs[1])
    return std::nullopt;
  auto a = dequantized_input(n.inputs[0], f), b = dequantized_input(n.inputs[1], f);
  if (!a || !b || *f.dims(a->q) != *f.dims(b->q) || !f.dims(n.outputs[0]) ||
      *f.dims(n.outputs[0]) != *f.dims(a->q))
    return std::nullopt;
  for (const DequantizedInput* d : {&*a, &*b})
    if (sole_consumer(d->dq->outputs[0], ctx) != &n || !ctx.is_free(d->dq)) return std::nullopt;
  const Value* sum = n.outputs[0];
  const Node* relu = sole_consumer(sum, ctx);
  if (!is_op(relu, "Relu")) relu = nullptr;
  auto y = quantize_of(relu ? relu->outputs[0] : sum, ctx);
  if (!y) return std::nullopt;
  return QuantAddForm{std::move(*a), std::move(*b), relu, std::move(*y)};
}

bool match_quantized_add(const Node& n, const MatchContext& ctx, Group& g) {
  if (ctx.standalone) return false;
  const auto form = quant_add_form(n, ctx);
  if (!form) return false;
  g.prologue = {form->a.dq, form->b.dq};
  if (form->relu) g.epilogue.push_back(EpilogueUnit{.nodes = {form->relu}, .out = form->relu->outputs[0]});
  g.epilogue.push_back(EpilogueUnit{.nodes = {form->y.q}, .out = form->y.q->outputs[0]});
  return true;
}

bool build_quantized_add(Group& g, Lowering& lw) {
  const GraphFacts& f = lw.facts();
  std::unordered_set<const Node*> none;
  const auto form = quant_add_form(*g.anchor, MatchContext{f, none, false});
  if (!form) return false;
  auto step = std::make_unique<QuantStep>(*g.anchor, "cpu.quantized_add", QuantStep::Kind::kAdd);
  step->a = scale_of(form->a.params);
  step->b = scale_of(form->b.params);
  step->y = scale_of(form->y.params);
  step->relu = form->relu != nullptr;
  // the layout of whichever operand was made in a dense one
  std::optional<dnnl::memory::desc> made;
  for (const Value* v : {form->a.q, form->b.q})
    if (!made && kept_layout(lw.layout(v), f.dtype(v))) made = lw.layout(v);
  const int out = lw.define(g.output(), kept_layout(made, form->y.params.type));
  for (const Value* v : {form->a.q, form->b.q}) {
    const auto l = kept_layout(made, f.dtype(v));
    step->read(l ? lw.in_layout(v, *l) : lw.plain(v), *f.dims(v));
  }
  step->write(out);
  lw.add(std::move(step));
  return true;
}

bool match_dynamic_quantize(const Node& n, const MatchContext& ctx, Group& g) {
  const GraphFacts& f = ctx.facts;
  if (!n.has_input(0) || f.dtype(n.inputs[0]) != DataType::kFloat || !f.dims(n.inputs[0]) ||
      f.constant(n.inputs[0]) || n.num_outputs() != 3)
    return false;
  for (const Value* v : n.outputs)
    if (!v) return false;
  return true;
}

bool build_dynamic_quantize(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  auto step = std::make_unique<QuantStep>(n, "cpu.dynamic_quantize", QuantStep::Kind::kDynamic);
  step->read(lw.plain(n.inputs[0]), *lw.facts().dims(n.inputs[0]));
  for (const Value* v : n.outputs) step->write(lw.define(v));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuDynamicQuantize{.name = "cpu.dynamic_quantize",
                                               .match = match_dynamic_quantize,
                                               .build = build_dynamic_quantize};
constinit const KernelImpl kCpuQuantizeLinear{.name = "cpu.quantize_linear",
                                              .match = match_quantize_linear,
                                              .build = build_quantize_linear};
constinit const KernelImpl kCpuQuantizedAdd{.name = "cpu.quantized_add", .match = match_quantized_add,
                                            .build = build_quantized_add};

}  // namespace kiln::engine
