// Ops of recurrent / gated sequence models: SwiGLU (opset 28), LinearAttention and
// CausalConvWithState (opset 27).
#include <cmath>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

// ---------------------------------------------------------------------------------------------
// SwiGLU: Y = A * sigmoid(alpha * A) * B, A and B of the same shape.

void run_swiglu(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dims() != b.dims())
    ctx.fail_here(fmt::format("A {} and B {} must have the same shape", dims_to_string(a.dims()),
                              dims_to_string(b.dims())));
  const double alpha = attr_float(n, "alpha", 1.0f);
  const auto av = to_doubles(n, a), bv = to_doubles(n, b);
  std::vector<double> y(av.size());
  for (size_t i = 0; i < av.size(); ++i) y[i] = av[i] / (1 + std::exp(-alpha * av[i])) * bv[i];
  ctx.set_output(0, from_doubles(n, a.dtype(), a.dims(), y));
}

void infer_swiglu(InferContext& ctx) {
  const auto& a = ctx.input_shape(0);
  const auto& b = ctx.input_shape(1);
  if (a && b) {
    if (a->size() != b->size()) ctx.fail_here("A and B must have the same shape");
    for (size_t i = 0; i < a->size(); ++i)
      if ((*a)[i].is_known() && (*b)[i].is_known() && (*a)[i].value() != (*b)[i].value())
        ctx.fail_here(fmt::format("A {} and B {} must have the same shape", shape_to_string(*a),
                                  shape_to_string(*b)));
  }
  ctx.set_output(0, ctx.input_dtype(0), a ? a : b);
}

// ---------------------------------------------------------------------------------------------
// LinearAttention: a recurrent state S (B, H_kv, d_k, d_v) updated per token, read by the queries.
//   linear:      S = S + k v^T
//   gated:       S = exp(g) S + k v^T
//   delta:       S = S + k (beta (v - S^T k))^T
//   gated_delta: S = exp(g) S;  S = S + k (beta (v - S^T k))^T
//   output = scale * q^T S      (query head h reads kv head h / (H_q / H_kv))
// q, k, v, decay, beta are packed (B, T, heads * dim).

struct LinearAttentionDims {
  int64_t hq, hkv;
};

LinearAttentionDims la_heads(const Node& n) {
  const int64_t hq = attr_int_req(n, "q_num_heads"), hkv = attr_int_req(n, "kv_num_heads");
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    fail(ErrorKind::kBadModel, "{}q_num_heads {} must be a positive multiple of kv_num_heads {}",
         n.where(), hq, hkv);
  return {hq, hkv};
}

std::string la_rule(const Node& n) {
  const std::string r = attr_string(n, "update_rule", "gated_delta");
  if (r != "linear" && r != "gated" && r != "delta" && r != "gated_delta")
    fail(ErrorKind::kBadModel, "{}unknown update_rule '{}'", n.where(), r);
  return r;
}

void infer_linear_attention(InferContext& ctx) {
  const Node& n = ctx.node();
  const auto [hq, hkv] = la_heads(n);
  la_rule(n);
  const DataType dt = ctx.input_dtype(0);
  const DataType st = ctx.has_input(3) ? ctx.input_dtype(3) : dt;
  const auto& q = ctx.input_shape(0);
  const auto& v = ctx.input_shape(2);
  for (int i : {0, 1, 2})
    if (ctx.input_rank(i) >= 0 && ctx.input_rank(i) != 3)
      ctx.fail_here("query, key and value must be 3-D");
  if (!q || !v) {
    ctx.set_output(0, dt, q ? std::optional<Shape>(Shape{(*q)[0], (*q)[1], Dim()}) : std::nullopt);
    if (ctx.has_output(1))
      ctx.set_output(1, st, ctx.has_input(3) ? ctx.input_shape(3) : std::nullopt);
    return;
  }
  const Dim dk = Dim::floor_div((*q)[2], Dim(hq)), dv = Dim::floor_div((*v)[2], Dim(hkv));
  ctx.set_output(0, dt, Shape{(*q)[0], (*q)[1], Dim(hq) * dv});
  if (ctx.has_output(1)) ctx.set_output(1, st, Shape{(*q)[0], Dim(hkv), dk, dv});
}

