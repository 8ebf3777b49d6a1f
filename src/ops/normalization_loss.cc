// Dropout, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
#include <cmath>
#include <limits>
#include <random>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

// ---------------------------------------------------------------------------------------------
// Dropout: identity in inference (mask all true). With training_mode (opset 12+) and ratio > 0 it
// zeroes each element with probability ratio and scales the rest by 1 / (1 - ratio) (random).
// Before opset 10 the mask has the data's type.

DataType mask_dtype(int opset, DataType data) { return opset < 10 ? data : DataType::kBool; }

void infer_dropout(InferContext& ctx) {
  infer_same_as_input(ctx);
  if (ctx.has_output(1))
    ctx.set_output(1, mask_dtype(ctx.opset(), ctx.input_dtype(0)), ctx.input_shape(0));
}

void run_dropout(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  double ratio = 0.5;
  if (ctx.has_input(1)) ratio = ctx.input(1).get_f64(0);
  const bool training = ctx.opset() >= 12 && ctx.has_input(2) && ctx.input(2).get_f64(0) != 0;
  if (training && (ratio < 0 || ratio > 1))
    ctx.fail_here(fmt::format("ratio {} not in [0, 1]", ratio));
  const DataType mdt = mask_dtype(ctx.opset(), x.dtype());
  if (!training || ratio == 0) {
    ctx.set_output(0, x);
    if (ctx.wants_output(1)) {
      Tensor m(mdt, x.dims());
      for (int64_t i = 0; i < m.numel(); ++i) m.set_f64(i, 1.0);
      ctx.set_output(1, std::move(m));
    }
    return;
  }
  std::mt19937_64 rng;
  if (auto seed = attr_int_opt(n, "seed"))
    rng.seed(static_cast<uint64_t>(*seed));
  else
    rng.seed(std::random_device{}());
  std::bernoulli_distribution keep(1.0 - ratio);
  const auto v = to_doubles(n, x);
  std::vector<double> y(v.size());
  Tensor m(mdt, x.dims());
  const double s = ratio < 1 ? 1.0 / (1.0 - ratio) : 0.0;
  for (size_t i = 0; i < v.size(); ++i) {
    const bool k = keep(rng);
    y[i] = k ? v[i] * s : 0.0;
    m.set_f64(static_cast<int64_t>(i), k ? 1.0 : 0.0);
  }
  ctx.set_output(0, from_doubles(n, x.dtype(), x.dims(), y));
  if (ctx.wants_output(1)) ctx.set_output(1, std::move(m));
}

// ---------------------------------------------------------------------------------------------
// NegativeLogLikelihoodLoss on log-probabilities (N, C, d1..dk) and targets (N, d1..dk), and
// SoftmaxCrossEntropyLoss, which takes scores and applies LogSoftmax over axis 1 first.

std::string reduction_of(const Node& n) {
  std::string r = attr_string(n, "reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean")
    fail(ErrorKind::kBadModel, "{}unknown reduction '{}'", n.where(), r);
  return r;
}

void infer_loss(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  if (reduction_of(ctx.node()) == "none") {
    std::optional<Shape> s = ctx.input_shape(1);
    if (!s && ctx.input_shape(0) && ctx.input_shape(0)->size() >= 2) {
      Shape t = *ctx.input_shape(0);
      t.erase(t.begin() + 1);
      s = t;
    }
    ctx.set_output(0, dt, s);
  } else {
    ctx.set_output(0, dt, Shape{});
  }
  if (ctx.has_output(1)) ctx.set_output(1, dt, ctx.input_shape(0));
}

