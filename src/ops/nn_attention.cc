// nn family: attention. Attention (opset 23/24: masks, GQA, past / present kv, causal, softcap,
// nonpad_kv_seqlen), RotaryEmbedding, FlexAttention (ai.onnx.preview).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/nn_common.h"

namespace kiln {
namespace {

// A [B, H, S, D] float view of a 4-D input, or of a 3-D [B, S, H*D] one (heads split out).
template <typename A>
std::vector<A> as_bhsd(const Node& n, const Tensor& t, int64_t heads, int64_t& B, int64_t& H,
                       int64_t& S, int64_t& D) {
  auto v = nn::load_as<A>(n, t);
  if (t.rank() == 4) {
    B = t.dim(0);
    H = t.dim(1);
    S = t.dim(2);
    D = t.dim(3);
    return v;
  }
  B = t.dim(0);
  S = t.dim(1);
  H = heads;
  D = t.dim(2) / heads;
  std::vector<A> out(v.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          out[((b * H + h) * S + s) * D + d] = v[((b * S + s) * H + h) * D + d];
  return out;
}

// Concatenates past [B, H, P, D] and cur [B, H, S, D] along the sequence.
template <typename A>
std::vector<A> concat_seq(const std::vector<A>& past, int64_t P, const std::vector<A>& cur,
                          int64_t S, int64_t BH, int64_t D) {
  std::vector<A> out(static_cast<size_t>(BH * (P + S) * D));
  for (int64_t bh = 0; bh < BH; ++bh) {
    std::copy(past.begin() + bh * P * D, past.begin() + (bh + 1) * P * D,
              out.begin() + bh * (P + S) * D);
    std::copy(cur.begin() + bh * S * D, cur.begin() + (bh + 1) * S * D,
              out.begin() + bh * (P + S) * D + P * D);
  }
  return out;
}

void run_attention(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const int rank = q.rank();
  if ((rank != 3 && rank != 4) || k.rank() != rank || v.rank() != rank)
    ctx.fail_here("Q, K and V must all be 3-D or all 4-D");
  const int64_t qh_attr = attr_int(n, "q_num_heads", 0), kvh_attr = attr_int(n, "kv_num_heads", 0);
  if (rank == 3) {
    if (qh_attr <= 0 || kvh_attr <= 0)
      ctx.fail_here("3-D inputs need the q_num_heads and kv_num_heads attributes");
    if (q.dim(2) % qh_attr || k.dim(2) % kvh_attr || v.dim(2) % kvh_attr)
      ctx.fail_here("hidden sizes are not divisible by the head counts");
  }
  const bool causal = attr_int(n, "is_causal", 0) != 0;
  const int64_t mode = attr_int(n, "qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) ctx.fail_here("qk_matmul_output_mode must be 0 to 3");
  const float softcap = attr_float(n, "softcap", 0.0f);
  const bool has_mask = ctx.has_input(3), has_past = ctx.has_input(4),
             has_nonpad = ctx.has_input(6);
  if (has_past != ctx.has_input(5)) ctx.fail_here("past_key and past_value go together");

  visit<KILN_FLOAT_TYPES>(n, q.dtype(), [&]<typename T>() {
    using A = compute_t<T>;
    int64_t B, Hq, Sq, Dh, Bk, Hk, Sk, Dk, Bv, Hv, Sv, Dv;
    auto Q = as_bhsd<A>(n, q, qh_attr, B, Hq, Sq, Dh);
    if (has_past) {
      const Tensor& pk = ctx.input(4);
      const Tensor& pv = ctx.input(5);
      if (pk.rank() == 4 && pv.rank() == 4) {
        nn::check_scratch(n, {pk.numel() + k.numel()}, sizeof(A));
        nn::check_scratch(n, {pv.numel() + v.numel()}, sizeof(A));
      }
    }
    auto K = as_bhsd<A>(n, k, kvh_attr, Bk, Hk, Sk, Dk);
    auto V = as_bhsd<A>(n, v, kvh_attr, Bv, Hv, Sv, Dv);
    if (Bk != B || Bv != B || Hv != Hk || Sv != Sk || Dk != Dh)
      ctx.fail_here(fmt::format("Q {}, K {} and V {} do not fit together",
                                dims_to_string(q.dims()), dims_to_string(k.dims()),
                                dims_to_string(v.dims())));
    if (Hk == 0 || Hq % Hk != 0)
      ctx.fail_here(fmt::format("{} query heads are not a multiple of {} kv heads", Hq, Hk));
    int64_t P = 0;
    if (has_past) {
      const Tensor& pk = ctx.input(4);
      const Tensor& pv = ctx.input(5);
      if (pk.rank() != 4 || pv.rank() != 4 || pk.dim(0) != B || pk.dim(1) != Hk ||
          pk.dim(3) != Dh || pv.dim(0) != B || pv.dim(1) != Hk || pv.dim(3) != Dv ||
          pv.dim(2) != pk.dim(2))
        ctx.fail_here(fmt::format("past_key {} / past_value {} do not fit K and V",
                                  dims_to_string(pk.dims()), dims_to_string(pv.dims())));
      P = pk.dim(2);
      K = concat_seq(nn::load_as<A>(n, pk), P, K, Sk, B * Hk, Dh);
      V = concat_seq(nn::load_as<A>(n, pv), P, V, Sk, B * Hk, Dv);
    }
    const int64_t L = P + Sk;  // total kv length
    // mask, lifted to 4-D with broadcast strides; its last dim may be shorter than L
    std::vector<A> mask;
    bool mask_bool = false;
    int64_t mst[4] = {0, 0, 0, 0}, mlen = 0;
    if (has_mask) {
      const Tensor& m = ctx.input(3);
      if (m.rank() < 2 || m.rank() > 4) ctx.fail_here("attn_mask must have rank 2 to 4");
      mask_bool = m.dtype() == DataType::kBool;
      mask = nn::load_as<A>(n, m);
      std::vector<int64_t> md(4 - m.rank(), 1);
      md.insert(md.end(), m.dims().begin(), m.dims().end());
      const int64_t want[4] = {B, Hq, Sq, L};
      for (int i = 0; i < 3; ++i)
        if (md[i] != 1 && md[i] != want[i])
          ctx.fail_here(fmt::format("attn_mask of shape {} does not broadcast to [{},{},{},{}]",
                                    dims_to_string(m.dims()), B, Hq, Sq, L));
      mlen = md[3];
      if (mlen > L) ctx.fail_here("attn_mask is longer than the total sequence");
      const auto st = strides_of(md);
      for (int i = 0; i < 4; ++i) mst[i] = md[i] == 1 ? 0 : st[i];
    }
    std::vector<int64_t> nonpad;
    if (has_nonpad) {
      nonpad = ctx.input(6).to_int64s();
      if (static_cast<int64_t>(nonpad.size()) != B)
        ctx.fail_here(fmt::format("nonpad_kv_seqlen has {} values for batch {}", nonpad.size(), B));
    }
    const A scale = n.attr("scale") ? static_cast<A>(attr_float(n, "scale", 1.0f))
                                    : A(1) / std::sqrt(static_cast<A>(Dh));
    const A sq = std::sqrt(scale);
    const A ninf = -std::numeric_limits<A>::infinity();
    const int64_t groups = Hq / Hk;
    const bool want_qk = ctx.wants_output(3);
    nn::check_scratch(n, {B, Hq, Sq, Dv}, sizeof(A));
    if (want_qk) nn::check_scratch(n, {B, Hq, Sq, L}, sizeof(A));
    std::vector<A> Y(static_cast<size_t>(B * Hq * Sq * Dv));
    std::vector<A> QK(want_qk ? static_cast<size_t>(B * Hq * Sq * L) : 0);
#pragma omp parallel for
    for (int64_t r = 0; r < B * Hq * Sq; ++r) {
      const int64_t b = r / (Hq * Sq), h = (r / Sq) % Hq, i = r % Sq;
      const int64_t kvh = h / groups;
      const A* qr = Q.data() + r * Dh;
      const A* kb = K.data() + (b * Hk + kvh) * L * Dh;
      const A* vb = V.data() + (b * Hk + kvh) * L * Dv;
      std::vector<A> raw(L), score(L);
      int64_t offset = 0;
      if (has_past) offset = P;
      else if (has_nonpad) offset = std::clamp<int64_t>(nonpad[b], 0, L) - Sq;
      for (int64_t j = 0; j < L; ++j) {
        A s = 0;
        const A* kr = kb + j * Dh;
        for (int64_t d = 0; d < Dh; ++d) s += (qr[d] * sq) * (kr[d] * sq);
        raw[j] = s;
        A c = softcap > 0 ? static_cast<A>(softcap) * std::tanh(s / static_cast<A>(softcap)) : s;
        A bias = 0;
        if (has_mask) {
          if (j >= mlen) {
            bias = ninf;
          } else {
            const A mv = mask[b * mst[0] + h * mst[1] + i * mst[2] + j * mst[3]];
            bias = mask_bool ? (mv != A(0) ? A(0) : ninf) : mv;
          }
        }
        if (causal && j > i + offset) bias = ninf;
        if (has_nonpad && j >= nonpad[b]) bias = ninf;
        score[j] = c + bias;
        if (want_qk) {
          A* qo = QK.data() + r * L;
          qo[j] = mode == 0 ? raw[j] : mode == 1 ? c : score[j];
        }
      }
      A mx = ninf;
      for (int64_t j = 0; j < L; ++j) mx = std::max(mx, score[j]);
      A* yr = Y.data() + r * Dv;
      if (mx == ninf || std::isnan(mx)) {
        // a fully masked row attends to nothing
        for (int64_t j = 0; j < L; ++j) score[j] = 0;
      } else {
        A sum = 0;
        for (int64_t j = 0; j < L; ++j) {
          score[j] = score[j] == ninf ? A(0) : std::exp(score[j] - mx);
          sum += score[j];
        }
        for (int64_t j = 0; j < L; ++j) score[j] /= sum;
        for (int64_t j = 0; j < L; ++j) {
          if (score[j] == A(0)) continue;
          const A* vr = vb + j * Dv;
          for (int64_t d = 0; d < Dv; ++d) yr[d] += score[j] * vr[d];
        }
      }
      if (want_qk && mode == 3) std::copy(score.begin(), score.end(), QK.data() + r * L);
    }
    auto emit = [&](int idx, const std::vector<A>& data, std::vector<int64_t> dims) {
      Tensor t(q.dtype(), std::move(dims));
      T* p = t.data<T>();
      for (size_t e = 0; e < data.size(); ++e) p[e] = nn::from_num<T>(data[e]);
      ctx.set_output(idx, std::move(t));
    };
    if (rank == 3) {
      std::vector<A> y3(Y.size());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hq; ++h)
          for (int64_t s = 0; s < Sq; ++s)
            for (int64_t d = 0; d < Dv; ++d)
              y3[((b * Sq + s) * Hq + h) * Dv + d] = Y[((b * Hq + h) * Sq + s) * Dv + d];
      emit(0, y3, {B, Sq, Hq * Dv});
    } else {
      emit(0, Y, {B, Hq, Sq, Dv});
    }
    if (ctx.wants_output(1)) emit(1, K, {B, Hk, L, Dh});
    if (ctx.wants_output(2)) emit(2, V, {B, Hk, L, Dv});
    if (want_qk) emit(3, QK, {B, Hq, Sq, L});
  });
}

void infer_attention(InferContext& ctx) {
  const Node& n = ctx.node();
  const DataType dt = ctx.input_dtype(0);
  const auto& qs = ctx.input_shape(0);
  const auto& ks = ctx.input_shape(1);
  const auto& vs = ctx.input_shape(2);
  const int64_t qh = attr_int(n, "q_num_heads", 0), kvh = attr_int(n, "kv_num_heads", 0);
  std::optional<Shape> y, pk, pv, qk;
  auto div = [](const Dim& d, int64_t h) { return h > 0 ? Dim::floor_div(d, Dim(h)) : Dim(); };
  if (qs && ks && vs) {
    const size_t r = qs->size();
    if ((r != 3 && r != 4) || ks->size() != r || vs->size() != r)
      ctx.fail_here("Q, K and V must all be 3-D or all 4-D");
    Dim B = (*qs)[0], Hq, Sq, Hk, Sk, Dh, Dv;
    if (r == 4) {
      Hq = (*qs)[1];
      Sq = (*qs)[2];
      Hk = (*ks)[1];
      Sk = (*ks)[2];
      Dh = (*ks)[3];
      Dv = (*vs)[3];
      y = Shape{B, Hq, Sq, Dv};
    } else {
      if (qh <= 0 || kvh <= 0)
        ctx.fail_here("3-D inputs need the q_num_heads and kv_num_heads attributes");
      Hq = qh;
      Sq = (*qs)[1];
      Hk = kvh;
      Sk = (*ks)[1];
      Dh = div((*ks)[2], kvh);
      Dv = div((*vs)[2], kvh);
      y = Shape{B, Sq, nn::dim_mul(Dv, Dim(qh))};
    }
    Dim total = Sk;
    if (ctx.has_input(4)) {
      const auto& ps = ctx.input_shape(4);
      total = ps && ps->size() == 4 ? nn::dim_add((*ps)[2], Sk) : Dim();
    }
    pk = Shape{B, Hk, total, Dh};
    pv = Shape{B, Hk, total, Dv};
    qk = Shape{B, Hq, Sq, total};
  }
  ctx.set_output(0, dt, y);
  if (ctx.has_output(1)) ctx.set_output(1, dt, pk);
  if (ctx.has_output(2)) ctx.set_output(2, dt, pv);
  if (ctx.has_output(3)) ctx.set_output(3, dt, qk);
}

// ---------------------------------------------------------------------------------------------
// RotaryEmbedding.

void run_rotary(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& cosc = ctx.input(1);
  const Tensor& sinc = ctx.input(2);
  const bool interleaved = attr_int(n, "interleaved", 0) != 0;
  const int64_t heads_attr = attr_int(n, "num_heads", 0);
  int64_t rot = attr_int(n, "rotary_embedding_dim", 0);
  int64_t B, H, S, D;
  if (x.rank() == 4) {
    B = x.dim(0);
    H = x.dim(1);
    S = x.dim(2);
    D = x.dim(3);
  } else if (x.rank() == 3) {
    if (heads_attr <= 0) ctx.fail_here("a 3-D input needs the num_heads attribute");
    if (x.dim(2) % heads_attr) ctx.fail_here("hidden size is not divisible by num_heads");
    B = x.dim(0);
    S = x.dim(1);
    H = heads_attr;
    D = x.dim(2) / heads_attr;
  } else {
    ctx.fail_here(fmt::format("input has rank {}, expected 3 or 4", x.rank()));
  }
  if (rot == 0) rot = D;
  if (rot < 0 || rot > D || rot % 2) ctx.fail_here(fmt::format("bad rotary_embedding_dim {}", rot));
  const int64_t half = rot / 2;
  if (cosc.dims() != sinc.dims()) ctx.fail_here("cos_cache and sin_cache shapes differ");
  std::vector<int64_t> pos;
  if (ctx.has_input(3)) {
    const Tensor& p = ctx.input(3);
    if (p.dims() != std::vector<int64_t>{B, S})
      ctx.fail_here(fmt::format("position_ids of shape {}, expected [{},{}]",
                                dims_to_string(p.dims()), B, S));
    if (cosc.rank() != 2 || cosc.dim(1) != half)
      ctx.fail_here(fmt::format("cos_cache of shape {}, expected [max_position, {}]",
                                dims_to_string(cosc.dims()), half));
    pos = p.to_int64s();
    for (int64_t v : pos)
      if (v < 0 || v >= cosc.dim(0))
        ctx.fail_here(fmt::format("position id {} out of range [0, {})", v, cosc.dim(0)));
  } else if (cosc.dims() != std::vector<int64_t>{B, S, half}) {
    ctx.fail_here(fmt::format("cos_cache of shape {}, expected [{},{},{}]",
                              dims_to_string(cosc.dims()), B, S, half));
  }
  visit<KILN_FLOAT_TYPES>(n, x.dtype(), [&]<typename T>() {
    using A = compute_t<T>;
    const auto cv = nn::load_as<A>(n, cosc);
    const auto sv = nn::load_as<A>(n, sinc);
    const T* xp = x.data<T>();
    Tensor y(x.dtype(), x.dims());
    T* yp = y.data<T>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t s = 0; s < S; ++s) {
          const int64_t base = x.rank() == 4 ? ((b * H + h) * S + s) * D : ((b * S + s) * H + h) * D;
          const int64_t row = pos.empty() ? (b * S + s) : pos[b * S + s];
          const A* c = cv.data() + row * half;
          const A* sn = sv.data() + row * half;
          const T* xr = xp + base;
          T* yr = yp + base;
          for (int64_t i = 0; i < half; ++i) {
            const int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
            const A a = static_cast<A>(xr[i1]), bb = static_cast<A>(xr[i2]);
            yr[i1] = nn::from_num<T>(a * c[i] - bb * sn[i]);
            yr[i2] = nn::from_num<T>(bb * c[i] + a * sn[i]);
          }
          for (int64_t d = rot; d < D; ++d) yr[d] = xr[d];
        }
    ctx.set_output(0, std::move(y));
  });
}


// ---------------------------------------------------------------------------------------------
// FlexAttention (ai.onnx.preview): scores = Q K^T * scale -> score_mod -> softmax -> prob_mod -> @ V,
// the softmax and the two subgraphs in float (double for double inputs or softmax_precision).

DataType flex_precision(const Node& n, DataType q) {
  const int64_t p = attr_int(n, "softmax_precision", 0);
  if (p == static_cast<int64_t>(DataType::kDouble) || (p == 0 && q == DataType::kDouble))
    return DataType::kDouble;
  return DataType::kFloat;
}

Tensor run_mod(KernelContext& ctx, const char* name, Tensor t) {
  const Attribute* a = ctx.node().attr(name);
  if (!a || a->kind != AttrKind::kGraph || !a->g) return t;
  std::vector<RtValue> in;
  in.push_back(RtValue::of(t));
  auto out = ctx.run_subgraph(*a->g, std::move(in));
  if (out.size() != 1 || !out[0].is_tensor())
    ctx.fail_here(fmt::format("{} must give one tensor", name));
  Tensor r = std::move(out[0].tensor);
  if (r.dims() != t.dims())
    ctx.fail_here(fmt::format("{} gave shape {}, expected {}", name, dims_to_string(r.dims()),
                              dims_to_string(t.dims())));
  return nn::convert_float(ctx.node(), std::move(r), t.dtype());
}

void run_flex_attention(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) ctx.fail_here("Q, K and V must be 4-D");
  const int64_t B = q.dim(0), Hq = q.dim(1), L = q.dim(2), E = q.dim(3);
  const int64_t Hk = k.dim(1), S = k.dim(2), Ev = v.dim(3);
  if (k.dim(0) != B || v.dim(0) != B || v.dim(1) != Hk || v.dim(2) != S || k.dim(3) != E)
    ctx.fail_here(fmt::format("Q {}, K {} and V {} do not fit together", dims_to_string(q.dims()),
                              dims_to_string(k.dims()), dims_to_string(v.dims())));
  if (Hk == 0 || Hq % Hk != 0)
    ctx.fail_here(fmt::format("{} query heads are not a multiple of {} kv heads", Hq, Hk));
  const int64_t groups = Hq / Hk;
  const DataType prec = flex_precision(n, q.dtype());
  visit<float, double>(n, prec, [&]<typename A>() {
    const auto Q = nn::load_as<A>(n, q);
    const auto K = nn::load_as<A>(n, k);
    const auto V = nn::load_as<A>(n, v);
    const A scale = n.attr("scale") ? static_cast<A>(attr_float(n, "scale", 1.0f))
                                    : A(1) / std::sqrt(static_cast<A>(E));
    const A sq = std::sqrt(scale);
    nn::check_scratch(n, {B, Hq, L, S}, sizeof(A));
    Tensor scores(prec, {B, Hq, L, S});
    A* sp = scores.data<A>();
#pragma omp parallel for
    for (int64_t r = 0; r < B * Hq * L; ++r) {
      const int64_t b = r / (Hq * L), h = (r / L) % Hq;
      const A* qr = Q.data() + r * E;
      const A* kb = K.data() + (b * Hk + h / groups) * S * E;
      for (int64_t j = 0; j < S; ++j) {
        A s = 0;
        for (int64_t d = 0; d < E; ++d) s += (qr[d] * sq) * (kb[j * E + d] * sq);
        sp[r * S + j] = s;
      }
    }
    scores = run_mod(ctx, "score_mod", std::move(scores));
    sp = scores.data<A>();
    for (int64_t r = 0; r < B * Hq * L; ++r) {
      A* row = sp + r * S;
      A mx = -std::numeric_limits<A>::infinity();
      for (int64_t j = 0; j < S; ++j) mx = std::max(mx, row[j]);
      A sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        row[j] = std::exp(row[j] - mx);
        sum += row[j];
      }
      for (int64_t j = 0; j < S; ++j) row[j] /= sum;
    }
    Tensor probs = run_mod(ctx, "prob_mod", std::move(scores));
    const A* pp = probs.data<A>();
    Tensor y(prec, {B, Hq, L, Ev});
    A* yp = y.data<A>();
#pragma omp parallel for
    for (int64_t r = 0; r < B * Hq * L; ++r) {
      const int64_t b = r / (Hq * L), h = (r / L) % Hq;
      const A* vb = V.data() + (b * Hk + h / groups) * S * Ev;
      A* yr = yp + r * Ev;
      for (int64_t j = 0; j < S; ++j) {
        const A p = pp[r * S + j];
        for (int64_t d = 0; d < Ev; ++d) yr[d] += p * vb[j * Ev + d];
      }
    }
    ctx.set_output(0, nn::convert_float(n, std::move(y), q.dtype()));
  });
}

