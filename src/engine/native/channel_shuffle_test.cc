// The channel shuffle step against the reference Session: between convolutions (channels-last,
// no row-major Transpose left) and on a row-major graph input; two and three groups, odd and
// zero sizes.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using testing::attr;
using testing::convs_write_channels_last;
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
  // direct convs: channels-last throughout (with Winograd's the first conv would write blocked)
  const EngineOptions direct{.winograd = false};
  const auto s = expect_same_as_reference([&] { return make(true); }, {x}, 1e-3, 1e-4, direct);
  const auto plain = expect_same_as_reference([&] { return make(false); }, {x}, 1e-3, 1e-4, direct);
  EXPECT_EQ(steps_of(s, "cpu.channel_shuffle"), 1);
  EXPECT_EQ(steps_of(s, "cpu.transpose"), 0);
  if (convs_write_channels_last()) {
    EXPECT_EQ(steps_of(s, "onednn.reorder"), steps_of(plain, "onednn.reorder"));
  }
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

// ShuffleNet's block: the concat of the groups, shuffled, is one pass that interleaves them, for
// conv outputs (channels-last; odd channel counts and 2 or 3 groups) and row-major graph inputs
// (batch 2). A concat whose result is also read elsewhere is left alone.
TEST(ChannelShuffle, ConcatOfTheGroupsInOnePass) {
  for (int64_t groups : {2, 3})
    for (int64_t per : {5, 58}) {
      SCOPED_TRACE(fmt::format("{} groups of {}", groups, per));
      const auto make = [=] {
        ModelBuilder b;
        Value* x = b.input("x", {1, 8, 5, 7});
        std::vector<Value*> pieces;
        for (int64_t g = 0; g < groups; ++g)
          pieces.push_back(b.op("Conv", {x, b.constant("w" + std::to_string(g),
                                                       random_tensor({per, 8, 1, 1}, 3 + g))}));
        Value* cat = b.op("Concat", pieces, {attr("axis", int64_t{1})});
        Value* y = shuffle(b, cat, {1, groups * per, 5, 7}, groups);
        b.output(b.op("Conv", {y, b.constant("wo", random_tensor({4, groups * per, 1, 1}, 9))}));
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor({1, 8, 5, 7}, 1)}, 1e-3, 1e-4);
      EXPECT_EQ(steps_of(s, "cpu.concat_shuffle"), 1);
      EXPECT_EQ(steps_of(s, "cpu.concat") + steps_of(s, "cpu.channel_shuffle"), 0);
      if (convs_write_channels_last()) {
        EXPECT_EQ(steps_of(s, "onednn.reorder"), 2);  // the graph input and output only
      }
    }
  for (bool cat_read_elsewhere : {false, true}) {
    const auto make = [=] {
      ModelBuilder b;
      Value* a = b.input("a", {2, 3, 4, 5});
      Value* c = b.input("c", {2, 3, 4, 5});
      Value* cat = b.op("Concat", {a, c}, {attr("axis", int64_t{-3})});
      b.output(shuffle(b, cat, {2, 6, 4, 5}, 2));
      if (cat_read_elsewhere) b.output(cat);
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor({2, 3, 4, 5}, 1), random_tensor({2, 3, 4, 5}, 2)});
    EXPECT_EQ(steps_of(s, "cpu.concat_shuffle"), cat_read_elsewhere ? 0 : 1);
  }
}

}  // namespace
}  // namespace kiln::engine
