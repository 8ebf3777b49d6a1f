// The pieces every chart of charts.h is drawn with: the title, legends, labelled axes and a rough
// measure of text width. Internal to the chart files (charts.cc, latency_charts.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/chart_scale.h"
#include "report/charts.h"
#include "report/svg.h"

namespace kiln::chart_parts {

inline constexpr double kTitleHeight = 34;
inline constexpr double kAxisHeight = 46;  // tick labels and the axis title under a plot
inline constexpr const char* kGrid = "#e4e4e4";
inline constexpr const char* kAxis = "#666";

// Of text at `size` px, roughly (no font metrics without a browser).
double text_width(std::string_view s, double size = 12);
// At most max_chars, an ellipsis at the end when cut.
std::string shorten(const std::string& s, size_t max_chars);
void draw_title(Svg& svg, const std::string& title);
// The value at fraction p (0..1) of sorted, non-empty samples, interpolated linearly between
// neighbouring order statistics.
double quantile(const std::vector<double>& sorted, double p);
// Legend rows laid out across `width` from (x, y), drawn when svg is given; returns the height
// they take (so a chart can size itself before drawing).
double layout_legend(const Legend& legend, double x, double width, Svg* svg, double y);

// Gridlines, tick labels and the title of a horizontal value axis under a plot spanning
// [top, bottom]; `scale` maps values to x (LinearScale or LogScale).
template <typename Scale>
void draw_x_axis(Svg& svg, const std::vector<double>& ticks, const Scale& scale, double top,
                 double bottom, double left, double right, const std::string& title) {
  for (double t : ticks) {
    const double x = scale(t);
    svg.line(x, top, x, bottom, kGrid);
    svg.text(x, bottom + 16, tick_label(t), {.anchor = TextStyle::Anchor::kMiddle, .size = 11});
  }
  svg.line(left, bottom, right, bottom, kAxis);
  svg.text((left + right) / 2, bottom + 36, title,
           {.anchor = TextStyle::Anchor::kMiddle, .size = 12, .fill = "#444"});
}

// The same for a vertical axis left of a plot spanning [left, right]; its title reads upward.
template <typename Scale>
void draw_y_axis(Svg& svg, const std::vector<double>& ticks, const Scale& scale, double top,
                 double bottom, double left, double right, const std::string& title) {
  for (double t : ticks) {
    svg.line(left, scale(t), right, scale(t), kGrid);
    svg.text(left - 6, scale(t) + 4, tick_label(t), {.anchor = TextStyle::Anchor::kEnd, .size = 11});
  }
  svg.line(left, top, left, bottom, kAxis);
  svg.text(18, (top + bottom) / 2, title,
           {.anchor = TextStyle::Anchor::kMiddle, .size = 12, .fill = "#444", .rotate = -90});
}

}  // namespace kiln::chart_parts
