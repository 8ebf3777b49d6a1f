#include "ops/window_geometry.h"

#include <algorithm>

#include <fmt/format.h>

#include "ops/attrs.h"
#include "ops/nn_common.h"
#include "support/checked_math.h"

namespace kiln::nn {

namespace {

// Both forms share these: on a malformed window they return nullopt with *error saying why (the
// throwing form prefixes the node and raises it).
std::optional<Window> parse_window(const Node& n, int nsp, const std::optional<std::vector<int64_t>>& kernel,
                                   bool ceil_mode_attr, std::string* error) {
  Window w;
  w.nsp = nsp;
  bool ok = true;
  auto check = [&](bool cond, const std::string& what) {
    if (!cond && ok) {
      *error = what;
      ok = false;
    }
    return ok;
  };
  auto ks = attr_ints_opt(n, "kernel_shape");
  if (ks) {
    if (!check(static_cast<int>(ks->size()) == nsp,
               fmt::format("kernel_shape has {} values for {} spatial dims", ks->size(), nsp)))
      return std::nullopt;
    if (kernel && !check(*kernel == *ks, fmt::format("kernel_shape {} differs from the weight's {}",
                                                     dims_to_string(*ks), dims_to_string(*kernel))))
      return std::nullopt;
    w.k = *ks;
  } else if (kernel) {
    if (!check(static_cast<int>(kernel->size()) == nsp,
               fmt::format("the weight has {} spatial dims, the input {}", kernel->size(), nsp)))
      return std::nullopt;
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
  if (!ok) return std::nullopt;
  for (int i = 0; i < nsp; ++i) {
    check(w.s[i] >= 1 && w.s[i] <= kMax, "strides must be in [1, 2^31]");
    check(w.d[i] >= 1 && w.d[i] <= kMax, "dilations must be in [1, 2^31]");
    if (ok) check((w.k[i] - 1) * w.d[i] < (int64_t{1} << 40), "dilated kernel size above 2^40");
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
      if (!check(static_cast<int>(pads.size()) == 2 * nsp,
                 fmt::format("pads has {} values for {} spatial dims", pads.size(), nsp)))
        return std::nullopt;
      for (int i = 0; i < nsp; ++i) {
        w.pb[i] = pads[i];
        w.pe[i] = pads[i + nsp];
        check(w.pb[i] >= 0 && w.pe[i] >= 0 && w.pb[i] <= kMax && w.pe[i] <= kMax,
              "pads must be in [0, 2^31]");
      }
    }
  }
  if (ceil_mode_attr) w.ceil = attr_int(n, "ceil_mode") != 0;  // pools only
  if (!ok) return std::nullopt;
  return w;
}

std::optional<int64_t> output_size(Window& w, int i, int64_t in, std::string* error) {
  const int64_t s = w.s[i], ek = w.eff_k(i);
  if (in < 0) {
    *error = fmt::format("negative input size {}", in);
    return std::nullopt;
  }
  if (!checked_add(in, int64_t{1} << 42)) {  // keeps the sums below in range
    *error = fmt::format("size arithmetic overflows ({} + {})", in, int64_t{1} << 42);
    return std::nullopt;
  }
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
  if (span < 0) {
    *error = fmt::format("input size {} (padded {}) is smaller than the window {} in spatial dim {}", in,
                         in + w.pb[i] + w.pe[i], ek, i);
    return std::nullopt;
  }
  if (!w.ceil) return span / s + 1;
  int64_t out = (span + s - 1) / s + 1;
  // the last window must start inside the input or its start padding
  if ((out - 1) * s >= in + w.pb[i]) --out;
  return out;
}

}  // namespace

std::optional<Window> read_window(const Node& n, int nsp, const std::optional<std::vector<int64_t>>& kernel,
                                  bool ceil_mode_attr) {
  std::string error;
  auto w = parse_window(n, nsp, kernel, ceil_mode_attr, &error);
  if (!error.empty()) fail(ErrorKind::kBadModel, "{}{}", n.where(), error);
  return w;
}

int64_t window_out(const Node& n, Window& w, int i, int64_t in, ErrorKind kind) {
  std::string error;
  const auto out = output_size(w, i, in, &error);
  if (!out) fail(kind, "{}{}", n.where(), error);
  return *out;
}

std::optional<WindowFit> fit_window(const Node& n, const std::vector<int64_t>& in,
                                    const std::optional<std::vector<int64_t>>& kernel, bool ceil_mode_attr) {
  std::string error;
  auto w = parse_window(n, static_cast<int>(in.size()), kernel, ceil_mode_attr, &error);
  if (!w) return std::nullopt;
  WindowFit fit{.window = std::move(*w), .out = {}};
  for (size_t i = 0; i < in.size(); ++i) {
    const auto out = output_size(fit.window, static_cast<int>(i), in[i], &error);
    if (!out) return std::nullopt;
    fit.out.push_back(*out);
  }
  return fit;
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

}  // namespace kiln::nn
