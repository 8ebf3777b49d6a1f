// The channel shuffle step against the reference Session: between convolutions (channels-last,
// no row-major Transpose left) and on a row-major graph input; two and three groups, odd and
// zero sizes.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using testing::attr;
using testing::expect_same_as_reference;
using testing::int64_tensor;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::steps_of;

// x [n, c, h, w] -> shuffle in `groups` -> [n, c, h, w]
Value* shuffle(ModelBuilder& b, Value* x, std::vector<int64_t> d, int64_t groups) {
  Value* to5 = b.constant("to5_" + x->name,
                          int64_tensor({5}, {d[0], groups, d[1] / groups, d[2], d[3]}));
  Value* to4 = b.constant("to4_" + x->name, int64_tensor({4}, d));
  Value* r = b.op("Reshape", {x, to5}, {attr("allowzero", int64_t{1})});  // zero dims stay zero
  Value* t = b.op("Transpose", {r}, {attr("perm", std::vector<int64_t>{0, 2, 1, 3, 4})});
  return b.op("Reshape", {t, to4}, {attr("allowzero", int64_t{1})});
}

// Between two convolutions the shuffle adds no reorder: the plan has as many as without it.
TEST(ChannelShuffle, BetweenConvolutions) {
  const auto make = [](bool with_shuffle) {
    ModelBuilder b;
    Value* x = b.input("x", {1, 32, 5, 7});
    Value* c = b.op("Conv", {x, b.constant("w", random_tensor({48, 32, 1, 1}, 3))});
    if (with_shuffle) c = shuffle(b, c, {1, 48, 5, 7}, 3);
    b.output(b.op("Conv", {c, b.constant("w2", random_tensor({32, 48, 3, 3}, 4))},
                  {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}));
    return b.take();
  };
  const Tensor x = random_tensor({1, 32, 5, 7}, 1);
  // (float convolutions of 432 terms against the reference's doubles: the models' tolerance)
  const auto s = expect_same_as_reference([&] { return make(true); }, {x}, 1e-3, 1e-4);
  const auto plain = expect_same_as_reference([&] { return make(false); }, {x}, 1e-3, 1e-4);
  EXPECT_EQ(steps_of(s, "cpu.channel_shuffle"), 1);
  EXPECT_EQ(steps_of(s, "cpu.transpose"), 0);
  EXPECT_EQ(steps_of(s, "onednn.reorder"), steps_of(plain, "onednn.reorder"));
}

TEST(ChannelShuffle, RowMajorInput) {
  for (std::vector<int64_t> d : {std::vector<int64_t>{2, 6, 3, 5}, std::vector<int64_t>{1, 4, 0, 3}}) {
    const auto make = [&] {
      ModelBuilder b;
      Value* x = b.input("x", shape_of(d));
      b.output(shuffle(b, x, d, 2));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor(d, 2)});
    EXPECT_EQ(steps_of(s, "cpu.channel_shuffle"), 1);
  }
}

}  // namespace
}  // namespace kiln::engine
