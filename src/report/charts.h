// The charts of kiln's HTML reports, as inline SVG: horizontal bars (grouped when there are several
// series), a timeline of bars in lanes, a log-log roofline with dots, and sample distributions
// (box and dots, histogram, the samples in order). Profile, bench and optimize reports all draw
// with these (latency_charts.cc draws the histogram and the series).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln {

// A distinct colour for each of the first categories, then grey.
std::string category_color(int index);
inline constexpr const char* kOtherColor = "#b0b0b0";

using Legend = std::vector<std::pair<std::string, std::string>>;  // label, colour

struct BarSeries {
  std::string name;
  std::string color;           // of every bar, unless BarChart::row_colors is given
  std::vector<double> values;  // one per row
};

struct BarChart {
  std::string title;
  std::string value_axis;              // the axis title: "time per run (ms)"
  std::vector<std::string> rows;       // one label per row
  std::vector<BarSeries> series;       // one or more; several are drawn side by side per row
  std::vector<std::string> row_colors; // optional: a colour per row (single series)
  std::vector<std::string> tooltips;   // optional: per row
  double width = 940;
};
std::string bar_chart_svg(const BarChart& c);

struct TimelineBar {
  int lane = 0;
  double start = 0, end = 0;  // on the time axis
  std::string color;
  std::string tooltip;
};

struct TimelineChart {
  std::string title;
  std::string time_axis;           // "time since the run began (ms)"
  std::vector<std::string> lanes;  // top to bottom
  std::vector<TimelineBar> bars;
  Legend legend;
  double width = 940;
};
std::string timeline_svg(const TimelineChart& c);

struct RooflineDot {
  double intensity = 0;  // FLOP per byte
  double gflops = 0;     // achieved
  double radius = 4;
  std::string color;
  std::string tooltip;
};

struct RooflineChart {
  std::string title;
  double peak_gflops = 0, peak_gbps = 0;
  std::vector<RooflineDot> dots;  // dots without FLOPs or bytes cannot be placed and are skipped
  Legend legend;
  double width = 940, height = 520;
};
std::string roofline_svg(const RooflineChart& c);

struct DistributionSeries {
  std::string name;
  std::string color;
  std::vector<double> samples;  // e.g. the latency of each run
};

struct DistributionChart {
  std::string title;
  std::string value_axis;  // "latency (ms)"
  std::vector<DistributionSeries> series;  // one row each: before and after, engine A and B ...
  double width = 940;
};
// Per series: every sample as a dot, a box from the 25th to the 75th percentile, a bar at the
// median and whiskers to the extremes, on one value axis from 0.
std::string distribution_svg(const DistributionChart& c);

// Samples counted into equal bins over the range of all series together; several series share the
// bins, side by side within each. `bins` 0: about the square root of the largest series' size.
// The bins end at 1.5 interquartile ranges above the 75th percentile (or the largest sample);
// samples beyond fall into an overflow bin at the right that says how many they are.
struct HistogramChart {
  std::string title;
  std::string value_axis;  // "latency (ms)"
  std::vector<DistributionSeries> series;
  int bins = 0;
  double width = 940, height = 260;
};
std::string histogram_svg(const HistogramChart& c);

// Each series' samples in the order taken (x: the sample's index from 1), as a line with dots:
// drift, warm-up and interference show as trends and spikes.
struct SeriesChart {
  std::string title;
  std::string index_axis;  // "iteration"
  std::string value_axis;  // "latency (ms)"
  std::vector<DistributionSeries> series;
  double width = 940, height = 260;
};
std::string series_svg(const SeriesChart& c);

}  // namespace kiln
