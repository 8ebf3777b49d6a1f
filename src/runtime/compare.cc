#include "runtime/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>

#include "ir/scalar_types.h"

namespace kiln {

namespace {

Comparison compare_tensors(const Tensor& a, const Tensor& b, const Tolerance& tol, bool shape_only) {
  Comparison c;
  if (a.dtype() != b.dtype()) {
    c.equal = false;
    c.reason = fmt::format("dtype {} expected {}", dtype_name(a.dtype()), dtype_name(b.dtype()));
    return c;
  }
  if (a.dims() != b.dims()) {
    c.equal = false;
    c.reason = fmt::format("shape {} expected {}", dims_to_string(a.dims()), dims_to_string(b.dims()));
    return c;
  }
  if (shape_only) return c;
  if (a.dtype() == DataType::kString) {
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (a.strings()[i] != b.strings()[i]) {
        c.equal = false;
        c.reason = fmt::format("element {}: '{}' expected '{}'", i, a.strings()[i], b.strings()[i]);
        return c;
      }
    }
    return c;
  }
  const bool complex = is_complex(a.dtype());
  const bool exact = !is_float(a.dtype()) && !complex;
  const int64_t n = complex ? a.numel() * 2 : a.numel();
  auto element = [&](const Tensor& t, int64_t i) -> double {
    if (a.dtype() == DataType::kComplex64) return t.data<float>()[i];
    if (a.dtype() == DataType::kComplex128) return t.data<double>()[i];
    return t.get_f64(i);
  };
  double atol = tol.atol;
  if (tol.atol_scales && !exact) {
    double peak = 1;
    for (int64_t i = 0; i < n; ++i)
      if (const double y = std::fabs(element(b, i)); std::isfinite(y)) peak = std::max(peak, y);
    atol *= peak;
  }
  int64_t worst = -1;
  double worst_excess = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = element(a, i), y = element(b, i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) { c.equal = false; worst = i; break; }
      continue;
    }
    const double err = std::fabs(x - y);
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (y != 0) c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(y));
    const double allowed = exact ? 0 : atol + tol.rtol * std::fabs(y);
    if (err > allowed || std::isnan(x) != std::isnan(y)) {
      c.equal = false;
      if (worst < 0 || err - allowed > worst_excess || std::isnan(err)) {
        worst = i;
        worst_excess = err - allowed;
      }
    }
  }
  if (!c.equal)
    c.reason = fmt::format("element {} is {} expected {} (max abs error {:.3g})", worst,
                           element(a, worst), element(b, worst), c.max_abs_error);
  return c;
}

}  // namespace

Comparison compare_values(const RtValue& actual, const RtValue& expected, const Tolerance& tol,
                          bool shape_only) {
  if (actual.kind != expected.kind) {
    Comparison c;
    c.equal = false;
    c.reason = fmt::format("got {} expected {}", actual.describe(), expected.describe());
    return c;
  }
  if (actual.is_tensor()) return compare_tensors(actual.tensor, expected.tensor, tol, shape_only);
  Comparison total;
  if (actual.is_sequence()) {
    if (actual.sequence.size() != expected.sequence.size()) {
      total.equal = false;
      total.reason = fmt::format("sequence of {} expected {}", actual.sequence.size(),
                                 expected.sequence.size());
      return total;
    }
    for (size_t i = 0; i < actual.sequence.size(); ++i) {
      Comparison c = compare_tensors(actual.sequence[i], expected.sequence[i], tol, shape_only);
      total.max_abs_error = std::max(total.max_abs_error, c.max_abs_error);
      total.max_rel_error = std::max(total.max_rel_error, c.max_rel_error);
      if (!c.equal && total.equal) {
        total.equal = false;
        total.reason = fmt::format("sequence item {}: {}", i, c.reason);
      }
    }
  }
  return total;
}

}  // namespace kiln
