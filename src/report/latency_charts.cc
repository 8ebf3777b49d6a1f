// The histogram and the in-order series of samples (charts.h): how latencies spread and how they
// moved during a benchmark.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/chart_parts.h"
#include "report/charts.h"

namespace kiln {

using namespace chart_parts;

namespace {

constexpr double kLeft = 64;  // room for the y axis' tick labels and title

Legend legend_of(const std::vector<DistributionSeries>& series) {
  Legend legend;
  for (const DistributionSeries& s : series) legend.push_back({s.name, s.color});
  return legend;
}

size_t largest(const std::vector<DistributionSeries>& series) {
  size_t n = 0;
  for (const DistributionSeries& s : series) n = std::max(n, s.samples.size());
  return n;
}

// The range the bins cover: from the smallest sample to the largest within 1.5 interquartile
// ranges above the 75th percentile of all series together (Tukey's fence, as a box plot's
// whisker). One outlier would otherwise stretch the bins until every other run fell into one.
struct BinRange {
  double lo = 0, hi = 1;
  bool overflow = false;  // samples lie beyond hi
};

BinRange bin_range(const std::vector<DistributionSeries>& series) {
  std::vector<double> all;
  for (const DistributionSeries& s : series)
    for (double v : s.samples)
      if (std::isfinite(v)) all.push_back(v);
  BinRange r;
  if (all.empty()) return r;
  std::sort(all.begin(), all.end());
  const double fence = quantile(all, 0.75) + 1.5 * (quantile(all, 0.75) - quantile(all, 0.25));
  r.lo = all.front();
  r.hi = *(std::upper_bound(all.begin(), all.end(), fence) - 1);  // the largest within the fence
  r.overflow = all.back() > r.hi;
  if (r.hi - r.lo < 1e-9 * std::max(std::abs(r.hi), 1.0)) {  // one value: a bin around it
    const double pad = std::max(std::abs(r.hi) * 0.05, 1e-6);
    r.lo -= pad;
    r.hi += pad;
  }
  return r;
}

}  // namespace

std::string histogram_svg(const HistogramChart& c) {
  const BinRange range = bin_range(c.series);
  const double lo = range.lo, hi = range.hi;
  const int bins = c.bins > 0 ? c.bins
                              : std::clamp(static_cast<int>(std::ceil(std::sqrt(
                                               static_cast<double>(largest(c.series))))),
                                           5, 40);
  const double bin_w = (hi - lo) / bins;
  // Per series: a count per bin, then the overflow bin's (samples beyond hi) last.
  std::vector<std::vector<int>> counts(c.series.size(), std::vector<int>(bins + 1, 0));
  std::vector<double> largest_beyond(c.series.size(), hi);
  int most = 1;
  for (size_t s = 0; s < c.series.size(); ++s)
    for (double v : c.series[s].samples) {
      if (!std::isfinite(v)) continue;
      int b = std::clamp(static_cast<int>((v - lo) / bin_w), 0, bins - 1);
      if (v > hi) {
        b = bins;
        largest_beyond[s] = std::max(largest_beyond[s], v);
      }
      most = std::max(most, ++counts[s][b]);
    }

  const Legend legend = c.series.size() > 1 ? legend_of(c.series) : Legend{};
  const double legend_h = layout_legend(legend, 12, c.width - 24, nullptr, 0);
  const double top = kTitleHeight + legend_h, bottom = top + c.height;
  const double left = kLeft, right = c.width - 24;
  // The overflow bin stands apart at the right, as wide as a bin, off the value axis.
  const double slot = (right - left) / (bins + (range.overflow ? 1.5 : 0));
  const double axis_right = range.overflow ? right - 1.5 * slot : right;
  Svg svg(c.width, bottom + kAxisHeight, c.title);
  draw_title(svg, c.title);
  layout_legend(legend, 12, c.width - 24, &svg, kTitleHeight - 4);
  const LinearScale x(lo, hi, left, axis_right);
  const LinearScale y(0, most * 1.08, bottom, top);
  draw_x_axis(svg, x.ticks(8), x, top, bottom, left, axis_right, c.value_axis);
  std::vector<double> count_ticks;
  for (double t : y.ticks(5))
    if (t == std::floor(t)) count_ticks.push_back(t);  // whole runs only
  draw_y_axis(svg, count_ticks, y, top, bottom, left, right, "samples");
  if (range.overflow) {
    const double x0 = right - slot;
    svg.line(x0, bottom, right, bottom, kAxis);
    int beyond = 0;
    for (const auto& per_bin : counts) beyond += per_bin[bins];
    svg.text(x0 + slot / 2, bottom + 16, "> " + tick_label(hi),
             {.anchor = TextStyle::Anchor::kMiddle, .size = 11});
    svg.text(x0 + slot / 2, bottom + 30, fmt::format("{} beyond", beyond),
             {.anchor = TextStyle::Anchor::kMiddle, .size = 11, .fill = "#444"});
  }

  const double k = static_cast<double>(std::max<size_t>(c.series.size(), 1));
  for (int b = 0; b <= bins; ++b) {
    const bool beyond = b == bins;
    if (beyond && !range.overflow) break;
    const double b_lo = lo + bin_w * b, b_hi = b_lo + bin_w;
    const double x0 = (beyond ? right - slot : x(b_lo)) + 0.5;
    const double span = (beyond ? slot : x(b_hi) - x(b_lo)) - 1;
    for (size_t s = 0; s < c.series.size(); ++s) {
      const int n = counts[s][b];
      if (n == 0) continue;
      const double w = span / k;
      const std::string where =
          beyond ? fmt::format("beyond {} (up to {})", tick_label(hi), tick_label(largest_beyond[s]))
                 : fmt::format("in [{}, {})", tick_label(b_lo), tick_label(b_hi));
      svg.rect(x0 + w * static_cast<double>(s), y(n), std::max(w - 0.5, 1.0), bottom - y(n),
               c.series[s].color,
               fmt::format("{}: {} of {} samples {}", c.series[s].name, n,
                           c.series[s].samples.size(), where));
    }
  }
  return svg.str();
}

std::string series_svg(const SeriesChart& c) {
  double hi = 0;
  for (const DistributionSeries& s : c.series)
    for (double v : s.samples)
      if (std::isfinite(v)) hi = std::max(hi, v);
  const size_t n = largest(c.series);
  const Legend legend = c.series.size() > 1 ? legend_of(c.series) : Legend{};
  const double legend_h = layout_legend(legend, 12, c.width - 24, nullptr, 0);
  const double top = kTitleHeight + legend_h, bottom = top + c.height;
  const double left = kLeft, right = c.width - 24;
  Svg svg(c.width, bottom + kAxisHeight, c.title);
  draw_title(svg, c.title);
  layout_legend(legend, 12, c.width - 24, &svg, kTitleHeight - 4);
  const LinearScale x(1, std::max<double>(static_cast<double>(n), 2), left, right);
  const LinearScale y(0, hi > 0 ? hi * 1.08 : 1, bottom, top);
  std::vector<double> index_ticks;
  for (double t : x.ticks(10))
    if (t == std::floor(t)) index_ticks.push_back(t);
  draw_x_axis(svg, index_ticks, x, top, bottom, left, right, c.index_axis);
  draw_y_axis(svg, y.ticks(5), y, top, bottom, left, right, c.value_axis);

  const bool dots = n <= 400;  // beyond that the dots merge into the line
  for (const DistributionSeries& s : c.series) {
    std::vector<std::pair<double, double>> points;
    for (size_t i = 0; i < s.samples.size(); ++i)
      if (std::isfinite(s.samples[i]))
        points.emplace_back(x(static_cast<double>(i + 1)), y(s.samples[i]));
    svg.polyline(points, s.color, 1.5);
    if (!dots) continue;
    for (size_t i = 0; i < s.samples.size(); ++i)
      if (std::isfinite(s.samples[i]))
        svg.circle(x(static_cast<double>(i + 1)), y(s.samples[i]), 2.4, s.color,
                   fmt::format("{}: sample {}: {}", s.name, i + 1, tick_label(s.samples[i])));
  }
  return svg.str();
}

}  // namespace kiln
