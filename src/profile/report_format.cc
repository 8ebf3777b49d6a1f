#include "profile/report_format.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln {

namespace {

// Three significant digits down to 0.001, never scientific.
std::string three_digits(double v) {
  const double a = std::abs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  if (a == 0) return "0";
  if (a >= 0.001) return fmt::format("{:.3f}", v);
  return v > 0 ? "<0.001" : ">-0.001";
}

}  // namespace

std::string format_ms(double ms) { return three_digits(ms) + " ms"; }

std::string format_percent(double share) { return fmt::format("{:.1f}%", share * 100); }

std::string format_count(double x) {
  const char* units[] = {"", " K", " M", " G", " T", " P"};
  int u = 0;
  while (std::abs(x) >= 1000 && u < 5) {
    x /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", x) : fmt::format("{:.2f}{}", x, units[u]);
}

std::string format_rate(double per_second) { return three_digits(per_second); }

std::string format_operand(const OperandShape& s) {
  if (!s.present) return s.bytes > 0 ? "seq" : "-";
  return fmt::format("{}[{}]", dtype_name(s.dtype), fmt::join(s.dims, ","));
}

std::string format_operands(const std::vector<OperandShape>& operands) {
  std::string out;
  for (const OperandShape& s : operands) {
    if (!s.present && s.bytes == 0) continue;
    out += (out.empty() ? "" : ", ") + format_operand(s);
  }
  return out;
}

}  // namespace kiln