void infer_flex_attention(InferContext& ctx) {
  const Node& n = ctx.node();
  const DataType dt = ctx.input_dtype(0);
  const auto& qs = ctx.input_shape(0);
  const auto& ks = ctx.input_shape(1);
  const auto& vs = ctx.input_shape(2);
  for (int i = 0; i < 3; ++i)
    if (ctx.input_rank(i) >= 0 && ctx.input_rank(i) != 4) ctx.fail_here("Q, K and V must be 4-D");
  Dim B, Hq, L, S, Ev;
  if (qs) {
    B = (*qs)[0];
    Hq = (*qs)[1];
    L = (*qs)[2];
  }
  if (ks) S = (*ks)[2];
  if (vs) Ev = (*vs)[3];
  // type the subgraphs' values: scores / probs [B, Hq, L, S] in the softmax precision
  const TypeInfo st = TypeInfo::tensor(flex_precision(n, dt), Shape{B, Hq, L, S});
  for (const char* name : {"score_mod", "prob_mod"}) {
    const Attribute* a = n.attr(name);
    if (a && a->kind == AttrKind::kGraph && a->g) ctx.infer_subgraph(*a->g, {st});
  }
  ctx.set_output(0, dt, Shape{B, Hq, L, Ev});
}

}  // namespace

