// onednn.batch_norm against the reference BatchNormalization.
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

// BatchNormalization with its statistics, plain and after a conv, with and without a Relu.
TEST(OnednnBatchNorm, InferenceWithAndWithoutRelu) {
  for (bool after_conv : {false, true}) {
    for (bool relu : {false, true}) {
      SCOPED_TRACE(std::string(after_conv ? "after a conv" : "plain") + (relu ? ", relu" : ""));
      const auto make = [=] {
        ModelBuilder b;
        Value* x = b.input("x", {2, 6, 5, 7});
        if (after_conv) x = b.op("Conv", {x, b.constant("w", random_tensor({6, 6, 1, 1}, 2))});
        Value* y = b.op("BatchNormalization",
                        {x, b.constant("s", random_tensor({6}, 3)), b.constant("b", random_tensor({6}, 4)),
                         b.constant("m", random_tensor({6}, 5)), b.constant("v", random_tensor({6}, 6, 0.5f, 2))},
                        {attr("epsilon", 1e-3f)});
        b.output(relu ? b.op("Relu", {y}) : y);
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor({2, 6, 5, 7}, 1)});
      EXPECT_EQ(steps_of(s, "onednn.batch_norm"), 1);
      EXPECT_EQ(steps_of(s, "cpu.elementwise"), 0);  // the Relu is fused
    }
  }
}

}  // namespace
}  // namespace kiln::engine
