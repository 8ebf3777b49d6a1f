// cpu.gru against the reference kernel: both linear_before_reset forms, directions, layouts, bias,
// initial state, batches and sequences of several steps; a clipped GRU goes to the reference kernel.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using testing::attr;
using testing::expect_same_as_reference;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::steps_of;

struct GruCase {
  std::string direction = "forward";
  int64_t layout = 0, linear_before_reset = 1;
  bool bias = true, initial = true, clip = false;
  int64_t seq = 5, batch = 3, input = 7, hidden = 8;
  // Sums over 200+ units of weights in [-1, 1] round differently from the reference's doubles.
  double tolerance = 1e-4;
};

void check(const GruCase& c) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, H = c.hidden;
  const std::vector<int64_t> x_dims = c.layout ? std::vector<int64_t>{c.batch, c.seq, c.input}
                                               : std::vector<int64_t>{c.seq, c.batch, c.input};
  const std::vector<int64_t> state = c.layout ? std::vector<int64_t>{c.batch, D, H}
                                              : std::vector<int64_t>{D, c.batch, H};
  const auto make = [&] {
    ModelBuilder b(14);
    std::vector<Value*> ins = {b.input("x", shape_of(x_dims)),
                               b.constant("w", random_tensor({D, 3 * H, c.input}, 2)),
                               b.constant("r", random_tensor({D, 3 * H, H}, 3))};
    ins.push_back(c.bias ? b.constant("b", random_tensor({D, 6 * H}, 4)) : nullptr);
    ins.push_back(nullptr);  // sequence_lens
    ins.push_back(c.initial ? b.input("h0", shape_of(state)) : nullptr);
    std::vector<Attribute> attrs = {attr("hidden_size", H), attr("direction", c.direction),
                                    attr("layout", c.layout),
                                    attr("linear_before_reset", c.linear_before_reset)};
    if (c.clip) attrs.push_back(attr("clip", 0.5f));
    for (Value* v : b.node("GRU", ins, attrs, 2)) b.output(v);
    return b.take();
  };
  std::vector<Tensor> feeds = {random_tensor(x_dims, 1)};
  if (c.initial) feeds.push_back(random_tensor(state, 6));
  const auto s = expect_same_as_reference(make, feeds, c.tolerance, c.tolerance / 10);
  EXPECT_EQ(steps_of(s, "cpu.gru"), 1);
}

TEST(RecurrentKernels, GruForwardLinearBeforeReset) { check({}); }
TEST(RecurrentKernels, GruResetBeforeTheProduct) { check({.linear_before_reset = 0}); }
TEST(RecurrentKernels, GruReverseWithoutBiasOrState) {
  check({.direction = "reverse", .bias = false, .initial = false});
}
TEST(RecurrentKernels, GruBidirectionalBatchFirst) {
  check({.direction = "bidirectional", .layout = 1, .linear_before_reset = 0});
}
TEST(RecurrentKernels, GruOneStepWide) { check({.seq = 1, .batch = 1, .input = 128, .hidden = 128}); }
TEST(RecurrentKernels, ClippedGruOnTheReferenceKernel) { check({.clip = true}); }
// Batch 1 on the packed recurrent weights (lstm_step_test.cc), in both forms: with
// linear_before_reset one pack of the three gates, without one of z and r and one of the
// candidate's, a barrier between (r * h of every unit first).
TEST(RecurrentKernels, GruBatchOnePacked) {
  for (int64_t lbr : {1, 0}) {
    SCOPED_TRACE("linear_before_reset " + std::to_string(lbr));
    check({.direction = "bidirectional", .layout = 1, .linear_before_reset = lbr, .seq = 6,
           .batch = 1, .input = 20, .hidden = 230, .tolerance = 1e-3});
    check({.direction = "reverse", .linear_before_reset = lbr, .seq = 3, .batch = 1, .hidden = 37});
  }
}
TEST(RecurrentKernels, GruBatchedUnitsOverThreads) {
  for (int64_t lbr : {1, 0}) {
    SCOPED_TRACE("linear_before_reset " + std::to_string(lbr));
    check({.direction = "bidirectional", .linear_before_reset = lbr, .seq = 4, .batch = 3, .hidden = 128});
  }
}

}  // namespace
}  // namespace kiln::engine
