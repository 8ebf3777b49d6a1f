#include "report/chart_scale.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln {

LinearScale::LinearScale(double lo, double hi, double from, double to)
    : lo_(lo), hi_(hi > lo ? hi : lo + 1), from_(from), to_(to) {}

double LinearScale::operator()(double v) const {
  return from_ + (v - lo_) / (hi_ - lo_) * (to_ - from_);
}

std::vector<double> LinearScale::ticks(int count) const {
  const double raw = (hi_ - lo_) / std::max(count, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (double v = std::ceil(lo_ / step) * step; v <= hi_ + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

LogScale::LogScale(double lo, double hi, double from, double to)
    : lo_(lo > 0 ? lo : 1e-12), hi_(hi > lo_ ? hi : lo_ * 10), from_(from), to_(to) {}

double LogScale::operator()(double v) const {
  if (v <= 0) v = lo_;
  return from_ + (std::log10(v) - std::log10(lo_)) / (std::log10(hi_) - std::log10(lo_)) *
                     (to_ - from_);
}

std::vector<double> LogScale::ticks() const {
  std::vector<double> out;
  for (int e = static_cast<int>(std::ceil(std::log10(lo_) - 1e-9));
       e <= static_cast<int>(std::floor(std::log10(hi_) + 1e-9)); ++e)
    out.push_back(std::pow(10.0, e));
  return out;
}

std::pair<double, double> decade_bounds(double lo, double hi) {
  return {std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi)))};
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  const char* suffix = "";
  if (a >= 1e12) { v /= 1e12; suffix = "T"; }
  else if (a >= 1e9) { v /= 1e9; suffix = "G"; }
  else if (a >= 1e6) { v /= 1e6; suffix = "M"; }
  else if (a >= 1e3) { v /= 1e3; suffix = "k"; }
  std::string s = fmt::format("{:.3g}", v);
  return s + suffix;
}

}  // namespace kiln
