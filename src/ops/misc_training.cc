// ai.onnx.preview.training optimizers: Adagrad, Adam, Momentum. One update step each, for any
// number of tensors: inputs (R, T, X..., G..., [V...], [H...]), outputs (X_new..., [V_new...],
// [H_new...]).
#include <cmath>

#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

namespace {

constexpr const char* kTraining = "ai.onnx.preview.training";

// Number of optimized tensors, given `per` inputs per tensor after R and T.
int tensors_of(const Node& n, int num_inputs, int per, int outs_per, int num_outputs) {
  const int k = (num_inputs - 2) / per;
  KILN_CHECK(num_inputs >= 2 + per && (num_inputs - 2) % per == 0, ErrorKind::kBadModel,
             "{}{} inputs do not fit R, T and {} per optimized tensor", n.where(), num_inputs, per);
  KILN_CHECK(num_outputs == k * outs_per, ErrorKind::kBadModel, "{}expected {} outputs, got {}",
             n.where(), k * outs_per, num_outputs);
  return k;
}

void infer_optimizer(InferContext& ctx, int per, int outs_per) {
  const int k = tensors_of(ctx.node(), ctx.num_inputs(), per, outs_per, ctx.num_outputs());
  // outputs: X_new..., then the state outputs in input order (inputs 2 + k*2 ...)
  for (int j = 0; j < k; ++j) ctx.set_output(j, ctx.input_type(2 + j));
  for (int s = 1; s < outs_per; ++s)
    for (int j = 0; j < k; ++j) ctx.set_output(s * k + j, ctx.input_type(2 + (s + 1) * k + j));
}

template <typename Fn>
void run_optimizer(KernelContext& ctx, int per, int outs_per, Fn&& update) {
  const Node& n = ctx.node();
  const int k = tensors_of(n, ctx.num_inputs(), per, outs_per, ctx.num_outputs());
  if (ctx.input(0).numel() != 1 || ctx.input(1).numel() != 1)
    ctx.fail_here("R and T must be scalars");
  const double R = ctx.input(0).get_f64(0);
  const int64_t T = ctx.input(1).get_i64(0);
  for (int j = 0; j < k; ++j) {
    std::vector<const Tensor*> in;
    for (int p = 0; p < per; ++p) in.push_back(&ctx.input(2 + p * k + j));
    for (const Tensor* t : in)
      if (t->dims() != in[0]->dims() || t->dtype() != in[0]->dtype())
        ctx.fail_here(fmt::format("tensor {} and its gradient/state differ in type or shape", j));
    std::vector<Tensor> out;
    for (int o = 0; o < outs_per; ++o) out.emplace_back(in[0]->dtype(), in[0]->dims());
    visit<float, double>(n, in[0]->dtype(), [&]<typename T_>() {
      std::vector<const T_*> pi;
      for (const Tensor* t : in) pi.push_back(t->data<T_>());
      std::vector<T_*> po;
      for (Tensor& t : out) po.push_back(t.data<T_>());
      for (int64_t e = 0; e < in[0]->numel(); ++e) {
        double v[4] = {0, 0, 0, 0}, r[3] = {0, 0, 0};
        for (int p = 0; p < per; ++p) v[p] = static_cast<double>(pi[p][e]);
        update(R, T, v, r);
        for (int o = 0; o < outs_per; ++o) po[o][e] = static_cast<T_>(r[o]);
      }
    });
    for (int o = 0; o < outs_per; ++o) ctx.set_output(o * k + j, std::move(out[o]));
  }
}

void run_adagrad(KernelContext& ctx) {
  const Node& n = ctx.node();
  const double decay = attr_float(n, "decay_factor", 0.0f);
  const double eps = attr_float(n, "epsilon", 0.0f);
  const double norm = attr_float(n, "norm_coefficient", 0.0f);
  run_optimizer(ctx, 3, 2, [&](double R, int64_t T, const double* v, double* out) {
    const double x = v[0], g = v[1], h = v[2];
    const double rate = R / (1 + static_cast<double>(T) * decay);
    const double gr = norm * x + g;
    const double h_new = h + gr * gr;
    out[0] = x - rate * gr / (std::sqrt(h_new) + eps);
    out[1] = h_new;
  });
}

void run_adam(KernelContext& ctx) {
  const Node& n = ctx.node();
  const double alpha = attr_float(n, "alpha", 0.9f);
  const double beta = attr_float(n, "beta", 0.999f);
  const double eps = attr_float(n, "epsilon", 0.0f);
  const double norm = attr_float(n, "norm_coefficient", 0.0f);
  const double norm_post = attr_float(n, "norm_coefficient_post", 0.0f);
  run_optimizer(ctx, 4, 3, [&](double R, int64_t T, const double* v, double* out) {
    const double x = v[0], g = v[1], m = v[2], h = v[3];
    const double gr = norm * x + g;
    const double m_new = alpha * m + (1 - alpha) * gr;
    const double h_new = beta * h + (1 - beta) * gr * gr;
    const double h_sqrt = std::sqrt(h_new) + eps;
    const double td = static_cast<double>(T);
    const double rate =
        T > 0 ? R * std::sqrt(1 - std::pow(beta, td)) / (1 - std::pow(alpha, td)) : R;
    const double x_new = x - rate * m_new / h_sqrt;
    out[0] = (1 - norm_post) * x_new;
    out[1] = m_new;
    out[2] = h_new;
  });
}

void run_momentum(KernelContext& ctx) {
  const Node& n = ctx.node();
  const double alpha = attr_float(n, "alpha", 0.0f);
  const double beta = attr_float(n, "beta", 0.0f);
  const double norm = attr_float(n, "norm_coefficient", 0.0f);
  const std::string mode = attr_string(n, "mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    ctx.fail_here(fmt::format("unknown mode '{}'", mode));
  const bool nesterov = mode == "nesterov";
  run_optimizer(ctx, 3, 2, [&](double R, int64_t T, const double* v, double* out) {
    const double x = v[0], g = v[1], m = v[2];
    const double gr = norm * x + g;
    const double b = T > 0 ? beta : 1.0;
    const double m_new = alpha * m + b * gr;
    out[0] = nesterov ? x - R * (gr + alpha * m_new) : x - R * m_new;
    out[1] = m_new;
  });
}

}  // namespace

void register_misc_training_ops(OpRegistry& r) {
  r.add(kTraining, "Adagrad")
      .versions(1)
      .inputs(5, -1)
      .outputs(2, -1)
      .attr("decay_factor", AttrKind::kFloat)
      .attr("epsilon", AttrKind::kFloat)
      .attr("norm_coefficient", AttrKind::kFloat)
      .shape([](InferContext& c) { infer_optimizer(c, 3, 2); })
      .run(run_adagrad);
  r.add(kTraining, "Adam")
      .versions(1)
      .inputs(6, -1)
      .outputs(3, -1)
      .attr("alpha", AttrKind::kFloat)
      .attr("beta", AttrKind::kFloat)
      .attr("epsilon", AttrKind::kFloat)
      .attr("norm_coefficient", AttrKind::kFloat)
      .attr("norm_coefficient_post", AttrKind::kFloat)
      .shape([](InferContext& c) { infer_optimizer(c, 4, 3); })
      .run(run_adam);
  r.add(kTraining, "Momentum")
      .versions(1)
      .inputs(5, -1)
      .outputs(2, -1)
      .attr("alpha", AttrKind::kFloat, true)
      .attr("beta", AttrKind::kFloat, true)
      .attr("mode", AttrKind::kString, true)
      .attr("norm_coefficient", AttrKind::kFloat, true)
      .shape([](InferContext& c) { infer_optimizer(c, 3, 2); })
      .run(run_momentum);
}

}  // namespace kiln
