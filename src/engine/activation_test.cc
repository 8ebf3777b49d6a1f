// The activation table: each ONNX op's kind, its attribute defaults and overrides, Gelu's
// approximations and Clip's bounds; and the epilogue form the chains carry.
#include <gtest/gtest.h>

#include <limits>

#include "engine/activation.h"
#include "engine/engine_test_util.h"
#include "engine/epilogue.h"
#include "engine/graph_facts.h"

namespace kiln::engine {
namespace {

using testing::attr;
using testing::ModelBuilder;

// Decodes the node making each output of a model reading x [2, 3].
class Decoded {
 public:
  explicit Decoded(const std::function<void(ModelBuilder&, Value*)>& build) {
    ModelBuilder b(20);
    Value* x = b.input("x", {2, 3});
    build(b, x);
    model_ = b.take();
    facts_ = std::make_unique<GraphFacts>(model_, std::vector<std::vector<int64_t>>{{2, 3}});
  }
  std::optional<Activation> operator[](size_t output) const {
    return decode_activation(*model_.graph->outputs.at(output)->producer, *facts_);
  }

 private:
  Model model_;
  std::unique_ptr<GraphFacts> facts_;
};

TEST(Activation, DecodesEachOpWithItsDefaults) {
  const Decoded d([](ModelBuilder& b, Value* x) {
    b.output(b.op("Relu", {x}));
    b.output(b.op("LeakyRelu", {x}));
    b.output(b.op("LeakyRelu", {x}, {attr("alpha", 0.2f)}));
    b.output(b.op("HardSigmoid", {x}));
    b.output(b.op("Elu", {x}));
    b.output(b.op("Gelu", {x}, {attr("approximate", std::string("tanh"))}));
    b.output(b.op("Gelu", {x}, {attr("approximate", std::string("cubic"))}));
    b.output(b.op("Mul", {x, x}));
  });
  EXPECT_EQ(d[0], (Activation{.kind = ActKind::kRelu}));
  EXPECT_EQ(d[1], (Activation{.kind = ActKind::kLeakyRelu, .alpha = 0.01f}));
  EXPECT_EQ(d[2], (Activation{.kind = ActKind::kLeakyRelu, .alpha = 0.2f}));
  EXPECT_EQ(d[3], (Activation{.kind = ActKind::kHardSigmoid, .alpha = 0.2f, .beta = 0.5f}));
  EXPECT_EQ(d[4], (Activation{.kind = ActKind::kElu, .alpha = 1.f}));
  EXPECT_EQ(d[5], (Activation{.kind = ActKind::kGeluTanh}));
  EXPECT_FALSE(d[6]);  // an approximation the engine does not take
  EXPECT_FALSE(d[7]);  // not an activation
}

TEST(Activation, ClipTakesConstantScalarBounds) {
  const Decoded d([](ModelBuilder& b, Value* x) {
    Value* lo = b.constant("lo", Tensor::scalar(DataType::kFloat, 0.f));
    Value* hi = b.constant("hi", Tensor::scalar(DataType::kFloat, 6.f));
    b.output(b.op("Clip", {x, lo, hi}));
    b.output(b.op("Clip", {x, nullptr, hi}));
    b.output(b.op("Clip", {x}));
    b.output(b.op("Clip", {x, x}));  // a bound that is not a constant
  });
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  EXPECT_EQ(d[0], (Activation{.kind = ActKind::kClip, .alpha = 0.f, .beta = 6.f}));
  EXPECT_EQ(d[1], (Activation{.kind = ActKind::kClip, .alpha = kLowest, .beta = 6.f}));
  EXPECT_EQ(d[2], (Activation{.kind = ActKind::kClip, .alpha = kLowest,
                              .beta = std::numeric_limits<float>::max()}));
  EXPECT_FALSE(d[3]);
}

TEST(Activation, EpilogueForm) {
  using V = std::vector<Activation>;
  EXPECT_EQ(epilogue_form({.kind = ActKind::kRelu}), (V{{.kind = ActKind::kLeakyRelu}}));
  EXPECT_EQ(epilogue_form({.kind = ActKind::kNeg}), (V{{.kind = ActKind::kLinear, .alpha = -1.f}}));
  EXPECT_EQ(epilogue_form({.kind = ActKind::kHardSigmoid, .alpha = 0.2f, .beta = 0.5f}),
            (V{{.kind = ActKind::kLinear, .alpha = 0.2f, .beta = 0.5f},
               {.kind = ActKind::kClip, .alpha = 0.f, .beta = 1.f}}));
  EXPECT_EQ(epilogue_form({.kind = ActKind::kTanh}), (V{{.kind = ActKind::kTanh}}));
  EXPECT_FALSE(epilogue_form({.kind = ActKind::kErf}));
}

}  // namespace
}  // namespace kiln::engine
