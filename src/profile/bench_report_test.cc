#include "profile/bench_report.h"

#include <gtest/gtest.h>

#include "engine/runner.h"
#include "report/charts.h"
#include "profile/profile_test_util.h"

namespace kiln {
namespace {

using testing::count;

TEST(BenchReport, PercentilesByNearestRank) {
  std::vector<double> ms;
  for (int i = 100; i >= 1; --i) ms.push_back(i);  // order does not matter
  const LatencySummary s = latency_summary(ms);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.throughput_per_s, 1000 / 50.5);
  EXPECT_EQ(latency_summary({}).p50, 0);
}

TEST(BenchReport, TimesEveryIterationAndDescribesTheModel) {
  auto runner = engine::make_runner(testing::tiny_mlp(), engine::EngineKind::kFast, {.threads = 1});
  BenchRun b{.label = "-O 2", .model = "tiny.onnx", .optimize_level = 2};
  const std::vector<RtValue> feeds = {testing::float_input({8, 4})};
  time_runs({{runner.get(), &feeds, &b}}, {.iterations = 7, .warmup = 2});
  ASSERT_EQ(b.ms.size(), 7u);
  for (double t : b.ms) EXPECT_GT(t, 0);
  EXPECT_GT(b.first_run_ms, 0);
  ASSERT_TRUE(b.plan.has_value());
  EXPECT_GT(b.plan->steps, 0);
  EXPECT_EQ(b.graph.ops.at("MatMul"), 1);
}

TEST(BenchReport, SubjectsTakeTurns) {
  auto a = engine::make_runner(testing::tiny_mlp(), engine::EngineKind::kReference, {});
  auto b = engine::make_runner(testing::tiny_mlp(), engine::EngineKind::kFast, {.threads = 1});
  const std::vector<RtValue> feeds = {testing::float_input({2, 4})};
  BenchRun ra, rb;
  time_runs({{a.get(), &feeds, &ra}, {b.get(), &feeds, &rb}}, {.iterations = 5, .warmup = 1});
  EXPECT_EQ(ra.ms.size(), 5u);
  EXPECT_EQ(rb.ms.size(), 5u);
  EXPECT_FALSE(ra.plan.has_value());  // the reference interpreter has no plan
  EXPECT_TRUE(rb.plan.has_value());
}

BenchReport two_runs() {
  BenchReport r{.engine = "fast", .threads = 2, .counts = {.iterations = 4, .warmup = 1}};
  r.peak_rss_mb = 80;
  BenchRun before{.label = "-O 0", .model = "m/bert.onnx", .optimize_level = 0, .load_ms = 50,
                  .first_run_ms = 9, .ms = {10, 11, 10.5, 13}};
  before.plan = engine::PlanSummary{.steps = 12, .kernels = {{"reference", 2}, {"cpu.gelu", 10}}};
  before.graph.nodes = 20;
  before.graph.ops = {{"MatMul", 8}, {"Add", 12}};
  BenchRun after{.label = "-O 2", .model = "m/bert.onnx", .optimize_level = 2, .load_ms = 60,
                 .first_run_ms = 8, .ms = {8, 8.5, 7.9, 9}};
  after.plan = engine::PlanSummary{.steps = 8, .kernels = {{"onednn.matmul", 8}}};
  after.graph.nodes = 8;
  after.graph.ops = {{"MatMul", 8}};
  r.runs = {before, after};
  return r;
}

TEST(BenchReport, ComparisonPageDrawsBothDistributionsAndTheNodes) {
  const std::string s = bench_html(two_runs());
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(count(s, "http"), count(s, "http://www.w3.org/2000/svg"));
  EXPECT_NE(s.find("kiln bench: bert.onnx"), std::string::npos);
  // The summary side by side, with the ratio of after over before.
  EXPECT_NE(s.find("<th class=\"num\">-O 2 / -O 0</th>"), std::string::npos);
  EXPECT_NE(s.find("<td>latency p50</td><td class=\"num\">10.5 ms</td><td class=\"num\">8.00 ms</td>"
                   "<td class=\"num\">0.76x</td>"),
            std::string::npos);
  // Box plot, histogram and runs in order: one dot per run in the box plot and the series.
  EXPECT_NE(s.find(">Latency of each timed run<"), std::string::npos);
  EXPECT_NE(s.find(">Latency histogram<"), std::string::npos);
  EXPECT_NE(s.find(">Runs in order<"), std::string::npos);
  EXPECT_EQ(count(s, "<polyline"), 2u);
  EXPECT_EQ(count(s, "-O 0: sample "), 4u);
  // Nodes by op before and after, and the plan's kernels of each.
  EXPECT_NE(s.find("<td>Add</td><td class=\"num\">12</td><td class=\"num\">0</td>"
                   "<td class=\"num\">-12</td>"),
            std::string::npos);
  EXPECT_NE(s.find("<td>onednn.matmul</td><td class=\"num\">0</td><td class=\"num\">8</td>"),
            std::string::npos);
}

TEST(BenchReport, SingleModelPage) {
  BenchReport r = two_runs();
  r.runs.erase(r.runs.begin());
  const std::string s = bench_html(r);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(count(s, "<polyline"), 1u);
  EXPECT_EQ(s.find(" / "), std::string::npos);  // no ratio column
  EXPECT_NE(s.find("<td>MatMul</td><td class=\"num\">8</td></tr>"), std::string::npos);
}

}  // namespace
}  // namespace kiln
