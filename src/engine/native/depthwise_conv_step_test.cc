// cpu.depthwise_conv against the reference Conv: EfficientNet's block (a 1x1 expansion conv, SiLU,
// the depthwise conv with its bias and SiLU) takes the SiLU before the depthwise conv away from
// the expansion conv, at strides 1 and 2, 3x3 and 5x5, with a partial channel block and batches;
// a squeeze-and-excitation's GlobalAveragePool of the result is summed alongside; a 2-D depthwise
// conv whose input SiLU is read elsewhere too, or without one, stays on oneDNN; 1-D ones (Silero
// VAD's) are taken alone, with their bias and activation.
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

Value* silu(ModelBuilder& b, Value* x) { return b.op("Mul", {x, b.op("Sigmoid", {x})}); }

struct Block {
  V x;  // [N, C, H, W] into the expansion conv
  int64_t expanded, k, stride;
  bool silu_before = true;    // the depthwise conv's input is SiLU(expansion)
  bool silu_read_too = false;  // and that SiLU is a graph output as well
  std::string after = "silu";  // "silu", "relu6" or ""
  bool squeeze = false;         // then squeeze-and-excitation and a 1x1 projection
};

Model block_model(const Block& c) {
  ModelBuilder b;
  Value* e = b.op("Conv", {b.input("x", shape_of(c.x)),
                           b.constant("we", random_tensor({c.expanded, c.x[1], 1, 1}, 2)),
                           b.constant("be", random_tensor({c.expanded}, 3))});
  Value* in = c.silu_before ? silu(b, e) : b.op("Relu", {e});
  const int64_t p = c.k / 2;
  Value* y = b.op("Conv", {in, b.constant("wd", random_tensor({c.expanded, 1, c.k, c.k}, 4)),
                           b.constant("bd", random_tensor({c.expanded}, 5))},
                  {attr("group", c.expanded), attr("strides", V{c.stride, c.stride}),
                   attr("pads", V{p, p, p, p})});
  if (c.after == "silu") y = silu(b, y);
  if (c.after == "relu6")
    y = b.op("Clip", {y, b.constant("lo", Tensor::scalar(DataType::kFloat, 0)),
                      b.constant("hi", Tensor::scalar(DataType::kFloat, 6))});
  if (c.squeeze) {
    const int64_t e = c.expanded;
    Value* z = b.op("Conv", {b.op("GlobalAveragePool", {y}), b.constant("w1", random_tensor({e / 4, e, 1, 1}, 6))});
    z = b.op("Sigmoid", {b.op("Conv", {silu(b, z), b.constant("w2", random_tensor({e, e / 4, 1, 1}, 7))})});
    y = b.op("Conv", {b.op("Mul", {y, z}), b.constant("wp", random_tensor({c.x[1], e, 1, 1}, 8))});
  }
  b.output(y);
  if (c.silu_read_too) b.output(in);
  return b.take();
}

TEST(DepthwiseConvStep, TakesTheSiluBeforeIt) {
  const std::vector<Block> blocks = {
      {{1, 8, 12, 12}, 32, 3, 1},
      {{1, 8, 13, 11}, 48, 3, 2},
      {{2, 6, 10, 10}, 20, 5, 1, true, false, "relu6"},  // a partial block of 4 channels
      {{1, 16, 14, 14}, 64, 5, 2, true, false, ""},
      {{1, 16, 14, 14}, 96, 3, 1, true, false, "silu", true},  // the pool summed alongside
      {{2, 8, 9, 9}, 40, 5, 2, true, false, "silu", true},
  };
  for (size_t i = 0; i < blocks.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(i));
    const Block& c = blocks[i];
    const auto s = expect_same_as_reference([&] { return block_model(c); }, {random_tensor(c.x, 1)}, 1e-4, 1e-4);
    EXPECT_EQ(steps_of(s, "cpu.depthwise_conv"), 1) << s.listing;
    EXPECT_EQ(steps_of(s, "onednn.conv"), c.squeeze ? 4 : 1);  // the expansion, without the SiLU
    EXPECT_EQ(steps_of(s, "onednn.pool"), 0);
    EXPECT_EQ(steps_of(s, "reference"), 0);
  }
}

TEST(DepthwiseConvStep, LeavesOtherDepthwiseConvsToOnednn) {
  const std::vector<Block> blocks = {
      {{1, 8, 12, 12}, 32, 3, 1, false},       // Relu before: oneDNN fuses it into the expansion
      {{1, 8, 12, 12}, 32, 3, 1, true, true},  // the SiLU is an output too
  };
  for (size_t i = 0; i < blocks.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(i));
    const Block& c = blocks[i];
    const auto s = expect_same_as_reference([&] { return block_model(c); }, {random_tensor(c.x, 1)}, 1e-4, 1e-4);
    EXPECT_EQ(steps_of(s, "cpu.depthwise_conv"), 0) << s.listing;
    EXPECT_EQ(steps_of(s, "onednn.conv"), 2);
  }
}

// 1-D depthwise convs, which oneDNN 2.6 runs as a gemm per channel: taken with or without what
// follows, channels in whole blocks or not, strides 1 and 2.
TEST(DepthwiseConvStep, TakesOneDimensionalOnes) {
  struct Case {
    V x;
    int64_t k, stride;
    bool relu_after;
  };
  for (const Case& c : {Case{{1, 258, 8}, 5, 1, false}, Case{{2, 32, 17}, 3, 2, true},
                        Case{{1, 16, 4}, 5, 1, true}, Case{{1, 40, 30}, 7, 1, false}}) {
    SCOPED_TRACE(dims_to_string(c.x));
    const auto make = [&] {
      ModelBuilder b;
      const int64_t ch = c.x[1], p = c.k / 2;
      Value* y = b.op("Conv", {b.input("x", shape_of(c.x)), b.constant("w", random_tensor({ch, 1, c.k}, 2)),
                               b.constant("b", random_tensor({ch}, 3))},
                      {attr("group", ch), attr("strides", V{c.stride}), attr("pads", V{p, p})});
      if (c.relu_after) y = b.op("Relu", {y});
      b.output(y);
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor(c.x, 1)}, 1e-4, 1e-4);
    EXPECT_EQ(steps_of(s, "cpu.depthwise_conv"), 1) << s.listing;
    EXPECT_EQ(steps_of(s, "onednn.conv"), 0);
    EXPECT_EQ(steps_of(s, "reference"), 0);
  }
}

}  // namespace
}  // namespace kiln::engine
