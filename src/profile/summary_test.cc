#include "profile/summary.h"

#include <gtest/gtest.h>

#include "support/error.h"

#include "profile/profile_test_util.h"

namespace kiln {
namespace {

// Two runs of two nodes with chosen times and costs.
struct Synthetic {
  Model model = testing::tiny_mlp();
  ProfileData data;

  Synthetic() {
    const auto& nodes = model.graph->nodes();
    auto entry = [&](const Node* n, double flops, double bytes) {
      ProfiledNode p;
      p.node = n;
      p.name = n->name;
      p.op_type = n->op_type;
      p.kernel = "reference";
      p.cost.flops = flops;
      p.cost.bytes = bytes;
      data.nodes.push_back(p);
    };
    entry(nodes[0].get(), 4e9, 1e8);  // MatMul: 40 FLOP/B
    entry(nodes[1].get(), 1e7, 8e8);  // Relu: 0.0125 FLOP/B
    // Run r: MatMul takes 10 ms + r ms, Relu 20 ms; the run 35 ms + r ms.
    for (int r = 0; r < 2; ++r) {
      const int64_t base = r * 1'000'000'000LL;
      const int64_t ms = 1'000'000;
      data.runs.push_back({base, base + (35 + r) * ms});
      data.executions.push_back({r, 0, {base + 1 * ms, base + (11 + r) * ms}});
      data.executions.push_back({r, 1, {base + (12 + r) * ms, base + (32 + r) * ms}});
    }
  }
};

TEST(Summary, LatencyAndCoverage) {
  Synthetic s;
  const ProfileSummary sum = summarize(s.data, {100, 10});
  EXPECT_EQ(sum.runs, 2);
  EXPECT_DOUBLE_EQ(sum.latency.mean_ms, 35.5);
  EXPECT_DOUBLE_EQ(sum.latency.min_ms, 35);
  EXPECT_DOUBLE_EQ(sum.latency.max_ms, 36);
  EXPECT_NEAR(sum.nodes_ms, 30.5, 1e-9);
  EXPECT_NEAR(sum.coverage, 30.5 / 35.5, 1e-12);
  EXPECT_EQ(sum.node_ms.size(), 2u);
}

TEST(Summary, OpsByTimeWithRatesAndRoofline) {
  Synthetic s;
  const Roofline roof{100, 10};  // ridge at 10 FLOP/B
  const ProfileSummary sum = summarize(s.data, roof);
  ASSERT_EQ(sum.ops.size(), 2u);
  const WorkStats& relu = sum.ops[0];  // 20 ms beats 10.5 ms
  const WorkStats& mm = sum.ops[1];
  EXPECT_EQ(relu.label, "Relu");
  EXPECT_DOUBLE_EQ(relu.ms, 20);
  EXPECT_NEAR(relu.share, 20 / 35.5, 1e-12);
  EXPECT_NEAR(relu.gbps, 8e8 / 0.020 / 1e9, 1e-9);  // 40 GB/s
  EXPECT_FALSE(relu.compute_bound);
  EXPECT_NEAR(relu.peak_share, 4.0, 1e-9);          // 40 GB/s of 10: above the (wrong) roof
  EXPECT_EQ(mm.label, "MatMul");
  EXPECT_DOUBLE_EQ(mm.ms, 10.5);
  EXPECT_NEAR(mm.gflops, 4e9 / 0.0105 / 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(mm.intensity, 40);
  EXPECT_TRUE(mm.compute_bound);
  EXPECT_NEAR(mm.peak_share, mm.gflops / 100, 1e-12);
  EXPECT_EQ(mm.calls, 1);
  EXPECT_EQ(mm.nodes, 1);
  EXPECT_NEAR(sum.total.ms, 30.5, 1e-9);
  EXPECT_DOUBLE_EQ(sum.total.flops, 4e9 + 1e7);
}

TEST(Summary, SubgraphNodesStayOutOfOpTotals) {
  Synthetic s;
  s.data.nodes[1].depth = 1;
  const ProfileSummary sum = summarize(s.data, {100, 10});
  ASSERT_EQ(sum.ops.size(), 1u);
  EXPECT_EQ(sum.ops[0].label, "MatMul");
  ASSERT_EQ(sum.nodes.size(), 2u);  // nodes list every depth
  EXPECT_EQ(sum.nodes[0].depth, 1);
  EXPECT_EQ(sum.nodes[0].entry, 1);
  EXPECT_NEAR(sum.nodes_ms, 10.5, 1e-9);
}

TEST(Summary, LatencyStats) {
  const LatencyStats l = latency_stats({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(l.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(l.mean_ms, 2.5);
  EXPECT_NEAR(l.stddev_ms, std::sqrt(5.0 / 3), 1e-12);
  EXPECT_DOUBLE_EQ(latency_stats({7}).stddev_ms, 0);
}

TEST(Roofline, AttainableAndShare) {
  const Roofline roof{400, 20};
  EXPECT_DOUBLE_EQ(roof.ridge(), 20);
  EXPECT_DOUBLE_EQ(roof.attainable(1), 20);
  EXPECT_DOUBLE_EQ(roof.attainable(100), 400);
  EXPECT_TRUE(roof.compute_bound(20));
  EXPECT_FALSE(roof.compute_bound(19.9));
  // 100 GFLOP over 10 GB in 1 s: intensity 10, roof 200 GFLOP/s, reached half.
  EXPECT_DOUBLE_EQ(roof.peak_share(100e9, 10e9, 1), 0.5);
  EXPECT_DOUBLE_EQ(roof.peak_share(0, 10e9, 1), 0.5);  // pure data movement
  EXPECT_DOUBLE_EQ(roof.peak_share(1, 1, 0), 0);
}

TEST(Summary, NeedsARun) {
  EXPECT_THROW(summarize(ProfileData{}, {1, 1}), Error);
}

}  // namespace
}  // namespace kiln
