#include "profile/report.h"

#include <gtest/gtest.h>

#include "report/html_page.h"
#include "profile/profile_target.h"
#include "profile/profile_test_util.h"
#include "report/text_table.h"

namespace kiln {
namespace {

ProfileReport tiny_report() {
  auto target = std::make_unique<ProfileTarget>(testing::tiny_mlp(), "reference", 1);
  const std::vector<RtValue> feeds = {testing::float_input({8, 4})};
  ProfileReport r;
  r.threads = 2;
  r.peak = {.cpu = "test cpu", .threads = 2, .isa = "avx2", .gflops = 100, .copy_gbps = 10,
            .triad_gbps = 12};
  r.data = profile_runs(*target, feeds, {.warmup = 1, .runs = 3});
  r.model = summarize_model(target->model(), "models/tiny.onnx", target->inputs(), feeds);
  r.summary = summarize(r.data, r.peak.roofline());
  return r;
}

TEST(ModelSummary, CountsNodesParamsAndFeeds) {
  const ProfileReport r = tiny_report();
  EXPECT_EQ(r.model.nodes, 3);
  EXPECT_EQ(r.model.params, 12);
  EXPECT_EQ(r.model.param_bytes, 48);
  ASSERT_EQ(r.model.inputs.size(), 1u);
  EXPECT_EQ(r.model.inputs[0].second, "float[8,4]");
  EXPECT_EQ(r.model.ops.at("MatMul"), 1);
  EXPECT_EQ(r.model.opsets.at("ai.onnx"), 17);
}

TEST(ProfileTable, ShowsRunOpsAndNodes) {
  const std::string t = profile_table(tiny_report(), 2);
  EXPECT_NE(t.find("kiln profile: models/tiny.onnx"), std::string::npos);
  EXPECT_NE(t.find("3 executed per run"), std::string::npos);
  EXPECT_NE(t.find("op types by time (2 of 3)"), std::string::npos);
  EXPECT_NE(t.find("GFLOP/s"), std::string::npos);
  EXPECT_NE(t.find("ridge 8.33 FLOP/B"), std::string::npos);  // 100 GFLOP/s over 12 GB/s
}

TEST(ProfileJson, HasEveryOpAndNode) {
  const ProfileReport r = tiny_report();
  const auto j = profile_json(r);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["ops"].size(), 3u);
  EXPECT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["run_ms"].size(), 3u);
  EXPECT_EQ(j["peak"]["gbps"], 12.0);
  double share = 0;
  for (const auto& op : j["ops"]) share += op["share"].get<double>();
  EXPECT_NEAR(share, r.summary.coverage, 1e-9);
  EXPECT_TRUE(j["phases"].contains("session_initialization_ms"));
  EXPECT_FALSE(j.contains("plan"));  // the reference runs no plan
}

TEST(ProfileHtml, SelfContainedAndWellFormed) {
  const std::string html = profile_html(tiny_report());
  EXPECT_EQ(testing::markup_problem(html), "");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  // Every http reference is an SVG namespace, nothing to fetch.
  size_t refs = 0, ns = 0;
  for (size_t i = html.find("http"); i != std::string::npos; i = html.find("http", i + 1)) ++refs;
  for (size_t i = html.find("http://www.w3.org/2000/svg"); i != std::string::npos;
       i = html.find("http://www.w3.org/2000/svg", i + 1))
    ++ns;
  EXPECT_EQ(refs, ns);
  EXPECT_EQ(ns, 3u);  // time by op, timeline, roofline
  EXPECT_NE(html.find("Time by op type"), std::string::npos);
  EXPECT_NE(html.find("Nodes against the roofline"), std::string::npos);
  EXPECT_NE(html.find("<td>fc</td>"), std::string::npos);
}

TEST(HtmlPage, EscapesEverythingButFigures) {
  HtmlPage page("a <b> & c");
  page.paragraph("<script>x</script>");
  page.table({{"name", "n"}, {false, true}, {{"<i>", "1"}}, "cap"});
  page.facts({{"k<", "v>"}});
  page.figure("<svg></svg>", "caption");
  const std::string s = page.str();
  EXPECT_EQ(testing::markup_problem(s), "");
  EXPECT_EQ(s.find("<script>"), std::string::npos);
  EXPECT_NE(s.find("<title>a &lt;b&gt; &amp; c</title>"), std::string::npos);
  EXPECT_NE(s.find(R"(<td class="num">1</td>)"), std::string::npos);
  EXPECT_NE(s.find("<figure><svg></svg><figcaption>caption</figcaption></figure>"),
            std::string::npos);
}

TEST(TextTable, AlignsColumns) {
  TextTable t({"op", "ms"}, {false, true});
  t.add({"Conv", "12.5"});
  t.add({"Relu", "3"});
  EXPECT_EQ(t.str(), "op      ms\n----------\nConv  12.5\nRelu     3\n");
}

}  // namespace
}  // namespace kiln
