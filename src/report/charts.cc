#include "report/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/chart_parts.h"

namespace kiln {

using namespace chart_parts;

namespace {

std::string value_label(double v) { return tick_label(v); }

}  // namespace

std::string category_color(int index) {
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#2f4b7c",
                                  "#a05195", "#665191"};
  const int n = static_cast<int>(std::size(palette));
  return index >= 0 && index < n ? palette[index] : kOtherColor;
}

std::string bar_chart_svg(const BarChart& c) {
  const size_t rows = c.rows.size();
  const size_t k = std::max<size_t>(c.series.size(), 1);
  const double row_h = k == 1 ? 22 : 8.0 * static_cast<double>(k) + 10;
  double label_w = 40;
  for (const std::string& r : c.rows) label_w = std::max(label_w, text_width(shorten(r, 32)));
  label_w = std::min(label_w, 230.0) + 12;
  Legend legend;
  if (c.series.size() > 1)
    for (const BarSeries& s : c.series) legend.push_back({s.name, s.color});
  const double legend_h = layout_legend(legend, 12, c.width - 24, nullptr, 0);
  const double top = kTitleHeight + legend_h;
  const double bottom = top + row_h * static_cast<double>(rows);
  Svg svg(c.width, bottom + kAxisHeight, c.title);
  draw_title(svg, c.title);
  layout_legend(legend, 12, c.width - 24, &svg, kTitleHeight - 4);

  double hi = 0;
  for (const BarSeries& s : c.series)
    for (double v : s.values) hi = std::max(hi, v);
  const double left = label_w, right = c.width - 64;
  const LinearScale x(0, hi > 0 ? hi : 1, left, right);
  draw_x_axis(svg, x.ticks(5), x, top, bottom, left, right, c.value_axis);

  const double bar_h = (row_h - 6) / static_cast<double>(k);
  for (size_t i = 0; i < rows; ++i) {
    const double y0 = top + row_h * static_cast<double>(i);
    svg.text(left - 8, y0 + row_h / 2 + 4, shorten(c.rows[i], 32),
             {.anchor = TextStyle::Anchor::kEnd, .size = 12});
    for (size_t s = 0; s < c.series.size(); ++s) {
      const BarSeries& ser = c.series[s];
      const double v = i < ser.values.size() ? ser.values[i] : 0;
      const std::string& color =
          k == 1 && i < c.row_colors.size() ? c.row_colors[i] : ser.color;
      const std::string tip = i < c.tooltips.size() && !c.tooltips[i].empty()
                                  ? c.tooltips[i]
                                  : fmt::format("{} ({}): {}", c.rows[i], ser.name, value_label(v));
      const double y = y0 + 3 + bar_h * static_cast<double>(s);
      svg.rect(left, y, x(v) - left, bar_h - 1, color, tip);
      svg.text(x(v) + 4, y + bar_h / 2 + 3.5, value_label(v), {.size = 10.5, .fill = "#555"});
    }
  }
  svg.line(left, top, left, bottom, kAxis);
  return svg.str();
}

std::string timeline_svg(const TimelineChart& c) {
  constexpr double kLane = 20;
  double label_w = 40;
  for (const std::string& l : c.lanes) label_w = std::max(label_w, text_width(shorten(l, 24)));
  label_w = std::min(label_w, 180.0) + 12;
  const double left = label_w, right = c.width - 24;
  const double top = kTitleHeight;
  const double bottom = top + kLane * static_cast<double>(c.lanes.size());
  const double legend_h = layout_legend(c.legend, 12, c.width - 24, nullptr, 0);
  Svg svg(c.width, bottom + kAxisHeight + legend_h + 4, c.title);
  draw_title(svg, c.title);

  double end = 0;
  for (const TimelineBar& b : c.bars) end = std::max(end, b.end);
  const LinearScale x(0, end > 0 ? end : 1, left, right);
  for (size_t i = 0; i < c.lanes.size(); ++i) {
    const double y = top + kLane * static_cast<double>(i);
    if (i % 2 == 0) svg.rect(left, y, right - left, kLane, "#f6f6f6");
    svg.text(left - 8, y + kLane / 2 + 4, shorten(c.lanes[i], 24),
             {.anchor = TextStyle::Anchor::kEnd, .size = 12});
  }
  draw_x_axis(svg, x.ticks(8), x, top, bottom, left, right, c.time_axis);
  for (const TimelineBar& b : c.bars) {
    if (b.lane < 0 || b.lane >= static_cast<int>(c.lanes.size())) continue;
    const double x0 = x(b.start);
    // A node too short to see still shows; neighbours keep a hairline gap between them.
    const double span = x(b.end) - x0;
    const double w = span > 2 ? span - 0.6 : std::max(span, 1.0);
    svg.rect(x0, top + kLane * b.lane + 3, w, kLane - 6, b.color, b.tooltip);
  }
  svg.line(left, top, left, bottom, kAxis);
  layout_legend(c.legend, 12, c.width - 24, &svg, bottom + kAxisHeight);
  return svg.str();
}

