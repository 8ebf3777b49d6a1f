// cpu.patch_deconv (ConvTranspose with kernel == strides, or few output channels) against the
// reference ConvTranspose: odd sizes, one output channel, one input channel, unequal strides,
// cropping pads, output_padding, overlapping and dilated patches, batches, the bias and the chain
// after it; what it does not take goes to onednn.deconv.
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

struct Case {
  V x, w;  // w: [C, M, kh, kw]
  std::vector<Attribute> attrs;
  const char* after = "Relu";  // the op after the ConvTranspose ("": none)
};

Model patch_model(const Case& c, bool bias) {
  ModelBuilder b;
  std::vector<Value*> ins = {b.input("x", shape_of(c.x)), b.constant("w", random_tensor(c.w, 2))};
  if (bias) ins.push_back(b.constant("b", random_tensor({c.w[1]}, 3)));
  Value* y = b.op("ConvTranspose", ins, c.attrs);
  if (std::string(c.after) == "Relu") y = b.op("Relu", {y});
  else if (std::string(c.after) == "HardSigmoid") y = b.op("HardSigmoid", {y});
  else if (std::string(c.after) == "BiasSigmoidScale") {  // a bias Add, Sigmoid, a scalar Mul
    V bd = {1, c.w[1], 1, 1};
    y = b.op("Sigmoid", {b.op("Add", {y, b.constant("b2", random_tensor(bd, 4))})});
    y = b.op("Mul", {y, b.constant("s", random_tensor({}, 5))});
  } else if (std::string(c.after) == "AddTensor") {  // a full-size operand: not fused
    y = b.op("LeakyRelu", {y}, {attr("alpha", 0.2f)});
    y = b.op("Add", {y, b.input("z", shape_of({c.x[0], c.w[1], 1, 1}))});
  }
  b.output(y);
  return b.take();
}

TEST(PatchDeconv, MatchesTheReference) {
  const std::vector<Case> cases = {
      {{1, 24, 9, 11}, {24, 1, 2, 2}, {attr("strides", V{2, 2})}, ""},  // OC = 1
      {{1, 24, 8, 8}, {24, 24, 2, 2}, {attr("strides", V{2, 2}), attr("kernel_shape", V{2, 2})}},
      {{2, 5, 7, 6}, {5, 17, 3, 2}, {attr("strides", V{3, 2})}, "HardSigmoid"},
      {{1, 1, 5, 7}, {1, 3, 2, 2}, {attr("strides", V{2, 2})}},  // one input channel
      {{1, 6, 5, 5}, {6, 70, 2, 2}, {attr("strides", V{2, 2})}, "BiasSigmoidScale"},  // 280 columns
      {{1, 4, 6, 5}, {4, 3, 2, 2}, {attr("strides", V{2, 2}), attr("pads", V{1, 0, 0, 1})}},
      {{1, 4, 5, 4}, {4, 2, 2, 3},
       {attr("strides", V{2, 3}), attr("pads", V{1, 2, 1, 0}), attr("output_padding", V{1, 2})}},
      {{1, 3, 4, 4}, {3, 5, 2, 2}, {attr("strides", V{2, 2}), attr("output_padding", V{1, 1})}},
      {{2, 8, 4, 3}, {8, 4, 2, 2}, {attr("strides", V{2, 2})}, "AddTensor"},
      {{1, 4, 1, 1}, {4, 1, 4, 4}, {attr("strides", V{4, 4})}},  // one pixel
      // overlapping or dilated patches, few output channels
      {{1, 6, 7, 6}, {6, 1, 3, 3}, {attr("strides", V{2, 2}), attr("pads", V{1, 1, 1, 1}), attr("output_padding", V{1, 1})}},
      {{2, 5, 6, 7}, {5, 3, 3, 3}, {attr("pads", V{1, 1, 1, 1})}, "HardSigmoid"},
      {{1, 4, 5, 6}, {4, 2, 4, 4}, {attr("strides", V{2, 2}), attr("pads", V{1, 1, 1, 1})}},
      {{1, 4, 6, 5}, {4, 15, 3, 2}, {attr("dilations", V{2, 3}), attr("pads", V{2, 1, 0, 2})}, "BiasSigmoidScale"},
      {{1, 24, 5, 5}, {24, 8, 3, 5}, {attr("strides", V{3, 2})}},
  };
  for (size_t i = 0; i < cases.size(); ++i)
    for (bool bias : {true, false}) {
      SCOPED_TRACE("case " + std::to_string(i) + (bias ? " with bias" : ""));
      const Case c = cases[i];
      const bool add_tensor = std::string(c.after) == "AddTensor";
      std::vector<Tensor> feeds(add_tensor ? 2 : 1);
      feeds[0] = random_tensor(c.x, 1);
      if (add_tensor) feeds[1] = random_tensor({c.x[0], c.w[1], 1, 1}, 6);
      const auto s = expect_same_as_reference([&] { return patch_model(c, bias); }, feeds);
      EXPECT_EQ(steps_of(s, "cpu.patch_deconv"), 1);
      EXPECT_EQ(steps_of(s, "onednn.deconv"), 0);
      EXPECT_EQ(steps_of(s, "reference"), 0);
      // the chain is fused but for the Add of a full-size operand
      EXPECT_EQ(steps_of(s, "cpu.elementwise"), add_tensor ? 1 : 0);
    }
}

