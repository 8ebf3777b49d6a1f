// Nodes inside If/Loop/Scan bodies, which the fast engine runs on the reference interpreter, are
// profiled too: with their depth and subgraph path, and by op type apart from the main graph's.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "profile/chrome_trace.h"
#include "profile/profile_target.h"
#include "profile/report.h"
#include "profile/report_rows.h"

namespace kiln {
namespace {

// y = If(cond) { Relu(Conv(x)) } else { Neg(Conv(x)) }: the branches read the conv's output.
Model if_model() {
  engine::testing::ModelBuilder b;
  Value* x = b.input("x", {1, 4, 5, 5});
  Value* cond = b.input("cond", {}, DataType::kBool);
  Value* c = b.op("Conv", {x, b.constant("w", engine::testing::random_tensor({4, 4, 1, 1}, 3))});
  b.output(b.if_op(cond, {"Relu", {c}}, {"Neg", {c}}));
  return b.take();
}

TEST(SubgraphProfile, FastEngineReportsTheNodesInsideAnIf) {
  ProfileTarget target(if_model(), "fast", 1);
  Tensor cond(DataType::kBool, {});
  cond.set_f64(0, 0);  // the else branch
  const std::vector<RtValue> feeds = {RtValue::of(engine::testing::random_tensor({1, 4, 5, 5}, 1)),
                                      RtValue::of(cond)};
  const ProfileData data = profile_runs(target, feeds, {.warmup = 1, .runs = 2});
  const ProfiledNode* inner = nullptr;
  for (const ProfiledNode& n : data.nodes)
    if (n.op_type == "Neg") inner = &n;
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->depth, 1);
  EXPECT_EQ(inner->name, "else_Neg");
  EXPECT_EQ(inner->subgraph, "if > else_branch");
  ASSERT_EQ(inner->outputs.size(), 1u);
  EXPECT_EQ(inner->outputs[0].dims, (std::vector<int64_t>{1, 4, 5, 5}));
  int inner_events = 0;
  for (const NodeExecution& e : data.executions) inner_events += &data.nodes[e.node] == inner;
  EXPECT_EQ(inner_events, 2);  // once per measured run

  // Its op type is listed apart from the main graph's (its time is inside the If's).
  const ProfileSummary s = summarize(data, Roofline{100, 10});
  ASSERT_EQ(s.subgraph_ops.size(), 1u);
  EXPECT_EQ(s.subgraph_ops[0].label, "Neg");
  EXPECT_EQ(s.subgraph_ops[0].nodes, 1);
  for (const WorkStats& w : s.ops) EXPECT_NE(w.label, "Neg");
  // The If's own time leaves the Neg's out, so main and subgraph op types add up to the nodes'.
  double own = 0;
  for (const WorkStats& w : s.ops) {
    own += w.own_ms;
    const double inside = w.label == "If" ? s.subgraph_ops[0].ms : 0;
    EXPECT_NEAR(w.own_ms, w.ms - inside, 1e-9) << w.label;
  }
  EXPECT_NEAR(own + s.subgraph_ops[0].own_ms, s.total.ms, 1e-9);

  // The trace's event carries the path; the node table names it.
  bool traced = false;
  for (const auto& e : chrome_trace(data, 1, 1))
    if (e["name"] == "else_Neg") traced = e["args"]["subgraph"] == "if > else_branch";
  EXPECT_TRUE(traced);
  ProfileReport r;
  r.data = data;
  r.summary = s;
  bool listed = false;
  for (const auto& row : node_rows(r, 0).rows) listed |= row[0] == "else_Neg (in if > else_branch)";
  EXPECT_TRUE(listed);
  const nlohmann::json j = profile_json(r);  // kept: a range-for over a temporary's member dangles
  for (const auto& op : j["ops"]) {
    if (op["op"] == "If") {
      EXPECT_LT(op["own_ms_per_run"].get<double>(), op["ms_per_run"].get<double>());
    }
  }
  // The page's op type chart has the subgraph's op type as a row of its own.
  EXPECT_NE(profile_html(r).find(">Neg (in subgraphs)<"), std::string::npos);
}

TEST(SubgraphProfile, PathsOfNestedSubgraphs) {
  Model m = if_model();
  const Graph* then_g = m.graph->nodes().back()->attrs[0].g.get();
  EXPECT_EQ(subgraph_path(*then_g->nodes()[0]), "if > then_branch");
  EXPECT_EQ(subgraph_path(*m.graph->nodes()[0]), "");
}

}  // namespace
}  // namespace kiln
