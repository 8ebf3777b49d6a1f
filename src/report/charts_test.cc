#include "report/charts.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report/chart_scale.h"
#include "profile/profile_test_util.h"
#include "report/svg.h"

namespace kiln {
namespace {

using testing::count;

TEST(Svg, EscapesTextAndTooltips) {
  Svg svg(100, 50, "a <chart>");
  svg.text(1, 2, "x < y & \"z\"");
  svg.rect(0, 0, 10, 10, "#fff", "node 'a<b>'");
  const std::string s = svg.str();
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_NE(s.find("x &lt; y &amp; &quot;z&quot;"), std::string::npos);
  EXPECT_NE(s.find("<title>node &#39;a&lt;b&gt;&#39;</title></rect>"), std::string::npos);
  EXPECT_NE(s.find(R"(aria-label="a &lt;chart&gt;")"), std::string::npos);
}

TEST(Svg, NonFiniteCoordinatesStayValid) {
  Svg svg(10, 10, "x");
  svg.line(NAN, INFINITY, 1, 2, "#000");
  svg.rect(1, 1, -5, 3, "#000");  // a negative width is clamped
  const std::string s = svg.str();
  EXPECT_EQ(s.find("nan"), std::string::npos);
  EXPECT_EQ(s.find("inf"), std::string::npos);
  EXPECT_NE(s.find(R"(width="0")"), std::string::npos);
}

TEST(ChartScale, LinearTicksAreRound) {
  const LinearScale x(0, 37, 0, 370);
  EXPECT_DOUBLE_EQ(x(10), 100);
  EXPECT_EQ(x.ticks(4), (std::vector<double>{0, 10, 20, 30}));
  const LinearScale y(0, 1, 100, 0);  // upward
  EXPECT_DOUBLE_EQ(y(0.25), 75);
}

TEST(ChartScale, LogTicksAndLabels) {
  const auto [lo, hi] = decade_bounds(0.03, 420);
  EXPECT_DOUBLE_EQ(lo, 0.01);
  EXPECT_DOUBLE_EQ(hi, 1000);
  const LogScale x(lo, hi, 0, 500);
  EXPECT_EQ(x.ticks().size(), 6u);
  EXPECT_NEAR(x(1), 200, 1e-9);
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(0.01), "0.01");
  EXPECT_EQ(tick_label(2500), "2.5k");
  EXPECT_EQ(tick_label(3e6), "3M");
}

TEST(Charts, BarChartDrawsOneBarPerRowAndSeries) {
  BarChart c;
  c.title = "Time by op";
  c.value_axis = "ms";
  c.rows = {"Conv", "Relu", "Add"};
  c.series = {{"before", "#111111", {3, 2, 1}}, {"after", "#222222", {1.5, 0, 1}}};
  const std::string s = bar_chart_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(count(s, R"(fill="#111111")"), 3u + 1);  // bars and the legend swatch
  EXPECT_EQ(count(s, R"(fill="#222222")"), 3u + 1);
  EXPECT_NE(s.find(">Conv<"), std::string::npos);
  EXPECT_NE(s.find(">ms<"), std::string::npos);
}

TEST(Charts, TimelineBarsInTheirLanes) {
  TimelineChart c;
  c.title = "Run";
  c.time_axis = "ms";
  c.lanes = {"Conv", "Relu"};
  c.bars = {{0, 0, 2, "#aa0000", "conv1"}, {1, 2, 2.001, "#00aa00", "relu1"},
            {5, 0, 1, "#0000aa", "no such lane"}};
  c.legend = {{"Conv", "#aa0000"}, {"Relu", "#00aa00"}};
  const std::string s = timeline_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(count(s, "<title>conv1</title>"), 1u);
  EXPECT_EQ(count(s, "<title>relu1</title>"), 1u);  // too short to see, drawn 1 px wide
  EXPECT_EQ(count(s, "no such lane"), 0u);
}

TEST(Charts, RooflineHasRoofsAxesAndDots) {
  RooflineChart c;
  c.title = "Roofline";
  c.peak_gflops = 400;
  c.peak_gbps = 20;
  c.dots = {{50, 120, 5, "#123456", "conv"}, {0.1, 1.5, 3, "#654321", "relu"},
            {0, 0, 3, "#999999", "reshape"}};
  const std::string s = roofline_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(count(s, "<circle"), 2u);  // the dot without FLOPs is not drawn
  EXPECT_EQ(count(s, "<polyline"), 1u);
  EXPECT_NE(s.find("compute peak 400 GFLOP/s"), std::string::npos);
  EXPECT_NE(s.find("memory 20 GB/s"), std::string::npos);
  EXPECT_NE(s.find("arithmetic intensity (FLOP/byte)"), std::string::npos);
  EXPECT_NE(s.find("achieved GFLOP/s"), std::string::npos);
}

TEST(Charts, DistributionBoxPerSeriesAndADotPerSample) {
  DistributionChart c;
  c.title = "Latency";
  c.value_axis = "ms";
  c.series = {{"before", "#aa0000", {10, 12, 11, 30}}, {"after", "#00aa00", {5, 6}},
              {"none", "#0000aa", {}}};
  const std::string s = distribution_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(count(s, "<circle"), 6u);
  EXPECT_EQ(count(s, R"(fill="#aa0000")"), 1u);  // the box
  EXPECT_NE(s.find("before: 4 samples, min 10, median 11.5, max 30"), std::string::npos);
  EXPECT_NE(s.find(">none<"), std::string::npos);
}

TEST(Charts, HistogramCountsEverySampleInSharedBins) {
  HistogramChart c;
  c.title = "Latency histogram";
  c.value_axis = "ms";
  c.bins = 4;
  c.series = {{"before", "#aa0000", {1, 1.1, 1.2, 3.9, 4}}, {"after", "#00aa00", {2, 2}}};
  const std::string s = histogram_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  // Bins of width 0.75 from 1 to 4: before has 3 in the first and 2 in the last, after 2 in the
  // second; empty bins draw nothing.
  EXPECT_EQ(count(s, "<title>before: "), 2u);
  EXPECT_NE(s.find("before: 3 of 5 samples in [1, 1.75)"), std::string::npos);
  EXPECT_NE(s.find("before: 2 of 5 samples in [3.25, 4)"), std::string::npos);
  EXPECT_NE(s.find("after: 2 of 2 samples in [1.75, 2.5)"), std::string::npos);
  EXPECT_NE(s.find(">samples<"), std::string::npos);
  EXPECT_EQ(count(s, R"(fill="#aa0000")"), 2u + 1);  // bars and the legend swatch
}

// One run 100 times slower would put every other run into the first bin; the bins end at the
// fence (75th percentile + 1.5 IQR) and the outlier is counted in the overflow bin.
TEST(Charts, HistogramPutsOutliersInAnOverflowBin) {
  HistogramChart c;
  c.bins = 4;
  c.series = {{"runs", "#aa0000", {1, 1.2, 1.4, 1.6, 1.8, 2, 200}}};
  const std::string s = histogram_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  // Quartiles 1.3 and 1.9, fence 2.8 (beyond the largest regular sample 2): bins of 0.25 from 1.
  EXPECT_NE(s.find("runs: 2 of 7 samples in [1, 1.25)"), std::string::npos);
  EXPECT_NE(s.find("runs: 2 of 7 samples in [1.75, 2)"), std::string::npos);
  EXPECT_NE(s.find("runs: 1 of 7 samples beyond 2 (up to 200)"), std::string::npos);
  EXPECT_NE(s.find(">1 beyond<"), std::string::npos);
  EXPECT_NE(s.find(">&gt; 2<"), std::string::npos);
}

TEST(Charts, HistogramOfOneValueOrNoneStaysValid) {
  HistogramChart c;
  c.series = {{"flat", "#aa0000", {5, 5, 5}}};
  std::string s = histogram_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_NE(s.find("flat: 3 of 3 samples"), std::string::npos);
  c.series = {{"empty", "#aa0000", {}}};
  s = histogram_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(s.find("nan"), std::string::npos);
}

TEST(Charts, SeriesDrawsALineAndADotPerSample) {
  SeriesChart c;
  c.title = "Runs in order";
  c.index_axis = "run";
  c.value_axis = "ms";
  c.series = {{"a", "#aa0000", {3, 2, 2.5}}, {"b", "#00aa00", {1, 1}}};
  const std::string s = series_svg(c);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(count(s, "<polyline"), 2u);
  EXPECT_EQ(count(s, "<circle"), 5u);
  EXPECT_NE(s.find("a: sample 3: 2.5"), std::string::npos);
  EXPECT_NE(s.find(">run<"), std::string::npos);
}

TEST(Charts, CategoryColorsThenGrey) {
  EXPECT_NE(category_color(0), category_color(1));
  EXPECT_EQ(category_color(100), kOtherColor);
}

}  // namespace
}  // namespace kiln
