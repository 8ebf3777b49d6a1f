// GraphFacts' constant folding: small computed values at once, large ones (a weight's
// DequantizeLinear) when first asked for, with the same values; neither runs as a step.
#include "engine/graph_facts.h"

#include "engine/onednn/quant_test_util.h"
#include "ops/infer.h"

namespace kiln::engine {
namespace {

using namespace testing;

const Node* producer(const Model& m, const Value* v) {
  for (const auto& n : m.graph->nodes())
    for (const Value* o : n->outputs)
      if (o == v) return n.get();
  return nullptr;
}

TEST(GraphFacts, LargeFoldsAreComputedWhenAskedForWithTheSameValues) {
  ModelBuilder b;
  Value* x = b.input("x", shape_of({2, 512}));
  const Tensor w_big = random_int8({512, 256}, 3), w_small = random_int8({16, 16}, 4);
  Value* big = b.op("DequantizeLinear", {b.constant("wb", w_big), b.constant("sb", scalar_f(0.02f))});
  Value* small = b.op("DequantizeLinear", {b.constant("ws", w_small), b.constant("ss", scalar_f(0.5f))});
  b.output(b.op("MatMul", {x, big}));
  b.output(small);
  Model m = b.take();
  infer_shapes(m);
  const GraphFacts f(m, {{2, 512}});
  ASSERT_GT(w_big.numel(), GraphFacts::kEagerFoldElements);
  EXPECT_TRUE(f.folded(producer(m, big)));
  EXPECT_TRUE(f.folded(producer(m, small)));
  EXPECT_TRUE(f.has_constant(big));
  EXPECT_TRUE(f.has_constant(small));
  ASSERT_NE(f.dims(big), nullptr);
  EXPECT_EQ(*f.dims(big), (std::vector<int64_t>{512, 256}));
  for (auto [v, w, s] : {std::tuple{big, &w_big, 0.02f}, std::tuple{small, &w_small, 0.5f}}) {
    const Tensor* t = f.constant(v);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->numel(), w->numel());
    for (int64_t i = 0; i < t->numel(); ++i)
      ASSERT_EQ(t->data<float>()[i], static_cast<float>(w->data<int8_t>()[i]) * s) << i;
    EXPECT_EQ(f.constant(v), t);  // computed once, kept
  }
}

}  // namespace
}  // namespace kiln::engine
