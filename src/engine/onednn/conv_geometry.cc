#include "engine/onednn/conv_geometry.h"

#include "ops/attrs.h"
#include "ops/window_geometry.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

bool all_positive(const std::vector<int64_t>& d) {
  for (int64_t v : d)
    if (v <= 0) return false;
  return true;
}

}  // namespace

std::optional<ConvGeometry> conv_geometry(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.has_input(1) || f.dtype(n.inputs[0]) != DataType::kFloat) return {};
  // The weight's dims only: a weight decoded from int8 (DequantizeLinear) stays undecoded.
  const Value* w = n.inputs[1];
  const std::vector<int64_t>* wd = f.dims(w);
  const Tensor* b = n.has_input(2) ? f.constant(n.inputs[2]) : nullptr;
  if (!f.has_constant(w) || !wd || wd->empty() || f.dtype(w) != DataType::kFloat || (n.has_input(2) && !b)) return {};
  if (b && (b->dtype() != DataType::kFloat || b->numel() != (*wd)[0])) return {};
  return conv_geometry_of(n, f.dims(n.inputs[0]), *wd);
}

std::optional<ConvGeometry> conv_geometry_of(const Node& n, const std::vector<int64_t>* x,
                                             const std::vector<int64_t>& w) {
  if (!x) return {};
  const int rank = static_cast<int>(x->size());
  if (rank < 3 || rank > 5 || static_cast<int>(w.size()) != rank || !all_positive(*x) || !all_positive(w))
    return {};
  const int64_t G = attr_int(n, "group"), C = (*x)[1], M = w[0];
  if (G < 1 || C % G != 0 || C / G != w[1] || M % G != 0) return {};
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const auto fit = nn::fit_window(n, std::vector<int64_t>(x->begin() + 2, x->end()), kernel);
  if (!fit) return {};  // the reference kernel reports it
  ConvGeometry g;
  g.dst = {(*x)[0], M};
  g.dst.insert(g.dst.end(), fit->out.begin(), fit->out.end());
  const nn::Window& win = fit->window;
  for (int i = 0; i < win.nsp; ++i) {
    g.strides.push_back(win.s[i]);
    g.dilations.push_back(win.d[i] - 1);
    g.pad_l.push_back(win.pb[i]);
    g.pad_r.push_back(win.pe[i]);
  }
  if (!all_positive(g.dst)) return {};
  g.src = *x;
  g.weights = w;
  if (G > 1) {
    g.weights[0] = M / G;
    g.weights.insert(g.weights.begin(), G);
  }
  g.channels_out = M;
  return g;
}

}  // namespace kiln::engine
