// Op family: nn (see docs/ops.md for the contract every op follows). The ops live in nn_*.cc:
// nn_conv.cc (Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv), nn_pool.cc (pools,
// MaxUnpool), nn_matmul.cc (MatMul, Gemm, their integer forms, Einsum, Det), nn_quant.cc
// (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear), nn_attention.cc (Attention,
// RotaryEmbedding). This file holds their shared helpers (nn_common.h).
#include <algorithm>

#include "support/checked_math.h"

#include "ops/kernel_util.h"
#include "ops/nn_common.h"
#include "ops/op.h"

namespace kiln {

void register_nn_ops(OpRegistry& r) {
  register_nn_conv_ops(r);
  register_nn_pool_ops(r);
  register_nn_matmul_ops(r);
  register_nn_einsum_ops(r);
  register_nn_det_ops(r);
  register_nn_quant_ops(r);
  register_nn_attention_ops(r);
}

namespace nn {

Tensor convert_float(const Node& n, Tensor src, DataType to) {
  if (src.dtype() == to) return src;
  Tensor out(to, src.dims());
  visit<KILN_FLOAT_TYPES>(n, src.dtype(), [&]<typename S>() {
    visit<KILN_FLOAT_TYPES>(n, to, [&]<typename T>() {
      const S* s = src.data<S>();
      T* d = out.data<T>();
      for (int64_t i = 0; i < src.numel(); ++i) d[i] = from_num<T>(to_num<compute_t<S>>(s[i]));
    });
  });
  return out;
}

int64_t ck_add(const Node& n, int64_t a, int64_t b, ErrorKind kind) {
  auto r = checked_add(a, b);
  if (!r) fail(kind, "{}size arithmetic overflows ({} + {})", n.where(), a, b);
  return *r;
}

int64_t ck_mul(const Node& n, int64_t a, int64_t b, ErrorKind kind) {
  auto r = checked_mul(a, b);
  if (!r) fail(kind, "{}size arithmetic overflows ({} * {})", n.where(), a, b);
  return *r;
}

void check_scratch(const Node& n, const std::vector<int64_t>& dims, size_t elem_size) {
  std::vector<int64_t> d = dims;
  d.push_back(static_cast<int64_t>(elem_size));
  auto bytes = checked_product(d);
  if (!bytes || *bytes > allocation_cap())
    fail(ErrorKind::kRuntime, "{}a buffer of {} elements of {} bytes is above the allocation cap",
         n.where(), dims_to_string(dims), elem_size);
}

std::optional<Window> read_window(const Node& n, int nsp,
                                  const std::optional<std::vector<int64_t>>& kernel,
                                  bool ceil_mode_attr) {
  Window w;
  w.nsp = nsp;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) fail(ErrorKind::kBadModel, "{}{}", n.where(), what);
  };
  auto ks = attr_ints_opt(n, "kernel_shape");
  if (ks) {
    check(static_cast<int>(ks->size()) == nsp,
          fmt::format("kernel_shape has {} values for {} spatial dims", ks->size(), nsp));
    if (kernel)
      check(*kernel == *ks, fmt::format("kernel_shape {} differs from the weight's {}",
                                        dims_to_string(*ks), dims_to_string(*kernel)));
    w.k = *ks;
  } else if (kernel) {
    check(static_cast<int>(kernel->size()) == nsp,
          fmt::format("the weight has {} spatial dims, the input {}", kernel->size(), nsp));
    w.k = *kernel;
  } else {
    return std::nullopt;
  }
  // sizes from a hostile file stay far from int64 overflow in the window arithmetic
  constexpr int64_t kMax = int64_t{1} << 31;
  for (int64_t v : w.k) check(v >= 1 && v <= kMax, "kernel sizes must be in [1, 2^31]");
  w.s = attr_ints(n, "strides", std::vector<int64_t>(nsp, 1));
  w.d = attr_ints(n, "dilations", std::vector<int64_t>(nsp, 1));
  if (w.s.empty()) w.s.assign(nsp, 1);
  if (w.d.empty()) w.d.assign(nsp, 1);
  check(static_cast<int>(w.s.size()) == nsp,
        fmt::format("strides has {} values for {} spatial dims", w.s.size(), nsp));
  check(static_cast<int>(w.d.size()) == nsp,
        fmt::format("dilations has {} values for {} spatial dims", w.d.size(), nsp));
  for (int i = 0; i < nsp; ++i) {
    check(w.s[i] >= 1 && w.s[i] <= kMax, "strides must be in [1, 2^31]");
    check(w.d[i] >= 1 && w.d[i] <= kMax, "dilations must be in [1, 2^31]");
    check((w.k[i] - 1) * w.d[i] < (int64_t{1} << 40), "dilated kernel size above 2^40");
  }
  w.auto_pad = attr_string(n, "auto_pad", "NOTSET");
  check(w.auto_pad == "NOTSET" || w.auto_pad == "VALID" || w.auto_pad == "SAME_UPPER" ||
            w.auto_pad == "SAME_LOWER",
        "auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, not " + w.auto_pad);
  w.pb.assign(nsp, 0);
  w.pe.assign(nsp, 0);
  if (w.auto_pad == "NOTSET") {
    auto pads = attr_ints(n, "pads");
    if (!pads.empty()) {
      check(static_cast<int>(pads.size()) == 2 * nsp,
            fmt::format("pads has {} values for {} spatial dims", pads.size(), nsp));
      for (int i = 0; i < nsp; ++i) {
        w.pb[i] = pads[i];
        w.pe[i] = pads[i + nsp];
        check(w.pb[i] >= 0 && w.pe[i] >= 0 && w.pb[i] <= kMax && w.pe[i] <= kMax,
              "pads must be in [0, 2^31]");
      }
    }
  }
  if (ceil_mode_attr) w.ceil = attr_int(n, "ceil_mode") != 0;  // pools only
  return w;
}

