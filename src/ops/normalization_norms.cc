// Normalizations: BatchNormalization InstanceNormalization LayerNormalization GroupNormalization
// RMSNormalization LRN LpNormalization MeanVarianceNormalization.
#include <algorithm>
#include <cmath>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

// For each element of a tensor of `dims`, the index of its group when the axes marked in `reduced`
// are reduced away. Returns the number of groups.
int64_t group_of(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
                 std::vector<int64_t>& group) {
  std::vector<int64_t> keep(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) keep[i] = reduced[i] ? 1 : dims[i];
  group.assign(static_cast<size_t>(prod(dims)), 0);
  for_each_broadcast(dims, {keep}, [&](int64_t i, const int64_t* off) { group[i] = off[0]; });
  return prod(keep);
}

// ---------------------------------------------------------------------------------------------
// BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B, per channel (axis 1).
// training_mode (opset 14+) normalizes with the batch statistics and outputs the running ones;
// before 14 asking for more than Y means training (outputs mean, var, saved_mean, saved_var).

// From opset 14 the schema fixes what older versions left to the kernel (which also takes
// spatial = 0's per-element parameters): scale, B, mean and var are 1-D of length C (X's dim 1,
// or 1 for a 1-D X), and the outputs are Y alone, or Y and the running mean and var in training.
void check_batchnorm_14(const InferContext& ctx) {
  const Node& n = ctx.node();
  const bool training = attr_int(n, "training_mode") != 0;
  KILN_CHECK(ctx.num_outputs() == (training ? 3 : 1), ErrorKind::kBadModel,
             "{}{} outputs with training_mode={}: BatchNormalization-{} gives {}", n.where(),
             ctx.num_outputs(), training ? 1 : 0, n.opset >= 15 ? 15 : 14,
             training ? "3 (Y, running_mean, running_var)" : "1 (Y)");
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  Dim channels;  // unknown until an input knows it
  int from = -1;
  if (const auto& x = ctx.input_shape(0)) {
    channels = x->size() > 1 ? (*x)[1] : Dim(1);
    from = 0;
  }
  for (int i = 1; i < 5; ++i) {
    const auto& s = ctx.input_shape(i);
    if (!s) continue;
    KILN_CHECK(s->size() == 1, ErrorKind::kBadModel,
               "{}{} has rank {}, expected 1 (one value per channel)", n.where(), kNames[i],
               s->size());
    const Dim& c = (*s)[0];
    if (!c.is_known()) continue;
    KILN_CHECK(!channels.is_known() || channels.value() == c.value(), ErrorKind::kBadModel,
               "{}{} has {} elements, but {} gives {} channels", n.where(), kNames[i], c.value(),
               kNames[from], channels.value());
    if (!channels.is_known()) {
      channels = c;
      from = i;
    }
  }
}

void infer_batchnorm(InferContext& ctx) {
  if (ctx.opset() >= 14) check_batchnorm_14(ctx);
  infer_same_as_input(ctx);
  for (int i = 1; i < ctx.num_outputs() && i < 5; ++i) {
    if (!ctx.has_output(i)) continue;
    const int src = i == 1 || i == 3 ? 3 : 4;
    ctx.set_output(i, ctx.input_dtype(src), ctx.input_shape(src));
  }
}

