// onednn.deconv against the reference ConvTranspose: strides, pads, output_padding, dilations,
// groups, 1-D and 3-D, with a fused bias and activation. (2-D ones of one group and under 16 output
// channels go to cpu.patch_deconv: patch_deconv_test.cc.)
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

TEST(OnednnDeconv, Geometries) {
  struct Case {
    V x, w;
    std::vector<Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {{1, 8, 7, 7}, {8, 16, 3, 3}, {}},
      {{1, 8, 7, 6}, {8, 16, 4, 4}, {attr("strides", V{2, 2}), attr("pads", V{1, 1, 1, 1})}},
      {{2, 4, 5, 5}, {4, 17, 3, 3}, {attr("strides", V{2, 2}), attr("pads", V{1, 1, 1, 1}), attr("output_padding", V{1, 1})}},
      {{1, 6, 6, 6}, {6, 2, 3, 3}, {attr("group", int64_t{3}), attr("strides", V{2, 2})}},
      {{1, 4, 6, 5}, {4, 16, 3, 3}, {attr("dilations", V{2, 2}), attr("pads", V{2, 1, 2, 1})}},
      {{1, 3, 9}, {3, 5, 4}, {attr("strides", V{3}), attr("pads", V{1, 2})}},
      {{1, 2, 3, 4, 4}, {2, 3, 2, 2, 2}, {attr("strides", V{2, 2, 2})}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Case c = cases[i];
    int64_t group = 1;  // the bias has M = w[1] * group values
    for (const Attribute& at : c.attrs)
      if (at.name == "group") group = at.i;
    const auto make = [c, group] {
      ModelBuilder b;
      Value* y = b.op("ConvTranspose", {b.input("x", shape_of(c.x)), b.constant("w", random_tensor(c.w, 2)),
                                        b.constant("b", random_tensor({c.w[1] * group}, 3))},
                      c.attrs);
      b.output(b.op("Relu", {y}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor(c.x, 1)});
    EXPECT_EQ(steps_of(s, "onednn.deconv"), 1);
    EXPECT_EQ(steps_of(s, "reference"), 0);
  }
}

TEST(OnednnDeconv, SamePadsStayOnTheReference) {
  const auto make = [] {
    ModelBuilder b;
    b.output(b.op("ConvTranspose", {b.input("x", {1, 2, 4, 4}), b.constant("w", random_tensor({2, 2, 3, 3}, 2))},
                  {attr("auto_pad", std::string("SAME_UPPER")), attr("strides", V{2, 2})}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({1, 2, 4, 4}, 1)});
  EXPECT_EQ(steps_of(s, "reference"), 1);
}

}  // namespace
}  // namespace kiln::engine
