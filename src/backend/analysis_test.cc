#include "backend/analysis.h"

#include <gtest/gtest.h>

#include "backend/backend_test_util.h"
#include "backend/registry.h"

namespace kiln::backend {
namespace {

using engine::testing::ModelBuilder;
using testing::Prepared;
using testing::TestBackend;

TEST(BackendAnalysis, GroupsReasonsAndRecommendsAnOrder) {
  ModelBuilder b;
  Value* x = b.input("x", shape_of({2, 8}));
  b.output(b.op("Neg", {b.op("Relu", {b.op("Sigmoid", {b.op("Relu", {x})})})}));
  Prepared p(b.take());
  BackendRegistry::global().add(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Neg"}));
  const Analysis a = analyze(*p.facts, "chain.onnx", {.targets = {"native", "aarch64-linux"}, .backends = {"t", "cpu"}});
  BackendRegistry::global().remove("t");
  ASSERT_EQ(a.targets.size(), 2u);
  const TargetAnalysis& t = a.targets[0];
  EXPECT_TRUE(t.compiled);
  EXPECT_FALSE(a.targets[1].compiled);  // aarch64: claims only
  EXPECT_EQ(t.plan.partitions.size(), 3u);
  // cpu first puts all four nodes in one partition without copies: that is the recommendation.
  EXPECT_EQ(t.recommended, (std::vector<std::string>{"cpu", "t", "reference"}));
  const nlohmann::json j = analysis_json(a);
  const auto& ops = j["targets"][0]["ops"];
  bool sigmoid = false;
  for (const auto& o : ops)
    if (o["op"] == "Sigmoid") {
      sigmoid = true;
      EXPECT_EQ(o["placed"]["cpu"], 1);
      EXPECT_EQ(o["refused"][0]["backend"], "t");
      EXPECT_EQ(o["refused"][0]["reason"], "op not supported");
    }
  EXPECT_TRUE(sigmoid);
  EXPECT_EQ(j["targets"][0]["boundary_copies"], 4);
  EXPECT_EQ(j["targets"][0]["placement"].size(), 4u);
  const std::string text = analysis_text(a);
  EXPECT_NE(text.find("Sigmoid"), std::string::npos);
  EXPECT_NE(text.find("(t: op not supported)"), std::string::npos) << text;
  const std::string html = analysis_html(a);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Target aarch64-linux"), std::string::npos);
}

}  // namespace
}  // namespace kiln::backend
