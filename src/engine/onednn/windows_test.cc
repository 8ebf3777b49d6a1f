// onednn.concat, onednn.split and onednn.slice against the reference kernels.
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

// Concat of conv outputs along the channels and Split back, in their channels-last layout.
TEST(OnednnConcatSplit, ChannelsLastStaysSo) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 8, 6, 5});
    Value* a = b.op("Conv", {x, b.constant("wa", random_tensor({16, 8, 1, 1}, 2))});
    Value* c = b.op("Conv", {x, b.constant("wc", random_tensor({16, 8, 3, 3}, 3))},
                    {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
    Value* cat = b.op("Concat", {a, c, a}, {attr("axis", int64_t{1})});
    auto parts = b.node("Split", {cat, b.constant("sizes", Tensor::from_int64s(std::vector<int64_t>{20, 28}))},
                        {attr("axis", int64_t{1})}, 2);
    b.output(b.op("Conv", {parts[1], b.constant("wo", random_tensor({4, 28, 1, 1}, 4))}));
    b.output(parts[0]);
    return b.take();
  };
  // direct convs: channels-last throughout (Winograd's would be channel-blocked)
  const auto s = expect_same_as_reference(make, {random_tensor({1, 8, 6, 5}, 1)}, 1e-4, 1e-5,
                                          {.winograd = false});
  EXPECT_EQ(steps_of(s, "onednn.concat"), 1);
  EXPECT_EQ(steps_of(s, "onednn.split"), 2);
  EXPECT_LE(steps_of(s, "onednn.reorder"), 3);  // the input and the two outputs
}

// Slices with constant starts (negative, clamped, several axes) copy windows; steps other than 1
// stay on the reference kernel.
TEST(OnednnSlice, WindowsOfAChannelsLastTensor) {
  using V = std::vector<int64_t>;
  struct Case {
    V starts, ends, axes, steps;
    int onednn;
  };
  const std::vector<Case> cases = {
      {{0}, {6}, {1}, {}, 1}, {{6}, {100}, {1}, {}, 1}, {{-3, 1}, {1000, -1}, {1, 3}, {1, 1}, 1},
      {{0, 2}, {12, 4}, {1, 2}, {}, 1}, {{0}, {12}, {1}, {2}, 0}};
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Case c = cases[i];
    const auto make = [c] {
      ModelBuilder b;
      Value* x = b.op("Conv", {b.input("x", {1, 4, 6, 5}), b.constant("w", random_tensor({12, 4, 1, 1}, 2))});
      std::vector<Value*> ins = {x, b.constant("s", Tensor::from_int64s(c.starts)),
                                 b.constant("e", Tensor::from_int64s(c.ends)),
                                 b.constant("a", Tensor::from_int64s(c.axes))};
      if (!c.steps.empty()) ins.push_back(b.constant("st", Tensor::from_int64s(c.steps)));
      b.output(b.op("Slice", ins));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor({1, 4, 6, 5}, 1)});
    EXPECT_EQ(steps_of(s, "onednn.slice"), c.onednn);
  }
}

}  // namespace
}  // namespace kiln::engine
