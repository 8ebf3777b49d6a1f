// Recurrent ops: RNN, GRU, LSTM (all directions, activations, clip, layout, linear_before_reset,
// peepholes, input_forget, initial states, sequence_lens).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "ops/control_common.h"
#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

namespace {

enum class Cell { kRnn, kGru, kLstm };

int gates_of(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }
int acts_of(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3; }

// ---------------------------------------------------------------------------------------------
// Activation functions of the recurrent ops.

struct Act {
  enum Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = kTanh;
  double alpha = 0, beta = 0;

  template <typename C>
  C operator()(C x) const {
    switch (kind) {
      case kRelu:
        return x > C(0) ? x : C(0);
      case kTanh:
        return std::tanh(x);
      case kSigmoid:
        return C(1) / (C(1) + std::exp(-x));
      case kAffine:
        return C(alpha) * x + C(beta);
      case kLeakyRelu:
        return x >= C(0) ? x : C(alpha) * x;
      case kThresholdedRelu:
        return x > C(alpha) ? x : C(0);
      case kScaledTanh:
        return C(alpha) * std::tanh(C(beta) * x);
      case kHardSigmoid:
        return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta)));
      case kElu:
        return x >= C(0) ? x : C(alpha) * (std::exp(x) - C(1));
      case kSoftsign:
        return x / (C(1) + std::abs(x));
      case kSoftplus:
        return std::log1p(std::exp(-std::abs(x))) + std::max(x, C(0));
    }
    return x;
  }
};