void run_linear_attention(KernelContext& ctx) {
  const Node& n = ctx.node();
  const auto [hq, hkv] = la_heads(n);
  const std::string rule = la_rule(n);
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3)
    ctx.fail_here("query, key and value must be 3-D");
  const int64_t B = q.dim(0), T = q.dim(1);
  if (k.dim(0) != B || v.dim(0) != B || k.dim(1) != T || v.dim(1) != T)
    ctx.fail_here("query, key and value must agree on batch and sequence length");
  if (q.dim(2) % hq != 0 || v.dim(2) % hkv != 0)
    ctx.fail_here("the hidden sizes must be multiples of the head counts");
  const int64_t dk = q.dim(2) / hq, dv = v.dim(2) / hkv, group = hq / hkv;
  if (k.dim(2) != hkv * dk)
    ctx.fail_here(
        fmt::format("key hidden size {} must be kv_num_heads * d_k = {}", k.dim(2), hkv * dk));
  check_work(n, {B, hkv, dk, dv});
  check_work(n, {B, T, hq, dv});
  const auto qv = to_doubles(n, q), kv = to_doubles(n, k), vv = to_doubles(n, v);
  std::vector<double> S(static_cast<size_t>(B * hkv * dk * dv), 0.0);
  DataType st = q.dtype();
  if (ctx.has_input(3)) {
    const Tensor& ps = ctx.input(3);
    if (ps.dims() != std::vector<int64_t>{B, hkv, dk, dv})
      ctx.fail_here(fmt::format("past_state {} must be [{},{},{},{}]", dims_to_string(ps.dims()), B,
                                hkv, dk, dv));
    S = to_doubles(n, ps);
    st = ps.dtype();
  }
  std::vector<double> decay, beta;
  int64_t decay_w = 0, beta_w = 0;  // elements per token: hkv * dk or hkv; hkv or 1
  if (gated) {
    if (!ctx.has_input(4)) ctx.fail_here(fmt::format("update_rule '{}' needs decay", rule));
    const Tensor& g = ctx.input(4);
    decay_w = g.rank() == 3 ? g.dim(2) : -1;
    if (g.rank() != 3 || g.dim(0) != B || g.dim(1) != T || (decay_w != hkv * dk && decay_w != hkv))
      ctx.fail_here(
          fmt::format("decay {} must be [B, T, kv_num_heads * d_k] or [B, T, kv_num_heads]",
                      dims_to_string(g.dims())));
    decay = to_doubles(n, g);
  }
  if (delta) {
    if (!ctx.has_input(5)) ctx.fail_here(fmt::format("update_rule '{}' needs beta", rule));
    const Tensor& b = ctx.input(5);
    beta_w = b.rank() == 3 ? b.dim(2) : -1;
    if (b.rank() != 3 || b.dim(0) != B || b.dim(1) != T || (beta_w != hkv && beta_w != 1))
      ctx.fail_here(fmt::format("beta {} must be [B, T, kv_num_heads] or [B, T, 1]",
                                dims_to_string(b.dims())));
    beta = to_doubles(n, b);
  }
  double scale = attr_float(n, "scale", 0.0f);
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(dk));

  std::vector<double> out(static_cast<size_t>(B * T * hq * dv), 0.0);
  std::vector<double> retrieved(dv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t bt = b * T + t;
      for (int64_t h = 0; h < hkv; ++h) {
        double* s = S.data() + (b * hkv + h) * dk * dv;  // s[i * dv + j]
        const double* kt = kv.data() + bt * hkv * dk + h * dk;
        const double* vt = vv.data() + bt * hkv * dv + h * dv;
        if (gated)
          for (int64_t i = 0; i < dk; ++i) {
            const double g =
                decay_w == hkv * dk ? decay[bt * decay_w + h * dk + i] : decay[bt * decay_w + h];
            const double e = std::exp(g);
            for (int64_t j = 0; j < dv; ++j) s[i * dv + j] *= e;
          }
        if (delta) {
          const double bb = beta[bt * beta_w + (beta_w == 1 ? 0 : h)];
          for (int64_t j = 0; j < dv; ++j) {
            double r = 0;
            for (int64_t i = 0; i < dk; ++i) r += s[i * dv + j] * kt[i];
            retrieved[j] = bb * (vt[j] - r);
          }
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += kt[i] * retrieved[j];
        } else {
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += kt[i] * vt[j];
        }
      }
      for (int64_t h = 0; h < hq; ++h) {
        const double* s = S.data() + (b * hkv + h / group) * dk * dv;
        const double* qt = qv.data() + bt * hq * dk + h * dk;
        double* o = out.data() + bt * hq * dv + h * dv;
        for (int64_t j = 0; j < dv; ++j) {
          double r = 0;
          for (int64_t i = 0; i < dk; ++i) r += qt[i] * s[i * dv + j];
          o[j] = scale * r;
        }
      }
    }
  ctx.set_output(0, from_doubles(n, q.dtype(), {B, T, hq * dv}, out));
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(n, st, {B, hkv, dk, dv}, S));
}