void run_batchnorm(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here("input must have rank 2 or more");
  const auto& d = x.dims();
  const int64_t C = d[1], inner = prod(d, 2, d.size());
  const double eps = attr_float(n, "epsilon");
  const double momentum = attr_float(n, "momentum", 0.9f);
  bool training = attr_int(n, "training_mode") != 0;
  if (ctx.opset() < 14) {
    training = false;
    for (int i = 1; i < ctx.num_outputs(); ++i) training = training || ctx.wants_output(i);
    if (attr_int(n, "is_test", 0) != 0) training = false;  // before opset 7
  }
  // Parameters are per channel, or (spatial = 0, before opset 9) per element of one sample.
  const int64_t sample = C * inner;
  std::vector<std::vector<double>> p(4);
  for (int k = 0; k < 4; ++k) {
    const Tensor& t = ctx.input(k + 1);
    if (t.numel() != C && t.numel() != sample)
      ctx.fail_here(fmt::format("input {} has {} elements, expected {}", k + 1, t.numel(), C));
    p[k] = to_doubles(n, t);
  }
  const bool per_channel = p[0].size() == static_cast<size_t>(C);
  const std::vector<double> v = to_doubles(n, x);
  std::vector<double> y(v.size());
  auto pidx = [&](int64_t i) { return per_channel ? (i / inner) % C : i % sample; };
  std::vector<double> mean = p[2], var = p[3];
  if (training) {
    // Batch statistics, per parameter position, over the elements that share it.
    const size_t m = p[2].size();
    std::vector<double> cnt(m, 0.0), sum(m, 0.0), sq(m, 0.0);
    for (size_t i = 0; i < v.size(); ++i) {
      sum[pidx(i)] += v[i];
      cnt[pidx(i)] += 1;
    }
    for (size_t j = 0; j < m; ++j) mean[j] = sum[j] / cnt[j];
    for (size_t i = 0; i < v.size(); ++i) {
      const double dd = v[i] - mean[pidx(i)];
      sq[pidx(i)] += dd * dd;
    }
    for (size_t j = 0; j < m; ++j) var[j] = sq[j] / cnt[j];
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t j = pidx(i);
    y[i] = (v[i] - mean[j]) / std::sqrt(var[j] + eps) * p[0][j] + p[1][j];
  }
  ctx.set_output(0, from_doubles(n, x.dtype(), d, y));
  if (!training) return;
  const Tensor& in_mean = ctx.input(3);
  const Tensor& in_var = ctx.input(4);
  std::vector<double> rm(mean.size()), rv(var.size());
  for (size_t j = 0; j < mean.size(); ++j) {
    rm[j] = p[2][j] * momentum + mean[j] * (1 - momentum);
    rv[j] = p[3][j] * momentum + var[j] * (1 - momentum);
  }
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(n, in_mean.dtype(), in_mean.dims(), rm));
  if (ctx.wants_output(2)) ctx.set_output(2, from_doubles(n, in_var.dtype(), in_var.dims(), rv));
  // Before opset 14: saved_mean and saved_var, the batch statistics.
  if (ctx.wants_output(3))
    ctx.set_output(3, from_doubles(n, in_mean.dtype(), in_mean.dims(), mean));
  if (ctx.wants_output(4)) ctx.set_output(4, from_doubles(n, in_var.dtype(), in_var.dims(), var));
}

// ---------------------------------------------------------------------------------------------
// InstanceNormalization: per (n, c) over the spatial dims.

void run_instancenorm(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here("input must have rank 2 or more");
  const auto& d = x.dims();
  const int64_t C = d[1], inner = prod(d, 2, d.size());
  const Tensor& scale = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  if (scale.numel() != C || bias.numel() != C)
    ctx.fail_here(fmt::format("scale and B must have {} elements", C));
  const double eps = attr_float(n, "epsilon");
  const auto s = to_doubles(n, scale), b = to_doubles(n, bias), v = to_doubles(n, x);
  std::vector<double> y(v.size());
  const int64_t planes = prod(d, 0, 2);
  for (int64_t pl = 0; pl < planes; ++pl) {
    const int64_t c = pl % C, base = pl * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += v[base + i];
    mean /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) var += (v[base + i] - mean) * (v[base + i] - mean);
    var /= static_cast<double>(inner);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) y[base + i] = (v[base + i] - mean) * inv * s[c] + b[c];
  }
  ctx.set_output(0, from_doubles(n, x.dtype(), d, y));
}

// ---------------------------------------------------------------------------------------------
// LayerNormalization (with Mean and InvStdDev outputs) and RMSNormalization: normalize over the
// dims [axis, rank); Scale (and B) broadcast unidirectionally to X.

DataType stash_dtype(const Node& n) {
  const int64_t s = attr_int(n, "stash_type", 1);
  if (!is_valid_dtype(static_cast<int32_t>(s)) || !is_float(static_cast<DataType>(s)))
    fail(ErrorKind::kBadModel, "{}stash_type {} is not a float type", n.where(), s);
  return static_cast<DataType>(s);
}

void infer_layernorm(InferContext& ctx) {
  infer_same_as_input(ctx);
  const int rank = ctx.input_rank(0);
  std::optional<Shape> stat;
  if (rank >= 0)
    stat = keep_leading(ctx.input_shape(0),
                        normalize_axis(ctx.node(), attr_int(ctx.node(), "axis", -1), rank));
  const DataType st = stash_dtype(ctx.node());
  if (ctx.has_output(1)) ctx.set_output(1, st, stat);
  if (ctx.has_output(2)) ctx.set_output(2, st, stat);
}

