// Softmax, LogSoftmax, Hardmax. Before opset 13 they coerce the input to 2-D at `axis` (default 1)
// and work on rows of the flattened trailing dims; from 13 on they work along one axis (default
// -1).
#include <cmath>
#include <limits>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

enum class Kind { kSoftmax, kLogSoftmax, kHardmax };

void run_softmax(KernelContext& ctx, Kind kind) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const bool legacy = ctx.opset() < 13;
  const int rank = x.rank();
  const auto& d = x.dims();
  int64_t outer, len, inner;
  if (rank == 0) {
    outer = len = inner = 1;
  } else {
    const int axis = normalize_axis(n, attr_int(n, "axis", legacy ? 1 : -1), rank);
    outer = prod(d, 0, axis);
    if (legacy) {
      len = prod(d, axis, d.size());
      inner = 1;
    } else {
      len = d[axis];
      inner = prod(d, axis + 1, d.size());
    }
  }
  const std::vector<double> v = to_doubles(n, x);
  std::vector<double> y(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * len * inner + in;
      auto at = [&](int64_t k) { return base + k * inner; };
      if (len == 0) continue;
      double mx = -std::numeric_limits<double>::infinity();
      int64_t arg = 0;
      for (int64_t k = 0; k < len; ++k)
        if (v[at(k)] > mx) {
          mx = v[at(k)];
          arg = k;
        }
      if (kind == Kind::kHardmax) {
        for (int64_t k = 0; k < len; ++k) y[at(k)] = k == arg ? 1.0 : 0.0;
        continue;
      }
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(v[at(k)] - mx);
      const double lse = std::log(sum);
      for (int64_t k = 0; k < len; ++k) {
        const double s = v[at(k)] - mx;
        y[at(k)] = kind == Kind::kSoftmax ? std::exp(s) / sum : s - lse;
      }
    }
  ctx.set_output(0, from_doubles(n, x.dtype(), x.dims(), y));
}

void infer_softmax(InferContext& ctx) {
  const int rank = ctx.input_rank(0);
  if (rank > 0)
    normalize_axis(ctx.node(), attr_int(ctx.node(), "axis", ctx.opset() < 13 ? 1 : -1), rank);
  infer_same_as_input(ctx);
}

}  // namespace

void register_softmax(OpRegistry& r) {
  const std::pair<const char*, Kind> defs[] = {
      {"Softmax", Kind::kSoftmax}, {"LogSoftmax", Kind::kLogSoftmax}, {"Hardmax", Kind::kHardmax}};
  for (const auto& [name, kind] : defs) {
    const Kind k = kind;
    r.add("", name)
        .versions(1)
        .inputs(1, 1)
        .outputs(1, 1)
        .attr("axis", AttrKind::kInt)
        .shape(infer_softmax)
        .run([k](KernelContext& ctx) { run_softmax(ctx, k); });
  }
}

}  // namespace kiln::norm