// ---------------------------------------------------------------------------------------------
// CausalConvWithState: depthwise causal conv1d over (past_state ++ input) along the last axis,
// with optional bias and fused SiLU; present_state is the last k - 1 positions of that sequence.

std::string conv_activation(const Node& n) {
  const std::string a = attr_string(n, "activation", "none");
  if (a != "none" && a != "silu" && a != "swish")
    fail(ErrorKind::kBadModel, "{}unknown activation '{}'", n.where(), a);
  return a;
}

void infer_causal_conv(InferContext& ctx) {
  conv_activation(ctx.node());
  infer_same_as_input(ctx);
  if (!ctx.has_output(1)) return;
  const auto& x = ctx.input_shape(0);
  const auto& w = ctx.input_shape(1);
  for (int i : {0, 1})
    if (ctx.input_rank(i) >= 0 && ctx.input_rank(i) != 3)
      ctx.fail_here("input and weight must be 3-D");
  if (!x) {
    ctx.set_output(1, ctx.input_dtype(0), std::nullopt);
    return;
  }
  const Dim km1 = w ? (*w)[2] - Dim(1) : Dim();
  ctx.set_output(1, ctx.input_dtype(0), Shape{(*x)[0], (*x)[1], km1});
}

void run_causal_conv(KernelContext& ctx) {
  const Node& n = ctx.node();
  const bool silu = conv_activation(n) != "none";
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (x.rank() != 3 || w.rank() != 3) ctx.fail_here("input and weight must be 3-D");
  const int64_t B = x.dim(0), C = x.dim(1), L = x.dim(2), K = w.dim(2);
  if (w.dim(0) != C || w.dim(1) != 1 || K < 1)
    ctx.fail_here(fmt::format("weight {} must be [{}, 1, k]", dims_to_string(w.dims()), C));
  const auto xv = to_doubles(n, x), wv = to_doubles(n, w);
  std::vector<double> bias(C, 0.0);
  if (ctx.has_input(2)) {
    if (ctx.input(2).numel() != C) ctx.fail_here(fmt::format("bias must have {} elements", C));
    bias = to_doubles(n, ctx.input(2));
  }
  const int64_t P = K - 1;
  std::vector<double> past(static_cast<size_t>(B * C * P), 0.0);
  if (ctx.has_input(3)) {
    const Tensor& ps = ctx.input(3);
    if (ps.dims() != std::vector<int64_t>{B, C, P})
      ctx.fail_here(
          fmt::format("past_state {} must be [{},{},{}]", dims_to_string(ps.dims()), B, C, P));
    past = to_doubles(n, ps);
  }
  std::vector<double> y(xv.size()), present(past.size());
  std::vector<double> seq(static_cast<size_t>(P + L));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t bc = b * C + c;
      for (int64_t i = 0; i < P; ++i) seq[i] = past[bc * P + i];
      for (int64_t i = 0; i < L; ++i) seq[P + i] = xv[bc * L + i];
      for (int64_t t = 0; t < L; ++t) {
        double s = bias[c];
        for (int64_t j = 0; j < K; ++j) s += wv[c * K + j] * seq[t + j];
        if (silu) s = s / (1 + std::exp(-s));
        y[bc * L + t] = s;
      }
      for (int64_t i = 0; i < P; ++i) present[bc * P + i] = seq[L + i];
    }
  ctx.set_output(0, from_doubles(n, x.dtype(), x.dims(), y));
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(n, x.dtype(), {B, C, P}, present));
}

}  // namespace

void register_sequence(OpRegistry& r) {
  r.add("", "SwiGLU")
      .versions(28)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("alpha", AttrKind::kFloat)
      .shape(infer_swiglu)
      .run(run_swiglu);

  r.add("", "LinearAttention")
      .versions(27)
      .inputs(3, 6)
      .outputs(1, 2)
      .attr("chunk_size", AttrKind::kInt)
      .attr("kv_num_heads", AttrKind::kInt, true)
      .attr("q_num_heads", AttrKind::kInt, true)
      .attr("scale", AttrKind::kFloat)
      .attr("update_rule", AttrKind::kString)
      .shape(infer_linear_attention)
      .run(run_linear_attention);

  r.add("", "CausalConvWithState")
      .versions(27)
      .inputs(2, 4)
      .outputs(1, 2)
      .attr("activation", AttrKind::kString)
      .shape(infer_causal_conv)
      .run(run_causal_conv);
}

}  // namespace kiln::norm