void register_nn_attention_ops(OpRegistry& r) {
  r.add("", "Attention")
      .versions(23)
      .inputs(3, 7)
      .outputs(1, 4)
      .attr("is_causal", AttrKind::kInt)
      .attr("kv_num_heads", AttrKind::kInt)
      .attr("q_num_heads", AttrKind::kInt)
      .attr("qk_matmul_output_mode", AttrKind::kInt)
      .attr("scale", AttrKind::kFloat)
      .attr("softcap", AttrKind::kFloat)
      .attr("softmax_precision", AttrKind::kInt)
      .shape(infer_attention)
      .run(run_attention);
  r.add("", "RotaryEmbedding")
      .versions(23)
      .inputs(3, 4)
      .outputs(1, 1)
      .attr("interleaved", AttrKind::kInt)
      .attr("num_heads", AttrKind::kInt)
      .attr("rotary_embedding_dim", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx, 0); })
      .run(run_rotary);
  r.add("ai.onnx.preview", "FlexAttention")
      .versions(1)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("scale", AttrKind::kFloat)
      .attr("score_mod", AttrKind::kGraph)
      .attr("prob_mod", AttrKind::kGraph)
      .attr("softmax_precision", AttrKind::kInt)
      .shape(infer_flex_attention)
      .run(run_flex_attention);
}

}  // namespace kiln
