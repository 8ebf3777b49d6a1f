// Softmax, LogSoftmax and LayerNormalization on kiln's CPU kernels (row-major float32).
#include "engine/cpu/normalization.h"
#include "engine/cpu/softmax.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

// A float32 input with known dims and at least one element.
const std::vector<int64_t>* float_dims(const Value* v, const GraphFacts& f) {
  if (!v || f.dtype(v) != DataType::kFloat) return nullptr;
  const auto* d = f.dims(v);
  if (!d || dims_product(*d, 0, d->size()) == 0) return nullptr;
  return d;
}

// --- Softmax / LogSoftmax: [outer, len, inner] along the middle axis.

struct SoftmaxShape {
  int64_t outer, len, inner;
};

std::optional<SoftmaxShape> softmax_shape(const Node& n, const GraphFacts& f) {
  const auto* d = n.has_input(0) ? float_dims(n.inputs[0], f) : nullptr;
  if (!d || d->empty()) return std::nullopt;
  const int rank = static_cast<int>(d->size());
  const bool flatten = n.opset < 13;  // before 13: the trailing block from axis is one row
  int64_t axis = attr_int(n, "axis", flatten ? 1 : -1);
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  if (flatten) return SoftmaxShape{dims_product(*d, 0, axis), dims_product(*d, axis, rank), 1};
  return SoftmaxShape{dims_product(*d, 0, axis), (*d)[axis], dims_product(*d, axis + 1, rank)};
}

class SoftmaxStep : public NativeStep {
 public:
  SoftmaxStep(const Node& n, SoftmaxShape s, bool log)
      : NativeStep(n, log ? "cpu.log_softmax" : "cpu.softmax"), s_(s), log_(log) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const float* x = in(st, 0).data<float>();
    float* y = out(st, 0).data<float>();
    (log_ ? cpu::log_softmax : cpu::softmax)(x, y, s_.outer, s_.len, s_.inner);
  }

 private:
  SoftmaxShape s_;
  bool log_;
};

bool match_softmax(const Node& n, const MatchContext& ctx, Group& g) {
  return softmax_shape(n, ctx.facts).has_value();
}

bool build_softmax(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  auto step = std::make_unique<SoftmaxStep>(n, *softmax_shape(n, lw.facts()), n.op_type == "LogSoftmax");
  const int x = lw.plain(n.inputs[0]);
  step->read(x, *lw.facts().dims(n.inputs[0]));
  const int y = lw.define(n.outputs[0]);
  step->write(y, in_place_share(lw, x, lw.slot(y).bytes()));
  lw.add(std::move(step));
  return true;
}

// --- LayerNormalization over the trailing axes from `axis`.

struct NormShape {
  int64_t rows, cols;
  float epsilon;
};

// Whether a scale / bias of dims p applies along the normalized block [axis, rank) of x as a
// plain row of cols values.
bool fits_row(const std::vector<int64_t>& p, const std::vector<int64_t>& x, size_t axis, int64_t cols) {
  if (dims_product(p, 0, p.size()) != cols || p.size() > x.size() - axis) return false;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[p.size() - 1 - i] != x[x.size() - 1 - i]) return false;
  return true;
}

std::optional<NormShape> norm_shape(const Node& n, const GraphFacts& f) {
  const auto* d = n.has_input(0) ? float_dims(n.inputs[0], f) : nullptr;
  if (!d || d->empty() || !n.has_input(1)) return std::nullopt;
  const int rank = static_cast<int>(d->size());
  int64_t axis = attr_int(n, "axis", -1);
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  const NormShape s{dims_product(*d, 0, axis), dims_product(*d, axis, rank), attr_float(n, "epsilon")};
  for (int i = 1; i < 3; ++i) {
    if (!n.has_input(i)) continue;
    const auto* p = float_dims(n.inputs[i], f);
    if (!p || !fits_row(*p, *d, axis, s.cols)) return std::nullopt;
  }
  return s;
}

class LayerNormStep : public NativeStep {
 public:
  LayerNormStep(const Node& n, NormShape s, bool bias, bool mean, bool inv_std)
      : NativeStep(n, "cpu.layer_norm"), s_(s), bias_(bias), mean_(mean), inv_std_(inv_std) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    size_t k = 1;
    float* mean = mean_ ? out(st, k++).data<float>() : nullptr;
    float* inv_std = inv_std_ ? out(st, k).data<float>() : nullptr;
    cpu::layer_norm(in(st, 0).data<float>(), in(st, 1).data<float>(),
                    bias_ ? in(st, 2).data<float>() : nullptr, out(st, 0).data<float>(), s_.rows,
                    s_.cols, s_.epsilon, mean, inv_std);
  }

 private:
  NormShape s_;
  bool bias_, mean_, inv_std_;
};

bool match_layer_norm(const Node& n, const MatchContext& ctx, Group& g) {
  if (!norm_shape(n, ctx.facts)) return false;
  for (int i = 1; i < n.num_outputs(); ++i)  // Mean and InvStdDev, when asked for, in float
    if (n.outputs[i] && (ctx.facts.dtype(n.outputs[i]) != DataType::kFloat || !ctx.facts.dims(n.outputs[i])))
      return false;
  return true;
}

bool build_layer_norm(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const bool mean = n.num_outputs() > 1 && n.outputs[1];
  const bool inv_std = n.num_outputs() > 2 && n.outputs[2];
  auto step = std::make_unique<LayerNormStep>(n, *norm_shape(n, f), n.has_input(2), mean, inv_std);
  const int x = lw.plain(n.inputs[0]);
  step->read(x, *f.dims(n.inputs[0]));
  for (int i = 1; i < 3; ++i)
    if (n.has_input(i)) step->read(lw.plain(n.inputs[i]), *f.dims(n.inputs[i]));
  const int y = lw.define(n.outputs[0]);
  step->write(y, in_place_share(lw, x, lw.slot(y).bytes()));
  for (int i = 1; i < n.num_outputs(); ++i)
    if (n.outputs[i]) step->write(lw.define(n.outputs[i]));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuSoftmax{.name = "cpu.softmax", .match = match_softmax,
                                       .build = build_softmax};
constinit const KernelImpl kCpuLayerNorm{.name = "cpu.layer_norm", .match = match_layer_norm,
                                         .build = build_layer_norm};

}  // namespace kiln::engine
