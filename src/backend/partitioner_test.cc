#include "backend/partitioner.h"

#include <gtest/gtest.h>

#include "backend/backend_test_util.h"
#include "backend/engine_placement.h"
#include "backend/registry.h"

namespace kiln::backend {
namespace {

using engine::testing::ModelBuilder;
using engine::testing::random_tensor;
using testing::Prepared;
using testing::TestBackend;

// x -> Relu_0 -> Sigmoid_1 -> Relu_2 -> Neg_3
Model chain() {
  ModelBuilder b;
  Value* x = b.input("x", shape_of({2, 8}));
  b.output(b.op("Neg", {b.op("Relu", {b.op("Sigmoid", {b.op("Relu", {x})})})}));
  return b.take();
}

// a = Relu_0(x); s = Sigmoid_1(a); y = Add_2(a, s): Add joining a's partition would make a cycle.
Model detour() {
  ModelBuilder b;
  Value* x = b.input("x", shape_of({2, 8}));
  Value* a = b.op("Relu", {x});
  b.output(b.op("Add", {a, b.op("Sigmoid", {a})}));
  return b.take();
}

std::vector<std::shared_ptr<Backend>> with_engine(std::shared_ptr<Backend> first) {
  return {std::move(first), make_cpu_backend(), make_reference_backend()};
}

TEST(BackendPartitioner, ConnectedClaimedNodesBecomeOnePartition) {
  Prepared p(chain());
  const PartitionPlan plan = partition_graph(*p.facts, with_engine(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Neg"})),
                                             native_target());
  ASSERT_EQ(plan.partitions.size(), 3u);
  EXPECT_EQ(plan.backends[plan.partitions[0].backend]->name(), "t");
  EXPECT_EQ(plan.partitions[0].nodes.size(), 1u);
  EXPECT_EQ(plan.backends[plan.partitions[1].backend]->name(), "cpu");
  EXPECT_EQ(plan.partitions[2].nodes.size(), 2u);  // Relu_2 and Neg_3
  EXPECT_EQ(plan.partitions[2].inputs.size(), 1u);
  EXPECT_EQ(plan.partitions[2].outputs.size(), 1u);
  EXPECT_EQ(plan.boundary_copies, 4);  // in and out of each partition of t; none for the engine's
  EXPECT_TRUE(plan.fallbacks.empty());
  ASSERT_EQ(plan.fallen_back().size(), 1u);
  EXPECT_EQ(plan.fallen_back()[0]->op_type, "Sigmoid");
}

TEST(BackendPartitioner, PartitionsStayConvex) {
  Prepared p(detour());
  const PartitionPlan plan = partition_graph(*p.facts, with_engine(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Add"})),
                                             native_target());
  ASSERT_EQ(plan.partitions.size(), 3u);  // Relu_0 | Sigmoid_1 | Add_2, not Relu_0 + Add_2
  EXPECT_EQ(plan.partitions[0].nodes, std::vector<const Node*>{p.node("Relu_0")});
  EXPECT_EQ(plan.partitions[2].nodes, std::vector<const Node*>{p.node("Add_2")});
  EXPECT_EQ(plan.partitions[2].inputs.size(), 2u);
}

TEST(BackendPartitioner, FailedCompileFallsBackWithTheReason) {
  Prepared p(chain());
  auto failing = std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Neg"}, true);
  const PartitionPlan plan = partition_graph(*p.facts, with_engine(failing), native_target());
  EXPECT_EQ(failing->compiles, 2);
  ASSERT_EQ(plan.fallbacks.size(), 2u);
  EXPECT_EQ(plan.fallbacks[0].backend, "t");
  EXPECT_EQ(plan.fallbacks[0].reason, "made to fail by the test");
  for (int b : plan.assigned) EXPECT_EQ(plan.backends[b]->name(), "cpu");
  EXPECT_EQ(plan.boundary_copies, 0);
}

TEST(BackendPartitioner, StrictNamesEveryNodeThatFallsBack) {
  Prepared p(chain());
  const PartitionPlan plan = partition_graph(*p.facts, with_engine(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu"})),
                                             native_target());
  try {
    enforce_strict(plan);
    FAIL() << "strict accepted a fallback";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("2 nodes would fall back from 't'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'Sigmoid_1' (Sigmoid) -> cpu (op not supported)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'Neg_3' (Neg) -> cpu (op not supported)"), std::string::npos) << msg;
  }
  Prepared all_relu([] {
    ModelBuilder b;
    b.output(b.op("Relu", {b.input("x", shape_of({4}))}));
    return b.take();
  }());
  EXPECT_NO_THROW(enforce_strict(partition_graph(
      *all_relu.facts, with_engine(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu"})), native_target())));
}

TEST(BackendPartitioner, EngineRunsExternalPartitionsAsSteps) {
  for (bool fail : {false, true}) {
    BackendRegistry::global().add(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Neg", "Add"}, fail));
    for (auto make : {chain, detour}) {
      auto placement = std::make_shared<BackendPlacement>(PlacementOptions{.backends = {"t", "cpu"}});
      const engine::PlanSummary s = engine::testing::expect_same_as_reference(
          make, {random_tensor({2, 8}, 7)}, 1e-6, 1e-6, engine::EngineOptions{.placement = placement});
      EXPECT_EQ(engine::testing::steps_of(s, "t"), fail ? 0 : 2) << s.listing;
      EXPECT_NE(placement->summary().find(fail ? "fell back" : "t: 2 partitions"), std::string::npos)
          << placement->summary();
    }
  }
  BackendRegistry::global().remove("t");
}

// a = Relu_0(x), s = Sigmoid_1(a), y = Neg_2(a): the partition {Relu_0, Neg_2} runs at Neg_2, after
// Sigmoid_1 in node order, yet Sigmoid_1 reads its result: the engine must order the steps.
TEST(BackendPartitioner, EngineOrdersStepsAfterThePartitionsTheyRead) {
  auto make = [] {
    ModelBuilder b;
    Value* a = b.op("Relu", {b.input("x", shape_of({2, 8}))});
    b.output(b.op("Sigmoid", {a}));
    b.output(b.op("Neg", {a}));
    return b.take();
  };
  Prepared p(make());
  const PartitionPlan plan = partition_graph(*p.facts, with_engine(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Neg"})),
                                             native_target());
  ASSERT_EQ(plan.partitions.size(), 2u);
  EXPECT_EQ(plan.partitions[0].nodes, (std::vector<const Node*>{p.node("Relu_0"), p.node("Neg_2")}));
  BackendRegistry::global().add(std::make_shared<TestBackend>("t", std::set<std::string>{"Relu", "Neg"}));
  auto placement = std::make_shared<BackendPlacement>(PlacementOptions{.backends = {"t", "cpu"}});
  const engine::PlanSummary s = engine::testing::expect_same_as_reference(
      make, {random_tensor({2, 8}, 3)}, 1e-6, 1e-6, engine::EngineOptions{.placement = placement});
  EXPECT_EQ(engine::testing::steps_of(s, "t"), 1) << s.listing;
  BackendRegistry::global().remove("t");
}

TEST(BackendClaims, CpuClaimsNativeKernelsAndSaysWhyNot) {
  ModelBuilder b;
  b.output(b.op("Relu", {b.input("x", shape_of({4}))}));
  b.output(b.op("Relu", {b.input("d", shape_of({4}), DataType::kDouble)}));
  Prepared p(b.take());
  const auto cpu = make_cpu_backend()->claim(*p.facts, native_target());
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_TRUE(cpu[0].claimed);
  EXPECT_EQ(cpu[0].reason.rfind("cpu.", 0), 0u) << cpu[0].reason;
  EXPECT_FALSE(cpu[1].claimed);
  EXPECT_NE(cpu[1].reason.find("no native kernel for Relu"), std::string::npos) << cpu[1].reason;
  const auto ref = make_reference_backend()->claim(*p.facts, native_target());
  EXPECT_TRUE(ref[0].claimed && ref[1].claimed);
  // The double Relu goes to the reference backend.
  const PartitionPlan plan = partition_graph(*p.facts, {make_cpu_backend(), make_reference_backend()}, native_target());
  EXPECT_EQ(plan.backends[plan.assigned[1]]->name(), "reference");
}


TEST(BackendRegistry, ListsAndMissingPlugins) {
  EXPECT_EQ(parse_backend_list("xnnpack,cpu"), (std::vector<std::string>{"xnnpack", "cpu"}));
  EXPECT_THROW(parse_backend_list("xnnpack,,cpu"), Error);
  EXPECT_THROW(parse_backend_list("cpu,cpu"), Error);
  EXPECT_THROW(parse_backend_list("../evil"), Error);
  int implicit = 0;
  const ResolvedBackends r = resolve_backends({"no_such_backend"}, 1, &implicit);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_NE(r.missing[0].find("libkiln_backend_no_such_backend.so not found"), std::string::npos) << r.missing[0];
  ASSERT_EQ(r.backends.size(), 2u);  // the rest still runs: cpu, reference
  EXPECT_EQ(r.backends[0]->name(), "cpu");
  EXPECT_EQ(implicit, 2);
}

}  // namespace
}  // namespace kiln::backend