int64_t window_out(const Node& n, Window& w, int i, int64_t in, ErrorKind kind) {
  const int64_t s = w.s[i], ek = w.eff_k(i);
  if (in < 0) fail(kind, "{}negative input size {}", n.where(), in);
  ck_add(n, in, int64_t{1} << 42, kind);  // keeps the sums below in range
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
    const int64_t out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
    if (w.auto_pad == "SAME_UPPER") {
      w.pb[i] = total / 2;
      w.pe[i] = total - total / 2;
    } else {
      w.pe[i] = total / 2;
      w.pb[i] = total - total / 2;
    }
    return out;
  }
  if (w.auto_pad == "VALID") w.pb[i] = w.pe[i] = 0;
  const int64_t span = in + w.pb[i] + w.pe[i] - ek;
  if (span < 0)
    fail(kind, "{}input size {} (padded {}) is smaller than the window {} in spatial dim {}",
         n.where(), in, in + w.pb[i] + w.pe[i], ek, i);
  if (!w.ceil) return span / s + 1;
  int64_t out = (span + s - 1) / s + 1;
  // the last window must start inside the input or its start padding
  if ((out - 1) * s >= in + w.pb[i]) --out;
  return out;
}

Dim dim_add(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    auto r = checked_add(a.value(), b.value());
    return r ? Dim(*r) : Dim();
  }
  return a + b;
}

Dim dim_mul(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    auto r = checked_mul(a.value(), b.value());
    return r ? Dim(*r) : Dim();
  }
  return a * b;
}

Dim add_const(const Dim& a, int64_t c) {
  if (a.is_known()) return dim_add(a, Dim(c));
  return c >= 0 ? a + Dim(c) : a - Dim(-c);
}

Dim window_out_dim(const Node& n, const Window& w, int i, const Dim& in) {
  if (in.is_known()) {
    Window c = w;
    return window_out(n, c, i, in.value(), ErrorKind::kBadModel);
  }
  if (in.is_unknown()) return {};
  const int64_t s = w.s[i], ek = w.eff_k(i);
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return Dim::ceil_div(in, s);
  const int64_t pads = w.auto_pad == "VALID" ? 0 : w.pb[i] + w.pe[i];
  if (s == 1) return add_const(in, pads - ek + 1);
  if (!w.ceil) return Dim::floor_div(add_const(in, pads - ek), s) + Dim(1);
  // ceil_mode: exact unless the last window could start in the end padding
  if (s + w.pe[i] > ek) return {};
  return Dim::ceil_div(add_const(in, pads - ek), s) + Dim(1);
}

Geom3 lift3(const Node& n, const Window& w, const std::vector<int64_t>& in,
            const std::vector<int64_t>& out) {
  if (w.nsp > 3 || w.nsp < 1)
    fail(ErrorKind::kUnsupported, "{}{} spatial dims (kiln handles 1 to 3)", n.where(), w.nsp);
  Geom3 g;
  const int sh = 3 - w.nsp;
  for (int j = 0; j < 3; ++j) {
    if (j < sh) {
      g.in[j] = g.out[j] = g.k[j] = g.s[j] = g.d[j] = 1;
      g.pb[j] = g.pe[j] = 0;
    } else {
      const int i = j - sh;
      g.in[j] = in[i];
      g.out[j] = out[i];
      g.k[j] = w.k[i];
      g.s[j] = w.s[i];
      g.d[j] = w.d[i];
      g.pb[j] = w.pb[i];
      g.pe[j] = w.pe[i];
    }
  }
  return g;
}

std::optional<std::vector<int64_t>> spatial_dims(const std::optional<Shape>& s) {
  if (!s || s->size() < 2) return std::nullopt;
  auto k = known_dims(Shape(s->begin() + 2, s->end()));
  return k;
}

}  // namespace nn
}  // namespace kiln