void run_layernorm(KernelContext& ctx, bool rms) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const auto& d = x.dims();
  const int rank = x.rank();
  const int axis = normalize_axis(n, attr_int(n, "axis", -1), rank);
  const double eps = attr_float(n, "epsilon");
  const int64_t outer = prod(d, 0, axis), inner = prod(d, axis, d.size());
  const auto v = to_doubles(n, x);
  const auto scale = broadcast_to(n, ctx.input(1), d);
  std::vector<double> bias;
  if (!rms && ctx.has_input(2)) bias = broadcast_to(n, ctx.input(2), d);
  std::vector<double> y(v.size()), means(outer), invs(outer);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = o * inner;
    double mean = 0, var = 0;
    if (rms) {
      for (int64_t i = 0; i < inner; ++i) var += v[base + i] * v[base + i];
      var /= static_cast<double>(inner);
    } else {
      for (int64_t i = 0; i < inner; ++i) mean += v[base + i];
      mean /= static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) var += (v[base + i] - mean) * (v[base + i] - mean);
      var /= static_cast<double>(inner);
    }
    const double inv = 1.0 / std::sqrt(var + eps);
    means[o] = mean;
    invs[o] = inv;
    for (int64_t i = 0; i < inner; ++i) {
      double r = (v[base + i] - mean) * inv * scale[base + i];
      if (!bias.empty()) r += bias[base + i];
      y[base + i] = r;
    }
  }
  ctx.set_output(0, from_doubles(n, x.dtype(), d, y));
  if (rms) return;
  std::vector<int64_t> sd = d;
  for (int i = axis; i < rank; ++i) sd[i] = 1;
  const DataType st = stash_dtype(n);
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(n, st, sd, means));
  if (ctx.wants_output(2)) ctx.set_output(2, from_doubles(n, st, sd, invs));
}

// ---------------------------------------------------------------------------------------------
// GroupNormalization: statistics per (n, group of C / num_groups channels); scale and bias are per
// channel from opset 21, per group in opset 18.

void run_groupnorm(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here("input must have rank 2 or more");
  const auto& d = x.dims();
  const int64_t C = d[1], inner = prod(d, 2, d.size());
  const int64_t G = attr_int_req(n, "num_groups");
  if (G <= 0 || C % G != 0)
    ctx.fail_here(fmt::format("num_groups {} does not divide the {} channels", G, C));
  const double eps = attr_float(n, "epsilon");
  const Tensor& scale = ctx.input(1);
  const Tensor& bias = ctx.input(2);
  bool per_group;
  if (ctx.opset() < 21 && scale.numel() == G && bias.numel() == G)
    per_group = true;
  else if (scale.numel() == C && bias.numel() == C)
    per_group = false;
  else
    ctx.fail_here(fmt::format("scale and bias must have {} elements", ctx.opset() < 21 ? G : C));
  const auto s = to_doubles(n, scale), b = to_doubles(n, bias), v = to_doubles(n, x);
  std::vector<double> y(v.size());
  const int64_t cpg = C / G, size = cpg * inner;
  for (int64_t b0 = 0; b0 < d[0]; ++b0)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t base = (b0 * C + g * cpg) * inner;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < size; ++i) mean += v[base + i];
      mean /= static_cast<double>(size);
      for (int64_t i = 0; i < size; ++i) var += (v[base + i] - mean) * (v[base + i] - mean);
      var /= static_cast<double>(size);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < size; ++i) {
        const int64_t k = per_group ? g : g * cpg + i / inner;
        y[base + i] = (v[base + i] - mean) * inv * s[k] + b[k];
      }
    }
  ctx.set_output(0, from_doubles(n, x.dtype(), d, y));
}

// ---------------------------------------------------------------------------------------------
// LRN: y = x / (bias + alpha / size * sum of x^2 over nearby channels) ^ beta.

void run_lrn(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here("input must have rank 2 or more");
  const auto& d = x.dims();
  const int64_t size = attr_int_req(n, "size");
  if (size <= 0) ctx.fail_here("size must be positive");
  const double alpha = attr_float(n, "alpha", 1e-4f), beta = attr_float(n, "beta", 0.75f),
               bias = attr_float(n, "bias", 1.0f);
  const int64_t C = d[1], inner = prod(d, 2, d.size());
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // floor and ceil of (size - 1) / 2
  const auto v = to_doubles(n, x);
  std::vector<double> y(v.size());
  for (int64_t b = 0; b < d[0]; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min(C - 1, c + hi); ++k) {
          const double e = v[(b * C + k) * inner + i];
          sq += e * e;
        }
        const int64_t at = (b * C + c) * inner + i;
        y[at] = v[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
      }
  ctx.set_output(0, from_doubles(n, x.dtype(), d, y));
}

// ---------------------------------------------------------------------------------------------
// LpNormalization: x / ||x||_p along axis (p = 1 or 2); a zero norm gives 0.