std::vector<Act> parse_activations(const Node& n, Cell cell, int num_dir) {
  const int per_dir = acts_of(cell);
  std::vector<std::string> names = attr_strings(n, "activations");
  if (names.empty()) {
    const char* dflt[3] = {cell == Cell::kRnn ? "Tanh" : "Sigmoid", "Tanh", "Tanh"};
    for (int d = 0; d < num_dir; ++d)
      for (int k = 0; k < per_dir; ++k) names.emplace_back(dflt[k]);
  } else if (static_cast<int>(names.size()) == per_dir && num_dir == 2) {
    const auto copy = names;
    names.insert(names.end(), copy.begin(), copy.end());
  }
  KILN_CHECK(static_cast<int>(names.size()) == per_dir * num_dir, ErrorKind::kBadModel,
             "{}expected {} activations, got {}", n.where(), per_dir * num_dir, names.size());
  const std::vector<float> alphas = attr_floats(n, "activation_alpha");
  const std::vector<float> betas = attr_floats(n, "activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<Act> acts;
  for (const std::string& raw : names) {
    std::string s = raw;
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // name, kind, whether alpha / beta are used, and their defaults
    struct Entry {
      const char* name;
      Act::Kind kind;
      bool alpha, beta;
      double da, db;
    };
    static const Entry kTable[] = {
        {"relu", Act::kRelu, false, false, 0, 0},
        {"tanh", Act::kTanh, false, false, 0, 0},
        {"sigmoid", Act::kSigmoid, false, false, 0, 0},
        {"affine", Act::kAffine, true, true, 1, 0},
        {"leakyrelu", Act::kLeakyRelu, true, false, 0.01, 0},
        {"thresholdedrelu", Act::kThresholdedRelu, true, false, 1, 0},
        {"scaledtanh", Act::kScaledTanh, true, true, 1, 1},
        {"hardsigmoid", Act::kHardSigmoid, true, true, 0.2, 0.5},
        {"elu", Act::kElu, true, false, 1, 0},
        {"softsign", Act::kSoftsign, false, false, 0, 0},
        {"softplus", Act::kSoftplus, false, false, 0, 0},
    };
    const Entry* e = nullptr;
    for (const Entry& t : kTable)
      if (s == t.name) e = &t;
    if (!e) fail(ErrorKind::kUnsupported, "{}unknown activation '{}'", n.where(), raw);
    Act a;
    a.kind = e->kind;
    a.alpha = e->alpha && ai < alphas.size() ? alphas[ai++] : e->da;
    a.beta = e->beta && bi < betas.size() ? betas[bi++] : e->db;
    acts.push_back(a);
  }
  return acts;
}

int num_directions(const Node& n) {
  const std::string dir = attr_string(n, "direction", "forward");
  if (dir == "forward" || dir == "reverse") return 1;
  if (dir == "bidirectional") return 2;
  fail(ErrorKind::kBadModel, "{}unknown direction '{}'", n.where(), dir);
}

// ---------------------------------------------------------------------------------------------
// Shape inference: X [S,B,I] (layout 0) or [B,S,I] (layout 1).

void infer_recurrent(InferContext& ctx, Cell cell) {
  const Node& n = ctx.node();
  const int num_dir = num_directions(n);
  const int layout = static_cast<int>(attr_int(n, "layout", 0));
  Dim seq, batch, hidden;
  if (auto h = attr_int_opt(n, "hidden_size")) hidden = *h;
  const auto& xs = ctx.input_shape(0);
  if (xs) {
    if (xs->size() != 3) ctx.fail_here(fmt::format("X must have rank 3, got {}", xs->size()));
    seq = (*xs)[layout ? 1 : 0];
    batch = (*xs)[layout ? 0 : 1];
  }
  if (hidden.is_unknown() && ctx.input_shape(2) && ctx.input_shape(2)->size() == 3)
    hidden = (*ctx.input_shape(2))[2];
  const DataType dt = ctx.input_dtype(0);
  if (ctx.has_output(0)) {
    Shape y =
        layout ? Shape{batch, seq, Dim(num_dir), hidden} : Shape{seq, Dim(num_dir), batch, hidden};
    ctx.set_output(0, dt, y);
  }
  Shape yh = layout ? Shape{batch, Dim(num_dir), hidden} : Shape{Dim(num_dir), batch, hidden};
  if (ctx.has_output(1)) ctx.set_output(1, dt, yh);
  if (cell == Cell::kLstm && ctx.has_output(2)) ctx.set_output(2, dt, yh);
}

// ---------------------------------------------------------------------------------------------
// The kernel, on compute type C, reading and writing T.

template <typename T>
std::vector<compute_t<T>> load(const Tensor& t) {
  using C = compute_t<T>;
  std::vector<C> v(static_cast<size_t>(t.numel()));
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<C>(p[i]);
  return v;
}

template <typename T>
void run_recurrent_typed(KernelContext& ctx, Cell cell) {
  using C = compute_t<T>;
  const Node& n = ctx.node();
  const int num_dir = num_directions(n);
  const bool reverse_only = attr_string(n, "direction", "forward") == "reverse";
  const int layout = static_cast<int>(attr_int(n, "layout", 0));
  const int G = gates_of(cell);
  const Tensor& X = ctx.input(0);
  const Tensor& W = ctx.input(1);
  const Tensor& R = ctx.input(2);
  if (X.rank() != 3 || W.rank() != 3 || R.rank() != 3) ctx.fail_here("X, W and R must have rank 3");
  const int64_t S = layout ? X.dim(1) : X.dim(0);
  const int64_t B = layout ? X.dim(0) : X.dim(1);
  const int64_t I = X.dim(2);
  const int64_t H = attr_int(n, "hidden_size", R.dim(2));
  auto expect = [&](const Tensor& t, std::vector<int64_t> dims, const char* name) {
    if (t.dims() != dims)
      ctx.fail_here(fmt::format("{} has shape {}, expected {}", name, dims_to_string(t.dims()),
                                dims_to_string(dims)));
    if (t.dtype() != X.dtype()) ctx.fail_here(fmt::format("{} has a different type from X", name));
  };
  expect(W, {num_dir, G * H, I}, "W");
  expect(R, {num_dir, G * H, H}, "R");
  const auto x = load<T>(X), w = load<T>(W), r = load<T>(R);
  std::vector<C> bias(static_cast<size_t>(num_dir * 2 * G * H), C(0));
  if (ctx.has_input(3)) {
    expect(ctx.input(3), {num_dir, 2 * G * H}, "B");
    bias = load<T>(ctx.input(3));
  }
  std::vector<int64_t> lens(B, S);
  if (ctx.has_input(4)) {
    const Tensor& sl = ctx.input(4);
    if (sl.numel() != B) ctx.fail_here("sequence_lens must have batch_size entries");
    for (int64_t b = 0; b < B; ++b) {
      lens[b] = sl.get_i64(b);
      if (lens[b] < 0 || lens[b] > S)
        ctx.fail_here(fmt::format("sequence length {} out of range [0, {}]", lens[b], S));
    }
  }
  const std::vector<int64_t> state_dims =
      layout ? std::vector<int64_t>{B, num_dir, H} : std::vector<int64_t>{num_dir, B, H};
  auto state_at = [&](int64_t d, int64_t b) -> int64_t {
    return layout ? (b * num_dir + d) * H : (d * B + b) * H;
  };
  std::vector<C> h0(static_cast<size_t>(num_dir * B * H), C(0)), c0 = h0;
  if (ctx.has_input(5)) {
    expect(ctx.input(5), state_dims, "initial_h");
    h0 = load<T>(ctx.input(5));
  }
  std::vector<C> peep(static_cast<size_t>(num_dir * 3 * H), C(0));
  if (cell == Cell::kLstm) {
    if (ctx.has_input(6)) {
      expect(ctx.input(6), state_dims, "initial_c");
      c0 = load<T>(ctx.input(6));
    }
    if (ctx.has_input(7)) {
      expect(ctx.input(7), {num_dir, 3 * H}, "P");
      peep = load<T>(ctx.input(7));
    }
  }
  const std::vector<Act> acts = parse_activations(n, cell, num_dir);
  const std::optional<float> clip = attr_float_opt(n, "clip");
  const bool lbr = attr_int(n, "linear_before_reset", 0) != 0;
  const bool input_forget = attr_int(n, "input_forget", 0) != 0;
  auto clipped = [&](C v) -> C {
    if (!clip) return v;
    const C c = static_cast<C>(*clip);
    return std::max(-c, std::min(c, v));
  };

  const std::vector<int64_t> y_dims =
      layout ? std::vector<int64_t>{B, S, num_dir, H} : std::vector<int64_t>{S, num_dir, B, H};
  Tensor Y(X.dtype(), y_dims), Yh(X.dtype(), state_dims), Yc(X.dtype(), state_dims);
  T* y = Y.data<T>();
  T* yh = Yh.data<T>();
  T* yc = Yc.data<T>();
  auto y_at = [&](int64_t t, int64_t d, int64_t b) -> int64_t {
    return layout ? ((b * S + t) * num_dir + d) * H : ((t * num_dir + d) * B + b) * H;
  };
  auto x_at = [&](int64_t t, int64_t b) -> int64_t {
    return layout ? (b * S + t) * I : (t * B + b) * I;
  };

  std::vector<C> h(H), c(H), xw(G * H), hr(G * H), hnew(H), cnew(H);
  for (int d = 0; d < num_dir; ++d) {
    const bool rev = reverse_only || d == 1;
    const C* wd = w.data() + d * G * H * I;
    const C* rd = r.data() + d * G * H * H;
    const C* wb = bias.data() + d * 2 * G * H;
    const C* rb = wb + G * H;
    const C* pd = peep.data() + d * 3 * H;
    const Act* act = acts.data() + d * acts_of(cell);
    for (int64_t b = 0; b < B; ++b) {
      std::copy_n(h0.begin() + state_at(d, b), H, h.begin());
      std::copy_n(c0.begin() + state_at(d, b), H, c.begin());
      for (int64_t s = 0; s < lens[b]; ++s) {
        const int64_t t = rev ? lens[b] - 1 - s : s;
        const C* xt = x.data() + x_at(t, b);
        // xw = x W^T + Wb ; hr = h R^T + Rb
        for (int64_t g = 0; g < G * H; ++g) {
          C acc = wb[g];
          const C* wr = wd + g * I;
          for (int64_t i = 0; i < I; ++i) acc += xt[i] * wr[i];
          xw[g] = acc;
          C acc2 = rb[g];
          const C* rr = rd + g * H;
          if (!(cell == Cell::kGru && !lbr && g >= 2 * H))
            for (int64_t j = 0; j < H; ++j) acc2 += h[j] * rr[j];
          hr[g] = acc2;
        }
        if (cell == Cell::kRnn) {
          for (int64_t k = 0; k < H; ++k) hnew[k] = act[0](clipped(xw[k] + hr[k]));
        } else if (cell == Cell::kGru) {
          // gates z, r, h
          std::vector<C>& zt = cnew;  // reuse as z
          std::vector<C> rt(H);
          for (int64_t k = 0; k < H; ++k) {
            zt[k] = act[0](clipped(xw[k] + hr[k]));
            rt[k] = act[0](clipped(xw[H + k] + hr[H + k]));
          }
          for (int64_t k = 0; k < H; ++k) {
            C pre;
            if (lbr) {
              pre = xw[2 * H + k] + rt[k] * hr[2 * H + k];
            } else {
              // (r . h) Rh^T + Rbh
              C acc = rb[2 * H + k];
              const C* rr = rd + (2 * H + k) * H;
              for (int64_t j = 0; j < H; ++j) acc += rt[j] * h[j] * rr[j];
              pre = xw[2 * H + k] + acc;
            }
            const C ht = act[1](clipped(pre));
            hnew[k] = (C(1) - zt[k]) * ht + zt[k] * h[k];
          }
        } else {
          // gates i, o, f, c; peepholes i, o, f
          for (int64_t k = 0; k < H; ++k) {
            const C it = act[0](clipped(xw[k] + hr[k] + pd[k] * c[k]));
            C ft = act[0](clipped(xw[2 * H + k] + hr[2 * H + k] + pd[2 * H + k] * c[k]));
            if (input_forget) ft = C(1) - it;
            const C ct = act[1](clipped(xw[3 * H + k] + hr[3 * H + k]));
            cnew[k] = ft * c[k] + it * ct;
            const C ot = act[0](clipped(xw[H + k] + hr[H + k] + pd[H + k] * cnew[k]));
            hnew[k] = ot * act[2](cnew[k]);
          }
          c = cnew;
        }
        h = hnew;
        T* yt = y + y_at(t, d, b);
        for (int64_t k = 0; k < H; ++k) yt[k] = T(h[k]);
      }
      for (int64_t k = 0; k < H; ++k) {
        yh[state_at(d, b) + k] = T(h[k]);
        yc[state_at(d, b) + k] = T(c[k]);
      }
    }
  }
  ctx.set_output(0, std::move(Y));
  ctx.set_output(1, std::move(Yh));
  if (cell == Cell::kLstm) ctx.set_output(2, std::move(Yc));
}

void run_recurrent(KernelContext& ctx, Cell cell) {
  visit<KILN_FLOAT_TYPES>(ctx.node(), ctx.input(0).dtype(),
                          [&]<typename T>() { run_recurrent_typed<T>(ctx, cell); });
}

OpSchema& common_attrs(OpSchema& s) {
  return s.attr("activation_alpha", AttrKind::kFloats)
      .attr("activation_beta", AttrKind::kFloats)
      .attr("activations", AttrKind::kStrings)
      .attr("clip", AttrKind::kFloat)
      .attr("direction", AttrKind::kString)
      .attr("hidden_size", AttrKind::kInt)
      .attr("layout", AttrKind::kInt)
      .attr("output_sequence", AttrKind::kInt);  // opsets 1-6, no effect on the outputs
}

}  // namespace

void register_control_rnn_ops(OpRegistry& r) {
  common_attrs(r.add("", "RNN").versions(1).inputs(3, 6).outputs(0, 2))
      .shape([](InferContext& c) { infer_recurrent(c, Cell::kRnn); })
      .run([](KernelContext& c) { run_recurrent(c, Cell::kRnn); });
  common_attrs(r.add("", "GRU").versions(1).inputs(3, 6).outputs(0, 2))
      .attr("linear_before_reset", AttrKind::kInt)
      .shape([](InferContext& c) { infer_recurrent(c, Cell::kGru); })
      .run([](KernelContext& c) { run_recurrent(c, Cell::kGru); });
  common_attrs(r.add("", "LSTM").versions(1).inputs(3, 8).outputs(0, 3))
      .attr("input_forget", AttrKind::kInt)
      .shape([](InferContext& c) { infer_recurrent(c, Cell::kLstm); })
      .run([](KernelContext& c) { run_recurrent(c, Cell::kLstm); });
}

}  // namespace kiln
