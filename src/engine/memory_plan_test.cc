// The memory plan on hand-made steps: buffers reused by lifetime, in-place outputs, and inputs
// placed inside a concat's output (PlacedInput) only where nothing else can see them move.
#include "engine/memory_plan.h"

#include <gtest/gtest.h>

namespace kiln::engine {
namespace {

class NoOp : public Step {
 public:
  void run(RunState&) override {}
};

struct Steps {
  std::vector<SlotInfo> slots;
  std::vector<std::unique_ptr<Step>> steps;

  int slot(int64_t floats, SlotInfo::Source source = SlotInfo::Source::kStep) {
    slots.push_back({.name = "s" + std::to_string(slots.size()), .dtype = DataType::kFloat,
                     .dims = std::vector<int64_t>{floats}, .source = source});
    return static_cast<int>(slots.size()) - 1;
  }
  Step& step(std::vector<int> in, int out, int share = -1) {
    auto st = std::make_unique<NoOp>();
    st->inputs = std::move(in);
    st->outputs.push_back({.slot = out, .share = share});
    steps.push_back(std::move(st));
    return *steps.back();
  }
  // A concat of `pieces` (each `floats` long) into out: each placed at its run of it.
  Step& concat(const std::vector<int>& pieces, int64_t floats, int out) {
    Step& st = step(pieces, out);
    for (size_t k = 0; k < pieces.size(); ++k)
      st.placed_inputs.push_back({pieces[k], out, k * floats * sizeof(float)});
    return st;
  }
};

TEST(MemoryPlan, PiecesWrittenInsideTheConcat) {
  Steps p;
  const int x = p.slot(64, SlotInfo::Source::kInput);
  const int a = p.slot(64), b = p.slot(64), cat = p.slot(128), y = p.slot(128);
  p.step({x}, a);
  p.step({x}, b);
  p.concat({a, b}, 64, cat);
  p.step({cat}, y);
  const MemoryPlan mp = plan_memory(p.slots, p.steps, {y});
  EXPECT_EQ(mp.offset[a], mp.offset[cat]);
  EXPECT_EQ(mp.offset[b], mp.offset[cat] + 256);
  EXPECT_EQ(mp.placed[2], (std::vector<int>{a, b}));
  EXPECT_EQ(mp.arena_bytes, 512u);  // cat and y: the pieces take no bytes of their own
}

TEST(MemoryPlan, PiecesThatOthersSeeAreCopied) {
  Steps p;
  const int x = p.slot(64, SlotInfo::Source::kInput);
  const int a = p.slot(64), b = p.slot(64), c = p.slot(64), d = p.slot(64);
  const int cat = p.slot(256), y = p.slot(256), later = p.slot(64);
  p.step({x}, a);
  p.step({x}, b);
  p.step({b}, c, b);  // c takes b's buffer in place: b is not alone in it
  p.step({x}, d);
  p.concat({a, c, x, d, a}, 64, cat);  // x: a graph input; a: given twice
  p.step({cat}, y);
  p.step({d}, later);  // d is read after the concat
  const MemoryPlan mp = plan_memory(p.slots, p.steps, {y, later});
  EXPECT_EQ(mp.placed[4], (std::vector<int>{a}));
  EXPECT_EQ(mp.offset[a], mp.offset[cat]);
  for (int s : {b, c, d}) {
    const bool overlaps = mp.offset[s] < mp.offset[cat] + 1024 && mp.offset[cat] < mp.offset[s] + 256;
    EXPECT_FALSE(overlaps) << "slot " << s;
  }
}

TEST(MemoryPlan, NoPlacementIntoAGraphOutput) {
  Steps p;
  const int x = p.slot(64, SlotInfo::Source::kInput);
  const int a = p.slot(64), b = p.slot(64), cat = p.slot(128);
  p.step({x}, a);
  p.step({x}, b);
  p.concat({a, b}, 64, cat);
  const MemoryPlan mp = plan_memory(p.slots, p.steps, {cat});  // a tensor of its own
  EXPECT_TRUE(mp.placed[2].empty());
  EXPECT_EQ(mp.fresh_before[2], (std::vector<int>{cat}));
}

TEST(MemoryPlan, PiecesKeepTheConcatAliveFromTheFirst) {
  // a is written at step 0 into cat's bytes: nothing live between steps 0 and 3 may share them
  Steps p;
  const int x = p.slot(64, SlotInfo::Source::kInput);
  const int a = p.slot(64), t = p.slot(128), u = p.slot(64), cat = p.slot(128), y = p.slot(128);
  p.step({x}, a);
  p.step({x}, t);
  p.step({t}, u);
  p.concat({a, u}, 64, cat);
  p.step({cat}, y);
  const MemoryPlan mp = plan_memory(p.slots, p.steps, {y});
  ASSERT_EQ(mp.placed[3], (std::vector<int>{a, u}));
  const bool t_overlaps = mp.offset[t] < mp.offset[cat] + 512 && mp.offset[cat] < mp.offset[t] + 512;
  EXPECT_FALSE(t_overlaps);
}

}  // namespace
}  // namespace kiln::engine
