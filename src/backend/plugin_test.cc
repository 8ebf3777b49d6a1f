// The plugin loader and the xnnpack plugin: ABI checks, claims with their reasons, partitions
// compiled and run inside the engine against the reference, fallback when a compile fails.
#include "backend/plugin_backend.h"

#include <gtest/gtest.h>

#include "backend/backend_test_util.h"
#include "backend/engine_placement.h"
#include "backend/registry.h"

namespace kiln::backend {
namespace {

using engine::testing::attr;
using engine::testing::ModelBuilder;
using engine::testing::random_tensor;
using testing::Prepared;

const std::string kXnnpack = std::string(KILN_BINARY_DIR) + "/libkiln_backend_xnnpack.so";

std::shared_ptr<Backend> xnnpack(const std::string& options = "threads=1") {
  std::string why;
  auto b = load_plugin_file(kXnnpack, options, why);
  EXPECT_TRUE(b) << why;
  return b;
}

// A small CNN of every kind of node the plugin takes: conv (plain, strided, depthwise, grouped),
// Relu, Add, Clip, MaxPool with padding, Mul by a constant per channel, Sigmoid, global pooling,
// Flatten, Gemm and Softmax.
Model cnn() {
  ModelBuilder b;
  Value* x = b.input("x", shape_of({1, 3, 10, 10}));
  Value* c1 = b.op("Conv", {x, b.constant("w1", random_tensor({8, 3, 3, 3}, 1)), b.constant("b1", random_tensor({8}, 2))},
                   {attr("pads", std::vector<int64_t>{1, 1, 1, 1}), attr("strides", std::vector<int64_t>{2, 2})});
  Value* r = b.op("Relu", {c1});
  Value* d = b.op("Conv", {r, b.constant("wd", random_tensor({8, 1, 3, 3}, 3)), b.constant("bd", random_tensor({8}, 4))},
                  {attr("group", int64_t{8}), attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
  Value* g = b.op("Conv", {d, b.constant("wg", random_tensor({8, 4, 1, 1}, 5))}, {attr("group", int64_t{2})});
  Value* a = b.op("Add", {g, r});
  Value* cl = b.op("Clip", {a, b.constant("lo", Tensor::scalar(DataType::kFloat, 0.0f)),
                            b.constant("hi", Tensor::scalar(DataType::kFloat, 0.5f))});
  Value* mp = b.op("MaxPool", {cl}, {attr("kernel_shape", std::vector<int64_t>{2, 2}),
                                     attr("pads", std::vector<int64_t>{0, 0, 1, 1})});
  Value* m = b.op("Sigmoid", {b.op("Mul", {mp, b.constant("s", random_tensor({8, 1, 1}, 6))})});
  Value* f = b.op("Flatten", {b.op("GlobalAveragePool", {m})});
  Value* gm = b.op("Gemm", {f, b.constant("wf", random_tensor({10, 8}, 7)), b.constant("bf", random_tensor({10}, 8))},
                   {attr("transB", int64_t{1})});
  b.output(b.op("Softmax", {gm}));
  return b.take();
}

TEST(BackendPlugin, RefusesAnotherAbiVersion) {
  std::string why;
  EXPECT_FALSE(load_plugin_file(std::string(KILN_BINARY_DIR) + "/tests/backend/libkiln_backend_abi_mismatch.so", "", why));
  EXPECT_NE(why.find("built for backend ABI version 99"), std::string::npos) << why;
  EXPECT_FALSE(load_plugin_file("/nonexistent/libkiln_backend_x.so", "", why));
  EXPECT_NE(why.find("cannot load"), std::string::npos) << why;
  EXPECT_FALSE(load_plugin_file(kXnnpack, "bogus=1", why));
  EXPECT_NE(why.find("unknown option 'bogus'"), std::string::npos) << why;
}

TEST(BackendPlugin, XnnpackClaimsWithReasons) {
  ModelBuilder b;
  Value* x = b.input("x", shape_of({1, 4, 8, 8}));
  Value* w = b.input("w", shape_of({8, 4, 3, 3}));
  b.output(b.op("Conv", {x, b.constant("wc", random_tensor({8, 4, 3, 3}, 1))}));
  b.output(b.op("Conv", {x, w}));
  b.output(b.op("Softmax", {x}));
  b.output(b.op("AveragePool", {x}, {attr("kernel_shape", std::vector<int64_t>{2, 2}),
                                     attr("pads", std::vector<int64_t>{1, 1, 1, 1})}));
  b.output(b.op("Relu", {b.input("d", shape_of({4}), DataType::kDouble)}));
  b.output(b.op("Flatten", {x}));
  b.output(b.op("Erf", {x}));
  Prepared p(b.take());
  const auto claims = xnnpack()->claim(*p.facts, native_target());
  ASSERT_EQ(claims.size(), 7u);
  EXPECT_TRUE(claims[0].claimed) << claims[0].reason;
  EXPECT_EQ(claims[1].reason, "weights not constant");
  EXPECT_EQ(claims[2].reason, "rank 4");
  EXPECT_NE(claims[3].reason.find("average pool with padding"), std::string::npos);
  EXPECT_EQ(claims[4].reason, "dtype float64 (float32 only)");
  EXPECT_EQ(claims[5].reason, "flattening an image of 8x8 pixels (layout)");
  EXPECT_EQ(claims[6].reason, "op not supported");
  const auto excluded = xnnpack("exclude=Conv")->claim(*p.facts, native_target());
  EXPECT_EQ(excluded[0].reason, "excluded by the plugin's options");
}

TEST(BackendPlugin, XnnpackRunsPartitionsInTheEngine) {
  struct Case {
    std::string options;
    int xnnpack_steps;
    int fallbacks;
  };
  // Whole: one partition. Add excluded: the graph splits around it. Gemm failing: the second
  // partition (after the Add) is given back and runs on cpu, with the reason said.
  for (const Case& c : {Case{"threads=2", 1, 0}, Case{"threads=1;exclude=Add", 2, 0},
                        Case{"threads=1;exclude=Add;fail_compile=Gemm", 1, 1}}) {
    BackendRegistry::global().add(xnnpack(c.options));
    auto placement = std::make_shared<BackendPlacement>(PlacementOptions{.backends = {"xnnpack", "cpu"}});
    const engine::PlanSummary s = engine::testing::expect_same_as_reference(
        cnn, {random_tensor({1, 3, 10, 10}, 9)}, 1e-4, 1e-5, engine::EngineOptions{.placement = placement});
    EXPECT_EQ(engine::testing::steps_of(s, "xnnpack"), c.xnnpack_steps) << c.options << "\n" << s.listing;
    Prepared p(cnn());
    const PartitionPlan plan = partition_graph(*p.facts, resolve_backends({"xnnpack", "cpu"}, 1).backends, native_target());
    ASSERT_EQ(static_cast<int>(plan.fallbacks.size()), c.fallbacks) << c.options;
    if (c.fallbacks) {
      EXPECT_NE(plan.fallbacks[0].reason.find("fail_compile=Gemm"), std::string::npos);
    }
    BackendRegistry::global().remove("xnnpack");
  }
}

}  // namespace
}  // namespace kiln::backend
