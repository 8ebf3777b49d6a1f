// The plan cache: least recently used out first, lookups counted, and a CompiledModel keeping at
// most EngineOptions::max_plans plans while every shape still runs right.
#include "engine/plan_cache.h"

#include "engine/compiled_model.h"
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

TEST(LruCache, EvictsTheLeastRecentlyUsed) {
  LruCache<int, int> c(2);
  c.insert(1, std::make_unique<int>(10));
  c.insert(2, std::make_unique<int>(20));
  ASSERT_NE(c.find(1), nullptr);  // 1 is now the most recent: 2 goes first
  c.insert(3, std::make_unique<int>(30));
  EXPECT_EQ(c.find(2), nullptr);
  ASSERT_NE(c.find(1), nullptr);
  EXPECT_EQ(*c.find(1), 10);
  EXPECT_EQ(*c.find(3), 30);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.evicted(), 1);
}

TEST(LruCache, CapacityIsAtLeastOne) {
  LruCache<int, int> c(0);
  c.insert(1, std::make_unique<int>(1));
  c.insert(2, std::make_unique<int>(2));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.find(1), nullptr);
  EXPECT_EQ(*c.find(2), 2);
}

Model matmul_relu(Shape input) {
  ModelBuilder b;
  Value* x = b.input("x", std::move(input));
  Value* y = b.op("Relu", {b.op("MatMul", {x, b.constant("w", random_tensor({32, 16}, 3))})});
  b.output(y);
  return b.take();
}

TEST(CompiledModelPlanCache, KeepsMaxPlansAndCountsWhatItMadeAndReused) {
  const auto make = [] { return matmul_relu({Dim::symbol("batch"), Dim::symbol("seq"), 32}); };
  CompiledModel m(make(), EngineOptions{.max_plans = 2});
  Session ref(make());
  // seq 5, 7, 5 (reused), 9 (evicts 7, the least recently used), 7 (evicts 5), 5 (evicts 9)
  for (int64_t seq : {5, 7, 5, 9, 7, 5}) {
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({1, seq, 32}, seq))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-5, 1e-5});
    EXPECT_TRUE(c.equal) << "seq " << seq << ": " << c.reason;
  }
  const PlanCacheStats s = m.plan_stats();
  EXPECT_EQ(s.made, 5);
  EXPECT_EQ(s.reused, 1);
  EXPECT_EQ(s.evicted, 3);
  EXPECT_EQ(s.kept, 2u);
  EXPECT_EQ(m.plans(), 2);
  EXPECT_GT(s.planning_ms, 0);
}

}  // namespace
}  // namespace kiln::engine