// The loss from log-probabilities lp of shape dims (N, C, ...); writes output 0.
void nll(KernelContext& ctx, const std::vector<double>& lp, const std::vector<int64_t>& dims,
         DataType dt, int target_input, int weight_input) {
  const Node& n = ctx.node();
  if (dims.size() < 2) ctx.fail_here("input must have rank 2 or more");
  const Tensor& target = ctx.input(target_input);
  const int64_t N = dims[0], C = dims[1], D = prod(dims, 2, dims.size());
  std::vector<int64_t> tdims = {N};
  tdims.insert(tdims.end(), dims.begin() + 2, dims.end());
  if (target.dims() != tdims)
    ctx.fail_here(fmt::format("target {} does not fit input {}", dims_to_string(target.dims()),
                              dims_to_string(dims)));
  std::vector<double> weight;
  if (ctx.has_input(weight_input)) {
    weight = to_doubles(n, ctx.input(weight_input));
    if (static_cast<int64_t>(weight.size()) != C)
      ctx.fail_here(fmt::format("weight must have {} elements", C));
  }
  const std::optional<int64_t> ignore = attr_int_opt(n, "ignore_index");
  const std::string red = reduction_of(n);
  const std::vector<int64_t> t = target.to_int64s();
  std::vector<double> loss(t.size(), 0.0);
  double wsum = 0, lsum = 0;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t i = b * D + d;
      const int64_t c = t[i];
      if (ignore && c == *ignore) continue;
      if (c < 0 || c >= C) ctx.fail_here(fmt::format("target {} out of range [0, {})", c, C));
      const double w = weight.empty() ? 1.0 : weight[c];
      loss[i] = -lp[(b * C + c) * D + d] * w;
      wsum += w;
      lsum += loss[i];
    }
  if (red == "none")
    ctx.set_output(0, from_doubles(n, dt, tdims, loss));
  else
    ctx.set_output(0, from_doubles(n, dt, {}, {red == "sum" ? lsum : lsum / wsum}));
}

void run_nll(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  nll(ctx, to_doubles(ctx.node(), x), x.dims(), x.dtype(), 1, 2);
}

void run_sce(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here("scores must have rank 2 or more");
  const auto& d = x.dims();
  const int64_t N = d[0], C = d[1], D = prod(d, 2, d.size());
  const auto v = to_doubles(n, x);
  std::vector<double> lp(v.size());
  // No classes (C = 0): nothing to normalize, whatever D claims (a fuzzed [1, 0, 2^40] spun here).
  for (int64_t b = 0; C > 0 && b < N; ++b)
    for (int64_t k = 0; k < D; ++k) {
      auto at = [&](int64_t c) { return (b * C + c) * D + k; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < C; ++c) mx = std::max(mx, v[at(c)]);
      double sum = 0;
      for (int64_t c = 0; c < C; ++c) sum += std::exp(v[at(c)] - mx);
      const double lse = mx + std::log(sum);
      for (int64_t c = 0; c < C; ++c) lp[at(c)] = v[at(c)] - lse;
    }
  nll(ctx, lp, d, x.dtype(), 1, 2);
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(n, x.dtype(), d, lp));
}

}  // namespace

void register_losses(OpRegistry& r) {
  r.add("", "Dropout")
      .versions(1)
      .inputs(1, 3)
      .outputs(1, 2)
      .attr("seed", AttrKind::kInt)
      .attr("is_test", AttrKind::kInt)           // before opset 7
      .attr("consumed_inputs", AttrKind::kInts)  // opset 1
      .nondeterministic()
      .shape(infer_dropout)
      .run(run_dropout);

  r.add("", "NegativeLogLikelihoodLoss")
      .versions(12)
      .inputs(2, 3)
      .outputs(1, 1)
      .attr("ignore_index", AttrKind::kInt)
      .attr("reduction", AttrKind::kString)
      .shape(infer_loss)
      .run(run_nll);

  r.add("", "SoftmaxCrossEntropyLoss")
      .versions(12)
      .inputs(2, 3)
      .outputs(1, 2)
      .attr("ignore_index", AttrKind::kInt)
      .attr("reduction", AttrKind::kString)
      .shape(infer_loss)
      .run(run_sce);
}

}  // namespace kiln::norm
