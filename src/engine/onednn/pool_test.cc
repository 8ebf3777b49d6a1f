// onednn.pool and cpu.pool against the reference pools: kernels, strides, pads, ceil_mode,
// dilations, count_include_pad, global pools, on a conv's output (in channel blocks: cpu.pool's
// for Max/AveragePool 2-D without dilations) and on a plain input (oneDNN's).
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

TEST(OnednnPool, Geometries) {
  using V = std::vector<int64_t>;
  const std::vector<std::pair<std::string, std::vector<Attribute>>> cases = {
      {"MaxPool", {attr("kernel_shape", V{3, 3}), attr("strides", V{2, 2}), attr("pads", V{1, 1, 1, 1})}},
      {"MaxPool", {attr("kernel_shape", V{3, 3}), attr("strides", V{2, 2}), attr("ceil_mode", int64_t{1})}},
      {"MaxPool", {attr("kernel_shape", V{2, 2}), attr("dilations", V{2, 2})}},
      {"AveragePool", {attr("kernel_shape", V{3, 3}), attr("pads", V{1, 1, 1, 1})}},
      {"AveragePool", {attr("kernel_shape", V{3, 3}), attr("pads", V{1, 1, 1, 1}), attr("count_include_pad", int64_t{1})}},
      {"AveragePool", {attr("kernel_shape", V{2, 3}), attr("strides", V{2, 2}), attr("ceil_mode", int64_t{1})}},
      {"AveragePool", {attr("kernel_shape", V{3, 3}), attr("auto_pad", std::string("SAME_UPPER")), attr("strides", V{2, 2})}},
      {"GlobalAveragePool", {}},
      {"GlobalMaxPool", {}},
  };
  for (bool after_conv : {false, true}) {
    for (size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(cases[i].first + " case " + std::to_string(i) + (after_conv ? " after a conv" : ""));
      const auto make = [&, i] {
        ModelBuilder b;
        Value* x = b.input("x", {1, 5, 11, 12});
        if (after_conv) x = b.op("Conv", {x, b.constant("w", random_tensor({16, 5, 1, 1}, 2))});
        b.output(b.op(cases[i].first, {x}, cases[i].second));
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor({1, 5, 11, 12}, 1)});
      EXPECT_EQ(steps_of(s, "onednn.pool") + steps_of(s, "cpu.pool"), 1) << s.listing;
      if (!after_conv) {
        EXPECT_EQ(steps_of(s, "onednn.pool"), 1) << s.listing;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::engine
