#include "profile/optimize_report.h"

#include <gtest/gtest.h>

#include "report/charts.h"
#include "profile/profile_test_util.h"

namespace kiln {
namespace {

using testing::count;

OptimizeReport sample_report() {
  OptimizeReport r;
  r.model = "models/cnn.onnx";
  r.output = "cnn.opt.onnx";
  r.pipeline = {"fold-constants", "fuse-conv-bn", "dce"};
  r.load_ms = 12.5;
  r.before.ops = {{"Conv", 3}, {"BatchNormalization", 3}, {"Relu", 3}};
  r.before.nodes = 9;
  r.before.initializers = 15;
  r.before.initializer_bytes = 4000;
  r.before.file_bytes = 5000;
  r.after.ops = {{"Conv", 3}, {"Relu", 3}};
  r.after.nodes = 6;
  r.after.initializers = 6;
  r.after.initializer_bytes = 2000;
  r.after.file_bytes = 2600;
  r.result.rounds = 2;
  r.result.ms = 3.25;
  r.result.passes = {{"fold-constants", 2, 0, 0.5}, {"fuse-conv-bn", 2, 3, 2.5}, {"dce", 2, 0, 0.25}};
  for (int i = 0; i < 3; ++i)
    r.result.rewrites.push_back({"fuse-conv-bn", "BatchNormalization folded into Conv",
                                 {"bn" + std::to_string(i)}, {}});
  r.result.near_misses = {{"fuse-conv-bn", "conv9", "Conv output has 2 readers"}};
  return r;
}

TEST(OptimizeReport, JsonKeepsTheRecordsLayout) {
  OptimizeReport r = sample_report();
  nlohmann::json j = optimize_json(r);
  EXPECT_EQ(j["model"], "models/cnn.onnx");
  EXPECT_EQ(j["before"]["nodes"], 9);
  EXPECT_EQ(j["after"]["ops"]["Conv"], 3);
  EXPECT_EQ(j["optimize"]["rewrites"].size(), 3u);
  EXPECT_FALSE(j.contains("verify"));
  r.verify = OptimizeVerification{.samples = 2, .rtol = 1e-3, .atol = 1e-4};
  r.verify->report.outputs = {{"y", 1e-6, 1e-5, true, ""}};
  j = optimize_json(r);
  EXPECT_EQ(j["verify"]["ok"], true);
  EXPECT_FALSE(j.contains("bisect"));
}

TEST(OptimizeReport, HtmlPathsByExtension) {
  EXPECT_TRUE(is_html_path("out/report.html"));
  EXPECT_TRUE(is_html_path("REPORT.HTM"));
  EXPECT_FALSE(is_html_path("report.json"));
  EXPECT_FALSE(is_html_path("html"));
}

TEST(OptimizeReport, PageHasEverySection) {
  const std::string s = optimize_html(sample_report());
  EXPECT_EQ(testing::markup_problem(s), "");
  // Nothing is fetched: the only address is SVG's namespace.
  EXPECT_EQ(count(s, "http"), count(s, "http://www.w3.org/2000/svg"));
  EXPECT_EQ(count(s, "src="), 0u);
  EXPECT_NE(s.find("kiln optimize: cnn.onnx"), std::string::npos);
  // Nodes by op: a bar per op type and side, and the table with the change.
  EXPECT_NE(s.find(">Nodes by op type<"), std::string::npos);
  EXPECT_GE(count(s, "fill=\"" + category_color(0) + "\""), 3u);
  EXPECT_GE(count(s, "fill=\"" + category_color(1) + "\""), 2u);
  EXPECT_NE(s.find("<td>BatchNormalization</td><td class=\"num\">3</td><td class=\"num\">0</td>"
                   "<td class=\"num\">-3</td>"),
            std::string::npos);
  EXPECT_NE(s.find(">initializer bytes<"), std::string::npos);
  EXPECT_NE(s.find(">file size<"), std::string::npos);
  // Time per pass and rewrites, grouped and listed; near misses with their reason.
  EXPECT_NE(s.find(">Time per pass<"), std::string::npos);
  EXPECT_NE(s.find("fuse-conv-bn: 2.50 ms over 2 runs"), std::string::npos);
  EXPECT_NE(s.find("<td>BatchNormalization folded into Conv</td><td class=\"num\">3</td>"),
            std::string::npos);
  EXPECT_EQ(count(s, "<td>bn"), 3u);
  EXPECT_NE(s.find("Conv output has 2 readers"), std::string::npos);
  EXPECT_NE(s.find("Not verified"), std::string::npos);
}

TEST(OptimizeReport, PageShowsVerificationErrorsAndTheBisection) {
  OptimizeReport r = sample_report();
  r.verify = OptimizeVerification{.samples = 3, .rtol = 1e-3, .atol = 1e-4};
  r.verify->report.ok = false;
  r.verify->report.outputs = {{"logits", 2e-6, 1e-5, true, ""},
                              {"boxes", 0.5, 0.2, false, "element 7: 1.5 vs 1"}};
  opt::BisectResult b;
  b.total = 3;
  b.runs = 2;
  b.first_bad = 2;
  b.rewrite = r.result.rewrites[1];
  b.failure = "boxes differ";
  r.verify->bisect = b;
  const std::string s = optimize_html(r);
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_NE(s.find(">Largest absolute error per output<"), std::string::npos);
  EXPECT_NE(s.find("<td>boxes</td><td class=\"num\">0.5</td><td class=\"num\">0.2</td>"
                   "<td>DIFFERS: element 7: 1.5 vs 1</td>"),
            std::string::npos);
  EXPECT_NE(s.find("the outputs DIFFER"), std::string::npos);
  EXPECT_NE(s.find("<dd>2 of 3</dd>"), std::string::npos);
  EXPECT_NE(s.find("<dd>bn1</dd>"), std::string::npos);
}

}  // namespace
}  // namespace kiln
