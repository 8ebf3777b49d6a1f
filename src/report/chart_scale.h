// Axes for charts: linear and logarithmic maps from data to pixels, with readable tick values.
#pragma once

#include <string>
#include <vector>

namespace kiln {

// Maps [lo, hi] onto [from, to] pixels (to < from for a y axis growing upward).
class LinearScale {
 public:
  LinearScale(double lo, double hi, double from, double to);
  double operator()(double v) const;
  // About `count` round values (1, 2 or 5 times a power of ten apart) inside [lo, hi].
  std::vector<double> ticks(int count = 5) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }

 private:
  double lo_, hi_, from_, to_;
};

// Maps [lo, hi] (both > 0) onto pixels by log10.
class LogScale {
 public:
  LogScale(double lo, double hi, double from, double to);
  double operator()(double v) const;
  // The powers of ten inside [lo, hi].
  std::vector<double> ticks() const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }

 private:
  double lo_, hi_, from_, to_;
};

// The enclosing powers of ten: [10^floor(log10 lo), 10^ceil(log10 hi)].
std::pair<double, double> decade_bounds(double lo, double hi);

// A tick label: "0", "0.01", "2.5", "40", "1.2k", "3M".
std::string tick_label(double v);

}  // namespace kiln
