#include "profile/recorder.h"

#include <gtest/gtest.h>

#include "support/error.h"

#include "profile/profile_target.h"
#include "profile/profile_test_util.h"
#include "profile/summary.h"

namespace kiln {
namespace {

TEST(ProfileRecorder, RecordsEveryNodeOfEveryRun) {
  auto target = std::make_unique<ProfileTarget>(testing::tiny_mlp(), "reference", 1);
  const ProfileData d = profile_runs(*target, {testing::float_input({2, 4})}, {.warmup = 2, .runs = 3});
  EXPECT_EQ(d.engine, "reference");
  ASSERT_EQ(d.runs.size(), 3u);
  EXPECT_EQ(d.warmup_runs.size(), 2u);
  ASSERT_EQ(d.phases.size(), 1u);
  EXPECT_EQ(d.phases[0].name, "session_initialization");
  EXPECT_EQ(d.plan_steps, 0);
  ASSERT_EQ(d.nodes.size(), 3u);
  ASSERT_EQ(d.executions.size(), 9u);
  for (const NodeExecution& e : d.executions) {
    const TimeSpan& run = d.runs.at(e.run);
    EXPECT_LE(run.start_ns, e.span.start_ns);
    EXPECT_LE(e.span.start_ns, e.span.end_ns);
    EXPECT_LE(e.span.end_ns, run.end_ns);
  }
  const ProfiledNode& fc = d.nodes[0];
  EXPECT_EQ(fc.name, "fc");
  EXPECT_EQ(fc.op_type, "MatMul");
  EXPECT_EQ(fc.kernel, "reference");
  EXPECT_EQ(fc.depth, 0);
  ASSERT_EQ(fc.inputs.size(), 2u);
  EXPECT_EQ(fc.inputs[0].dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(fc.inputs[0].dtype, DataType::kFloat);
  EXPECT_EQ(fc.outputs[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_DOUBLE_EQ(fc.cost.macs, 2.0 * 3 * 4);  // from the run's shapes, not batch = 1
  EXPECT_DOUBLE_EQ(fc.cost.bytes, 4.0 * (8 + 12 + 6));
  EXPECT_EQ(d.nodes[2].op_type, "Softmax");
}

TEST(ProfileRecorder, FastEngineReportsEveryStepOfItsPlan) {
  ProfileTarget target(testing::tiny_mlp(), "fast", 1);
  const ProfileData d = profile_runs(target, {testing::float_input({2, 4})}, {.warmup = 1, .runs = 2});
  EXPECT_EQ(d.engine, "fast");
  ASSERT_EQ(d.phases.size(), 2u);
  EXPECT_EQ(d.phases[1].name, "plan");
  ASSERT_GT(d.plan_steps, 0);
  EXPECT_EQ(d.executions.size(), 2u * d.plan_steps);
  int kernels = 0;
  for (const auto& [kernel, steps] : d.plan_kernels) kernels += steps;
  EXPECT_EQ(kernels, d.plan_steps);
  for (const ProfiledNode& n : d.nodes) EXPECT_FALSE(n.kernel.empty());
}

// An executor that keeps weights inside its kernels reports only the activations.
TEST(ProfileRecorder, ConstantsMissingFromAStepComeFromTheGraph) {
  Model m = testing::tiny_mlp();
  const Node& fc = *m.graph->nodes()[0];
  const RtValue x = testing::float_input({5, 4});
  const RtValue h = RtValue::of(Tensor(DataType::kFloat, {5, 3}));
  const RtValue* ins[] = {&x};
  ProfileData d;
  ProfileRecorder rec(d);
  rec.begin_run();
  rec.on_node({.node = &fc, .kernel = "onednn.matmul", .inputs = ins, .outputs = {&h, 1},
               .start_ns = 10, .end_ns = 20});
  rec.on_node({.node = &fc, .kernel = "onednn.reorder", .inputs = ins, .outputs = {&x, 1},
               .start_ns = 20, .end_ns = 30});
  rec.end_run();
  ASSERT_EQ(d.nodes.size(), 2u);
  const ProfiledNode& mm = d.nodes[0];
  ASSERT_EQ(mm.inputs.size(), 2u);
  EXPECT_EQ(mm.inputs[1].dims, (std::vector<int64_t>{4, 3}));  // w, from the graph
  EXPECT_DOUBLE_EQ(mm.cost.macs, 5.0 * 3 * 4);
  EXPECT_TRUE(mm.cost.exact);
  const ProfiledNode& reorder = d.nodes[1];  // a layout change: its own op, no arithmetic
  EXPECT_EQ(reorder.op_type, "Reorder");
  EXPECT_EQ(reorder.name, "fc (reorder)");
  EXPECT_DOUBLE_EQ(reorder.cost.flops, 0);
  EXPECT_DOUBLE_EQ(reorder.cost.bytes, 2 * 5 * 4 * 4);
}

TEST(ProfileRecorder, NewShapesMakeANewEntry) {
  auto target = std::make_unique<ProfileTarget>(testing::tiny_mlp(), "reference", 1);
  ProfileData d;
  ProfileRecorder rec(d);
  for (int64_t batch : {1, 5, 1}) {
    rec.begin_run();
    target->run({testing::float_input({batch, 4})}, &rec);
    rec.end_run();
  }
  EXPECT_EQ(d.nodes.size(), 6u);  // three nodes at batch 1, three at batch 5
  EXPECT_EQ(d.executions.size(), 9u);
  EXPECT_EQ(d.executions[6].node, d.executions[0].node);
}

TEST(ProfileRecorder, RejectsNodesOutsideARun) {
  ProfileData d;
  ProfileRecorder rec(d);
  auto m = testing::tiny_mlp();
  NodeEvent e;
  e.node = m.graph->nodes()[0].get();
  EXPECT_THROW(rec.on_node(e), Error);
  EXPECT_THROW(rec.end_run(), Error);
  rec.begin_run();
  EXPECT_THROW(rec.begin_run(), Error);
}

TEST(ProfileRuns, NeedsAtLeastOneRun) {
  auto target = std::make_unique<ProfileTarget>(testing::tiny_mlp(), "reference", 1);
  EXPECT_THROW(profile_runs(*target, {testing::float_input({1, 4})}, {.warmup = 0, .runs = 0}),
               Error);
}

TEST(ProfileRuns, NodeTimesSumToNearlyTheRun) {
  auto target = std::make_unique<ProfileTarget>(testing::tiny_mlp(), "reference", 1);
  const ProfileData d =
      profile_runs(*target, {testing::float_input({64, 4})}, {.warmup = 1, .runs = 5});
  const ProfileSummary s = summarize(d, {100, 10});
  EXPECT_GT(s.coverage, 0);
  EXPECT_LE(s.coverage, 1.0);
  EXPECT_EQ(s.total.nodes, 3);
}

}  // namespace
}  // namespace kiln