// A 2x upsampling of 64 -> 32 channels at 32x32 (a UNet's) is 16.8 MFLOP but moves under 1 MB:
// it runs on the plan's threads, not on one as a step of few bytes would (it once did: the
// step's "all threads" was read as "not chosen" and chosen again by its bytes).
TEST(PatchDeconv, ManyFlopsOnFewBytesRunOnAllThreads) {
  const Case c{{1, 64, 32, 32}, {64, 32, 2, 2}, {attr("strides", V{2, 2})}};
  const auto s = expect_same_as_reference([&] { return patch_model(c, true); }, {random_tensor(c.x, 1)});
  ASSERT_EQ(steps_of(s, "cpu.patch_deconv"), 1);
  const size_t at = s.listing.find("cpu.patch_deconv");
  const std::string line = s.listing.substr(at, s.listing.find('\n', at) - at);
  EXPECT_EQ(line.find("[1 thread]"), std::string::npos) << line;
  // and a step that small in both is marked as running on one
  const Case small{{1, 4, 4, 4}, {4, 4, 2, 2}, {attr("strides", V{2, 2})}};
  const auto t = expect_same_as_reference([&] { return patch_model(small, true); }, {random_tensor(small.x, 1)});
  EXPECT_NE(t.listing.find("[1 thread]"), std::string::npos) << t.listing;
}

TEST(PatchDeconv, OtherGeometriesGoToOnednn) {
  const std::vector<Case> cases = {
      {{1, 4, 5, 5}, {4, 2, 2, 2}, {attr("strides", V{2, 2}), attr("group", int64_t{2})}},
      {{1, 4, 5, 5}, {4, 16, 2, 2}, {attr("strides", V{2, 2}), attr("dilations", V{2, 2})}},
      {{1, 4, 5, 5}, {4, 16, 3, 3}, {attr("strides", V{2, 2})}},  // overlapping, 16 channels
      {{1, 4, 5}, {4, 2, 2}, {attr("strides", V{2})}},  // 1-D
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Case c = cases[i];
    const auto make = [c] {
      ModelBuilder b;
      b.output(b.op("ConvTranspose", {b.input("x", shape_of(c.x)), b.constant("w", random_tensor(c.w, 2))},
                    c.attrs));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor(c.x, 1)});
    EXPECT_EQ(steps_of(s, "cpu.patch_deconv"), 0);
    EXPECT_EQ(steps_of(s, "onednn.deconv"), 1);
  }
}

}  // namespace
}  // namespace kiln::engine
