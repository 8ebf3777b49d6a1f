// onednn.concat, onednn.split and onednn.slice against the reference kernels.
#include "engine/cpu/cpu_features.h"
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

// Concat of conv outputs along the channels and Split back, in their channels-last layout: in
// memory order a row-major concat, so cpu.concat's copies (oneDNN's concat ran at 13 GB/s).
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
  if (!convs_write_channels_last()) GTEST_SKIP() << "this CPU's convs write channel-blocked outputs";
  EXPECT_EQ(steps_of(s, "cpu.concat"), 1);
  EXPECT_EQ(steps_of(s, "onednn.concat"), 0);
  EXPECT_EQ(steps_of(s, "onednn.split"), 2);
  EXPECT_LE(steps_of(s, "onednn.reorder"), 3);  // the input and the two outputs
}

// Channels-last pieces along another axis (H, W, batch), and channel-blocked pieces (Winograd's
// outputs), which stay on oneDNN's concat.
TEST(OnednnConcatSplit, ConcatOfLaidOutPieces) {
  for (int64_t axis : {0, 1, 2, 3})
    for (bool winograd : {false, true}) {
      SCOPED_TRACE(fmt::format("axis {}, winograd {}", axis, winograd));
      const auto make = [axis] {
        ModelBuilder b;
        Value* x = b.input("x", {2, 8, 6, 5});
        Value* a = b.op("Conv", {x, b.constant("wa", random_tensor({16, 8, 3, 3}, 2))},
                        {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
        Value* c = b.op("Conv", {x, b.constant("wc", random_tensor({16, 8, 3, 3}, 3))},
                        {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
        Value* cat = b.op("Concat", {a, c}, {attr("axis", axis)});
        b.output(b.op("Relu", {cat}));
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor({2, 8, 6, 5}, 1)}, 1e-4, 1e-5,
                                              {.winograd = winograd});
      if (!convs_write_channels_last()) continue;  // the outputs were checked; the steps are AVX-512's
      EXPECT_EQ(steps_of(s, "cpu.concat") + steps_of(s, "onednn.concat"), 1);
      if (!winograd) {
        EXPECT_EQ(steps_of(s, "cpu.concat"), 1);
      }
    }
}

// A 1x1 conv's channels-last output next to a Winograd conv's channel-blocked one (DenseNet's
// concats): joined by kiln's copies, not oneDNN's reference concat; channels-last, as 24
// channels are not whole blocks.
TEST(OnednnConcatSplit, MixedLayoutsJoinChannelsLast) {
  for (int64_t channels : {16, 32}) {
    SCOPED_TRACE(fmt::format("{} channels", channels));
    const auto make = [channels] {
      ModelBuilder b;
      Value* x = b.input("x", {2, 8, 7, 6});
      Value* a = b.op("Conv", {x, b.constant("wa", random_tensor({24, 8, 1, 1}, 2))});
      Value* c = b.op("Conv", {x, b.constant("wc", random_tensor({channels, 8, 3, 3}, 3))},
                      {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
      Value* cat = b.op("Concat", {a, c, a}, {attr("axis", int64_t{1})});
      b.output(b.op("Conv", {cat, b.constant("wo", random_tensor({4, 48 + channels, 1, 1}, 4))}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor({2, 8, 7, 6}, 1)});
    EXPECT_EQ(steps_of(s, "cpu.concat"), 1);
    EXPECT_EQ(steps_of(s, "onednn.concat"), 0);
  }
}

// Channels-last and channel-blocked pieces that all fill whole blocks join blocked (what follows
// stays blocked). With one image a blocked piece is one run of the result and its producer writes
// it there, unless it is given twice (the second is copied) or read after the concat.
TEST(OnednnConcatSplit, MixedWholeBlocksJoinBlockedInPlace) {
  for (int64_t batch : {1, 2}) {
    SCOPED_TRACE(fmt::format("batch {}", batch));
    const auto make = [batch] {
      ModelBuilder b;
      // a stem of 8 channels (not whole blocks) stays channels-last, and so does a after it
      Value* x = b.op("Conv", {b.input("x", {batch, 8, 7, 6}), b.constant("ws", random_tensor({8, 8, 1, 1}, 6))});
      const auto pads = attr("pads", std::vector<int64_t>{1, 1, 1, 1});
      Value* a = b.op("Conv", {x, b.constant("wa", random_tensor({16, 8, 1, 1}, 2))});
      // c by Winograd where AVX-512 runs it (16 channels in: fewer are not), so channel-blocked
      Value* x16 = b.op("Conv", {x, b.constant("w16", random_tensor({16, 8, 1, 1}, 7))});
      Value* c = b.op("Conv", {x16, b.constant("wc", random_tensor({32, 16, 3, 3}, 3))}, {pads});
      Value* d = b.op("Conv", {x, b.constant("wd", random_tensor({16, 8, 3, 3}, 5))}, {pads});
      Value* cat = b.op("Concat", {a, c, d, c}, {attr("axis", int64_t{1})});
      b.output(b.op("Conv", {cat, b.constant("wo", random_tensor({4, 96, 1, 1}, 4))}));
      b.output(b.op("Relu", {d}));  // d is read after the concat
      return b.take();
    };
    // (within Winograd's error)
    const auto s = expect_same_as_reference(make, {random_tensor({batch, 8, 7, 6}, 1)}, 1e-3, 1e-3);
    EXPECT_EQ(steps_of(s, "cpu.concat"), 1);
    EXPECT_EQ(steps_of(s, "onednn.concat"), 0);
    if (batch == 2) {
      EXPECT_EQ(inputs_in_place(s), 0);
    }
    // Winograd's blocked outputs where AVX-512 runs it: c in place
    if (batch == 1 && cpu::active_isa() == cpu::Isa::kAvx512) {
      EXPECT_EQ(inputs_in_place(s), 1) << s.listing;
    }
  }
}

// DenseNet's layers: the features so far concatenated, then BatchNormalization and Relu. Where
// every piece is read elsewhere too (copied anyway), the normalization is applied as they are
// copied; the last concat, whose newest piece is read by it alone, keeps its normalization step
// (its pieces may be written in place). Without the Relu, and in batches, too.
TEST(OnednnConcatSplit, NormalizationAfterAConcatIsAppliedAsItCopies) {
  for (int64_t batch : {1, 2})
    for (bool relu : {true, false}) {
      SCOPED_TRACE(fmt::format("batch {}{}", batch, relu ? "" : ", no relu"));
      const auto make = [=] {
        ModelBuilder b;
        const auto pads = attr("pads", std::vector<int64_t>{1, 1, 1, 1});
        int seed = 10;
        auto norm = [&](Value* v, int64_t c) {
          Value* y = b.op("BatchNormalization",
                          {v, b.constant("s" + std::to_string(seed), random_tensor({c}, seed + 1)),
                           b.constant("b" + std::to_string(seed), random_tensor({c}, seed + 2)),
                           b.constant("m" + std::to_string(seed), random_tensor({c}, seed + 3)),
                           b.constant("v" + std::to_string(seed), random_tensor({c}, seed + 4, 0.5f, 2.0f))},
                          {attr("epsilon", 1e-3f)});
          seed += 5;
          return relu ? b.op("Relu", {y}) : y;
        };
        auto conv = [&](Value* v, int64_t in, int64_t out) {
          return b.op("Conv", {v, b.constant("w" + std::to_string(seed), random_tensor({out, in, 3, 3}, seed))}, {pads});
        };
        Value* f0 = conv(b.input("x", {batch, 8, 10, 10}), 8, 16);
        Value* f1 = conv(norm(f0, 16), 16, 32);
        Value* c1 = b.op("Concat", {f0, f1}, {attr("axis", int64_t{1})});
        Value* f2 = conv(norm(c1, 48), 48, 16);
        Value* c2 = b.op("Concat", {f0, f1, f2}, {attr("axis", int64_t{-3})});
        b.output(conv(norm(c2, 64), 64, 8));
        return b.take();
      };
      // three Winograd convs in a row, unbounded without the Relus: their error reaches 4e-4
      const auto s = expect_same_as_reference(make, {random_tensor({batch, 8, 10, 10}, 1)}, 1e-3, 1e-3);
      // blocks of 16 (AVX-512) or of 8 (AVX2's convs write nChw8c): c1's normalization goes
      if (cpu::active_isa() == cpu::Isa::kAvx512 || cpu::active_isa() == cpu::Isa::kAvx2) {
        EXPECT_EQ(steps_of(s, "onednn.batch_norm"), 2) << s.listing;
        EXPECT_EQ(steps_of(s, "cpu.concat"), 2);
      }
    }
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
    if (convs_write_channels_last()) {
      EXPECT_EQ(steps_of(s, "onednn.slice"), c.onednn);
    }
  }
}

}  // namespace
}  // namespace kiln::engine
