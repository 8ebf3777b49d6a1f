// cpu.lstm against the reference kernel: directions, layouts, bias, initial states, peepholes,
// batches and sequences of several steps; a clipped LSTM goes to the reference kernel.
#include <gtest/gtest.h>

#include "engine/compiled_model.h"
#include "engine/engine_test_util.h"
#include "engine/onednn/weight_cache.h"
#include "runtime/compare.h"

namespace kiln::engine {
namespace {

using testing::attr;
using testing::expect_same_as_reference;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::steps_of;

struct LstmCase {
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = true, peepholes = false, clip = false;
  int64_t seq = 5, batch = 3, input = 7, hidden = 8;
  // Sums over 200+ units of weights in [-1, 1] round differently from the reference's doubles.
  double tolerance = 1e-4;
};

PlanSummary check(const LstmCase& c) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, H = c.hidden;
  const std::vector<int64_t> x_dims = c.layout ? std::vector<int64_t>{c.batch, c.seq, c.input}
                                               : std::vector<int64_t>{c.seq, c.batch, c.input};
  const std::vector<int64_t> state = c.layout ? std::vector<int64_t>{c.batch, D, H}
                                              : std::vector<int64_t>{D, c.batch, H};
  const auto make = [&] {
    ModelBuilder b(14);
    std::vector<Value*> ins = {b.input("x", shape_of(x_dims)),
                               b.constant("w", random_tensor({D, 4 * H, c.input}, 2)),
                               b.constant("r", random_tensor({D, 4 * H, H}, 3))};
    ins.push_back(c.bias ? b.constant("b", random_tensor({D, 8 * H}, 4)) : nullptr);
    ins.push_back(nullptr);  // sequence_lens
    ins.push_back(c.initial ? b.input("h0", shape_of(state)) : nullptr);
    ins.push_back(c.initial ? b.input("c0", shape_of(state)) : nullptr);
    if (c.peepholes) ins.push_back(b.constant("p", random_tensor({D, 3 * H}, 5)));
    std::vector<Attribute> attrs = {attr("hidden_size", H), attr("direction", c.direction),
                                    attr("layout", c.layout)};
    if (c.clip) attrs.push_back(attr("clip", 0.5f));
    for (Value* v : b.node("LSTM", ins, attrs, 3)) b.output(v);
    return b.take();
  };
  std::vector<Tensor> feeds = {random_tensor(x_dims, 1)};
  if (c.initial) feeds.push_back(random_tensor(state, 6)), feeds.push_back(random_tensor(state, 7));
  const auto s = expect_same_as_reference(make, feeds, c.tolerance, c.tolerance / 10);
  EXPECT_EQ(steps_of(s, "cpu.lstm"), 1);
  return s;
}

std::string lstm_line(const PlanSummary& s) {
  const size_t at = s.listing.find("cpu.lstm");
  return at == std::string::npos ? "" : s.listing.substr(at, s.listing.find('\n', at) - at);
}

TEST(RecurrentKernels, LstmForward) { check({}); }
TEST(RecurrentKernels, LstmReverseWithoutBiasOrState) {
  check({.direction = "reverse", .bias = false, .initial = false});
}
TEST(RecurrentKernels, LstmBidirectionalBatchFirst) {
  check({.direction = "bidirectional", .layout = 1});
}
TEST(RecurrentKernels, LstmPeepholes) { check({.direction = "bidirectional", .peepholes = true}); }
TEST(RecurrentKernels, LstmOneStep) { check({.seq = 1, .batch = 1, .input = 128, .hidden = 128}); }
TEST(RecurrentKernels, ClippedLstmOnTheReferenceKernel) { check({.clip = true}); }
// Batch 1 runs on the packed recurrent weights (blocks of 64 units, panels of 16): 200 units are
// three whole blocks and one of 8 (a partial panel), split over the threads where there are two;
// 37 units one block of three panels, the last partial, on one thread.
TEST(RecurrentKernels, LstmBatchOnePacked) {
  check({.direction = "bidirectional", .layout = 1, .peepholes = true, .seq = 6, .batch = 1,
         .input = 20, .hidden = 200, .tolerance = 1e-3});
  check({.direction = "reverse", .seq = 4, .batch = 1, .hidden = 37});
  check({.seq = 3, .batch = 1, .hidden = 256, .tolerance = 1e-3});  // an odd number of steps: the state ends in h
}
// The packed R is made once per model and shared by its plans: a new sequence length makes a
// plan, not a second packing (a speech stream would hold one per length it met).
TEST(RecurrentKernels, LstmPacksAreSharedByThePlansOfNewLengths) {
  const int64_t H = 64, I = 16;
  const auto make = [&] {
    ModelBuilder b(14);
    std::vector<Value*> ins = {b.input("x", {Dim::symbol("seq"), 1, I}),
                               b.constant("w", random_tensor({1, 4 * H, I}, 2)),
                               b.constant("r", random_tensor({1, 4 * H, H}, 3))};
    for (Value* v : b.node("LSTM", ins, {attr("hidden_size", H)}, 3)) b.output(v);
    return b.take();
  };
  CompiledModel m(make());
  Session ref(make());
  size_t packed = 0;
  for (int64_t seq : {3, 5, 2}) {
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({seq, 1, I}, seq))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-4, 1e-5});
    EXPECT_TRUE(c.equal) << "seq " << seq << ": " << c.reason;
    if (!packed) packed = m.weight_cache().bytes();
    EXPECT_EQ(m.weight_cache().bytes(), packed) << "seq " << seq;
  }
  EXPECT_EQ(m.plans(), 3);
  EXPECT_GE(packed, size_t{4 * H * H * sizeof(float)});  // R's panels
}

// A recurrence of a few microseconds (Silero VAD v4's: one step of 64 units) runs on one thread:
// on two, oneDNN split its input projection and each run woke the second thread (0.156 -> 0.40
// ms where the threads sleep between regions). A big one stays on the plan's threads.
TEST(RecurrentKernels, ASmallRecurrenceRunsOnOneThread) {
  const PlanSummary small = check({.seq = 1, .batch = 1, .input = 64, .hidden = 64});
  EXPECT_NE(lstm_line(small).find("[1 thread]"), std::string::npos) << small.listing;
  const PlanSummary big = check({.seq = 3, .batch = 1, .hidden = 256, .tolerance = 1e-3});
  EXPECT_EQ(lstm_line(big).find("[1 thread]"), std::string::npos) << big.listing;
}
// Batches of products big enough to split their units over the threads (sgemm per gate block).
TEST(RecurrentKernels, LstmBatchedUnitsOverThreads) {
  check({.direction = "bidirectional", .peepholes = true, .seq = 4, .batch = 3, .hidden = 128});
}

}  // namespace
}  // namespace kiln::engine
