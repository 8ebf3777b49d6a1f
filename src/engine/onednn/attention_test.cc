// Attention-23 on the engine (onednn.attention) against the reference kernel: 3-D and 4-D, odd
// sizes, masks of each broadcast form (float and bool, shorter than the kv length), causal; and
// the cases it leaves to the reference kernel (GQA, softcap).
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using testing::attr;
using testing::expect_same_as_reference;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::steps_of;

struct Case {
  std::string name;
  bool three_d = true;
  int64_t B = 2, Hq = 3, Hk = 3, Sq = 5, L = 7, Dh = 4, Dv = 6;
  std::vector<int64_t> mask;  // dims; empty: none
  bool bool_mask = false;
  int64_t causal = 0;
  float softcap = 0;
  bool scale = false;
};

std::vector<int64_t> qkv_dims(const Case& c, int64_t heads, int64_t S, int64_t D) {
  if (c.three_d) return {c.B, S, heads * D};
  return {c.B, heads, S, D};
}

PlanSummary check(const Case& c) {
  SCOPED_TRACE(c.name);
  const auto make = [&] {
    ModelBuilder b(23);
    std::vector<Value*> ins{b.input("q", shape_of(qkv_dims(c, c.Hq, c.Sq, c.Dh))),
                            b.input("k", shape_of(qkv_dims(c, c.Hk, c.L, c.Dh))),
                            b.input("v", shape_of(qkv_dims(c, c.Hk, c.L, c.Dv)))};
    if (!c.mask.empty())
      ins.push_back(b.input("mask", shape_of(c.mask), c.bool_mask ? DataType::kBool : DataType::kFloat));
    std::vector<Attribute> attrs{attr("is_causal", c.causal)};
    if (c.three_d) {
      attrs.push_back(attr("q_num_heads", c.Hq));
      attrs.push_back(attr("kv_num_heads", c.Hk));
    }
    if (c.softcap != 0) attrs.push_back(attr("softcap", c.softcap));
    if (c.scale) attrs.push_back(attr("scale", 0.3f));
    b.output(b.op("Attention", ins, attrs));
    return b.take();
  };
  std::vector<Tensor> feeds{random_tensor(qkv_dims(c, c.Hq, c.Sq, c.Dh), 1, -2, 2),
                            random_tensor(qkv_dims(c, c.Hk, c.L, c.Dh), 2, -2, 2),
                            random_tensor(qkv_dims(c, c.Hk, c.L, c.Dv), 3)};
  if (!c.mask.empty()) {
    Tensor m = random_tensor(c.mask, 4, -3, 1);
    if (c.bool_mask) {
      Tensor mb(DataType::kBool, c.mask);
      for (int64_t i = 0; i < m.numel(); ++i) mb.data<bool>()[i] = m.data<float>()[i] > -1;
      m = std::move(mb);
    } else {
      for (int64_t i = 0; i < m.numel(); i += 5) m.data<float>()[i] = -INFINITY;
    }
    feeds.push_back(std::move(m));
  }
  return expect_same_as_reference(make, feeds);
}

TEST(OnednnAttention, CommonCasesMatchTheReference) {
  std::vector<Case> cases{
      {.name = "3-D"},
      {.name = "4-D", .three_d = false},
      {.name = "3-D scale", .scale = true},
      {.name = "causal", .Sq = 7, .causal = 1},
      {.name = "4-D causal, Sq < L", .three_d = false, .causal = 1},
      {.name = "mask [Sq, L]", .mask = {5, 7}},
      {.name = "mask [B, 1, 1, L]", .mask = {2, 1, 1, 7}},
      {.name = "mask [1, H, Sq, L]", .three_d = false, .mask = {1, 3, 5, 7}},
      {.name = "mask [B, H, Sq, L] causal", .mask = {2, 3, 5, 7}, .causal = 1},
      {.name = "mask [H, Sq, L] shorter than L", .mask = {3, 5, 4}},
      {.name = "bool mask [B, 1, Sq, L]", .mask = {2, 1, 5, 7}, .bool_mask = true},
      {.name = "one of each", .B = 1, .Hq = 1, .Hk = 1, .Sq = 1, .L = 1, .Dh = 1, .Dv = 1},
      {.name = "odd sizes", .B = 3, .Hq = 5, .Hk = 5, .Sq = 33, .L = 17, .Dh = 13, .Dv = 11,
       .mask = {1, 17}},
  };
  for (const Case& c : cases) {
    const auto s = check(c);
    EXPECT_EQ(steps_of(s, "onednn.attention"), 1) << c.name;
    EXPECT_EQ(steps_of(s, "reference"), 0) << c.name;
  }
}

TEST(OnednnAttention, OtherCasesStayOnTheReferenceKernel) {
  for (const Case& c : {Case{.name = "GQA", .Hq = 4, .Hk = 2}, Case{.name = "softcap", .softcap = 5}}) {
    const auto s = check(c);
    EXPECT_EQ(steps_of(s, "onednn.attention"), 0) << c.name;
    EXPECT_EQ(steps_of(s, "reference"), 1) << c.name;
  }
}

}  // namespace
}  // namespace kiln::engine