std::string roofline_svg(const RooflineChart& c) {
  const double peak = c.peak_gflops > 0 ? c.peak_gflops : 1;
  const double bw = c.peak_gbps > 0 ? c.peak_gbps : 1;
  const double ridge = peak / bw;
  double i_lo = ridge / 10, i_hi = ridge * 10, g_lo = peak / 1000, g_hi = peak * 1.5;
  std::vector<const RooflineDot*> dots;
  for (const RooflineDot& d : c.dots) {
    if (!(d.intensity > 0 && d.gflops > 0 && std::isfinite(d.intensity) && std::isfinite(d.gflops)))
      continue;
    dots.push_back(&d);
    i_lo = std::min(i_lo, d.intensity);
    i_hi = std::max(i_hi, d.intensity);
    g_lo = std::min(g_lo, d.gflops);
    g_hi = std::max(g_hi, d.gflops);
  }
  std::tie(i_lo, i_hi) = decade_bounds(i_lo, i_hi);
  std::tie(g_lo, g_hi) = decade_bounds(g_lo, g_hi);

  const double left = 72, right = c.width - 24, top = kTitleHeight, bottom = c.height;
  const double legend_h = layout_legend(c.legend, 12, c.width - 24, nullptr, 0);
  Svg svg(c.width, bottom + kAxisHeight + legend_h + 4, c.title);
  draw_title(svg, c.title);
  const LogScale x(i_lo, i_hi, left, right);
  const LogScale y(g_lo, g_hi, bottom, top);

  draw_x_axis(svg, x.ticks(), x, top, bottom, left, right, "arithmetic intensity (FLOP/byte)");
  draw_y_axis(svg, y.ticks(), y, top, bottom, left, right, "achieved GFLOP/s");

  // The roofs: bandwidth-bound slope up to the ridge, then flat at the compute peak.
  const double i_start = std::max(i_lo, g_lo / bw);
  svg.polyline({{x(i_start), y(i_start * bw)}, {x(ridge), y(peak)}, {x(i_hi), y(peak)}}, "#c0392b",
               2);
  svg.line(x(ridge), y(peak), x(ridge), bottom, "#c0392b", 1, true);
  svg.text(right - 4, y(peak) - 6, fmt::format("compute peak {} GFLOP/s", value_label(peak)),
           {.anchor = TextStyle::Anchor::kEnd, .size = 12, .fill = "#c0392b"});
  const double slope_deg =
      std::atan2(y(peak) - y(i_start * bw), x(ridge) - x(i_start)) * 180 / M_PI;
  const double mid = std::sqrt(i_start * ridge);
  svg.text(x(mid), y(mid * bw) - 6, fmt::format("memory {} GB/s", value_label(bw)),
           {.anchor = TextStyle::Anchor::kMiddle, .size = 12, .fill = "#c0392b", .rotate = slope_deg});
  svg.text(x(ridge) + 4, bottom - 6, fmt::format("ridge {} FLOP/B", value_label(ridge)),
           {.size = 11, .fill = "#c0392b"});

  std::stable_sort(dots.begin(), dots.end(),
                   [](const RooflineDot* a, const RooflineDot* b) { return a->radius > b->radius; });
  for (const RooflineDot* d : dots)
    svg.circle(x(d->intensity), y(d->gflops), d->radius, d->color, d->tooltip);
  layout_legend(c.legend, 12, c.width - 24, &svg, bottom + kAxisHeight);
  return svg.str();
}

std::string distribution_svg(const DistributionChart& c) {
  constexpr double kRow = 46;
  double label_w = 40;
  for (const DistributionSeries& s : c.series) label_w = std::max(label_w, text_width(shorten(s.name, 28)));
  label_w = std::min(label_w, 200.0) + 12;
  const double left = label_w, right = c.width - 24, top = kTitleHeight;
  const double bottom = top + kRow * static_cast<double>(c.series.size());
  Svg svg(c.width, bottom + kAxisHeight, c.title);
  draw_title(svg, c.title);
  double hi = 0;
  for (const DistributionSeries& s : c.series)
    for (double v : s.samples) hi = std::max(hi, v);
  const LinearScale x(0, hi > 0 ? hi * 1.05 : 1, left, right);
  draw_x_axis(svg, x.ticks(6), x, top, bottom, left, right, c.value_axis);
  for (size_t r = 0; r < c.series.size(); ++r) {
    const DistributionSeries& s = c.series[r];
    const double mid = top + kRow * (static_cast<double>(r) + 0.5);
    svg.text(left - 8, mid + 4, shorten(s.name, 28), {.anchor = TextStyle::Anchor::kEnd});
    if (s.samples.empty()) continue;
    std::vector<double> v = s.samples;
    std::sort(v.begin(), v.end());
    auto q = [&](double p) { return quantile(v, p); };
    const std::string tip = fmt::format("{}: {} samples, min {}, median {}, max {}", s.name,
                                        v.size(), value_label(v.front()), value_label(q(0.5)),
                                        value_label(v.back()));
    svg.line(x(v.front()), mid, x(v.back()), mid, "#555");
    svg.rect(x(q(0.25)), mid - 11, std::max(x(q(0.75)) - x(q(0.25)), 1.0), 22, s.color, tip);
    svg.line(x(q(0.5)), mid - 14, x(q(0.5)), mid + 14, "#111", 2);
    for (size_t i = 0; i < s.samples.size(); ++i) {
      const double jitter = static_cast<double>(static_cast<int>(i * 7919 % 11) - 5) * 1.6;
      svg.circle(x(s.samples[i]), mid + jitter, 2.2, "#222");
    }
  }
  svg.line(left, top, left, bottom, kAxis);
  return svg.str();
}

}  // namespace kiln