void run_lpnorm(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const int64_t p = attr_int(n, "p", 2);
  if (p != 1 && p != 2) ctx.fail_here(fmt::format("p must be 1 or 2, not {}", p));
  const auto& d = x.dims();
  const auto v = to_doubles(n, x);
  std::vector<double> y(v.size());
  if (x.rank() == 0) {
    y[0] = v[0] == 0 ? 0 : v[0] / std::fabs(v[0]);
  } else {
    const int axis = normalize_axis(n, attr_int(n, "axis", -1), x.rank());
    const int64_t outer = prod(d, 0, axis), len = d[axis], inner = prod(d, axis + 1, d.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        const int64_t base = o * len * inner + in;
        double s = 0;
        for (int64_t k = 0; k < len; ++k) {
          const double e = v[base + k * inner];
          s += p == 1 ? std::fabs(e) : e * e;
        }
        const double norm = p == 1 ? s : std::sqrt(s);
        for (int64_t k = 0; k < len; ++k)
          y[base + k * inner] = norm == 0 ? 0 : v[base + k * inner] / norm;
      }
  }
  ctx.set_output(0, from_doubles(n, x.dtype(), d, y));
}

// ---------------------------------------------------------------------------------------------
// MeanVarianceNormalization: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes`.

void run_mvn(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : attr_ints(n, "axes", {0, 2, 3})) {
    const int axis = normalize_axis(n, a, rank);
    KILN_CHECK(axis < rank, ErrorKind::kBadModel, "{}axis {} out of range for rank {}", n.where(), a, rank);
    reduced[axis] = true;
  }
  std::vector<int64_t> group;
  const int64_t groups = group_of(x.dims(), reduced, group);
  const auto v = to_doubles(n, x);
  std::vector<double> mean(groups, 0.0), sq(groups, 0.0), cnt(groups, 0.0);
  for (size_t i = 0; i < v.size(); ++i) {
    mean[group[i]] += v[i];
    sq[group[i]] += v[i] * v[i];
    cnt[group[i]] += 1;
  }
  for (int64_t g = 0; g < groups; ++g) {
    mean[g] /= cnt[g];
    sq[g] /= cnt[g];
  }
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t g = group[i];
    const double var = std::max(0.0, sq[g] - mean[g] * mean[g]);
    y[i] = (v[i] - mean[g]) / (std::sqrt(var) + 1e-9);
  }
  ctx.set_output(0, from_doubles(n, x.dtype(), x.dims(), y));
}

}  // namespace

void register_norms(OpRegistry& r) {
  r.add("", "BatchNormalization")
      .versions(1)
      .inputs(5, 5)
      .outputs(1, 5)
      .attr("epsilon", AttrKind::kFloat, 1e-5f)
      .attr("momentum", AttrKind::kFloat)
      .attr("training_mode", AttrKind::kInt, 0)
      .attr("spatial", AttrKind::kInt)           // before opset 9
      .attr("is_test", AttrKind::kInt)           // before opset 7
      .attr("consumed_inputs", AttrKind::kInts)  // opset 1
      .shape(infer_batchnorm)
      .run(run_batchnorm);

  r.add("", "InstanceNormalization")
      .versions(1)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("epsilon", AttrKind::kFloat, 1e-5f)
      .attr("consumed_inputs", AttrKind::kInts)  // opset 1
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_instancenorm);

  r.add("", "LayerNormalization")
      .versions(17)
      .inputs(2, 3)
      .outputs(1, 3)
      .attr("axis", AttrKind::kInt)
      .attr("epsilon", AttrKind::kFloat, 1e-5f)
      .attr("stash_type", AttrKind::kInt)
      .shape(infer_layernorm)
      .run([](KernelContext& ctx) { run_layernorm(ctx, false); });

  r.add("", "RMSNormalization")
      .versions(23)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .attr("epsilon", AttrKind::kFloat, 1e-5f)
      .attr("stash_type", AttrKind::kInt)
      .shape([](InferContext& ctx) {
        const int rank = ctx.input_rank(0);
        if (rank >= 0) normalize_axis(ctx.node(), attr_int(ctx.node(), "axis", -1), rank);
        infer_same_as_input(ctx);
      })
      .run([](KernelContext& ctx) { run_layernorm(ctx, true); });

  r.add("", "GroupNormalization")
      .versions(18)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("epsilon", AttrKind::kFloat, 1e-5f)
      .attr("num_groups", AttrKind::kInt, true)
      .attr("stash_type", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_groupnorm);

  r.add("", "LRN")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("alpha", AttrKind::kFloat)
      .attr("beta", AttrKind::kFloat)
      .attr("bias", AttrKind::kFloat)
      .attr("size", AttrKind::kInt, true)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_lrn);

  r.add("", "LpNormalization")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .attr("p", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_lpnorm);

  r.add("", "MeanVarianceNormalization")
      .versions(9)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("axes", AttrKind::kInts)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_mvn);
}

}  // namespace kiln::norm
