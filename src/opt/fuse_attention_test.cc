// fuse-attention: scaled dot-product attention -> Attention (opset 23), in the 4-D form and, where
// the heads are split and merged by Reshape + Transpose (torch's BERT export), the 3-D form.
#include <gtest/gtest.h>

#include "opt/graph_edit.h"
#include "opt/opt_test_util.h"

namespace kiln::opt {
namespace {

using namespace test_util;  // NOLINT: the shared test helpers

// Q [2,4,5,8], K given as [2,4,5,8] and transposed, an additive mask broadcast over the heads and
// the query positions.
const char* kSdpa4d = R"(
      kt = Transpose <perm = [0, 1, 3, 2]> (k)
      s = MatMul(q, kt)
      c = Constant <value = float {2.828427}> ()
      sd = Div(s, c)
      sm = Add(sd, mask)
      p = Softmax <axis = -1> (sm)
      y = MatMul(p, v)
)";
const char* kSig4d =
    "(float[2,4,5,8] q, float[2,4,5,8] k, float[2,4,5,8] v, float[2,1,1,5] mask) => "
    "(float[2,4,5,8] y)";

TEST(OptAttention, ScaledDotProductBecomesAttentionAtOpset23) {
  auto o = optimize_text(model(23, kSig4d, kSdpa4d), {"fuse-attention", "dce"});
  // The mask broadcasts over the query positions, which ONNX Runtime 1.30 rejects: expanded.
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Attention", 1}, {"Expand", 1}}));
  for (const auto& n : o.model.graph->nodes())
    if (n->op_type == "Attention") {
      EXPECT_NEAR(attr_float(*n, "scale", 0), 1 / 2.828427, 1e-6);
      EXPECT_EQ(n->inputs[1]->name, "k");  // K^T's transpose is gone
    }
}

TEST(OptAttention, BelowOpset23NamesTheOpsetAndRaisingFuses) {
  auto o = optimize_text(model(17, kSig4d, kSdpa4d), {"fuse-attention"});
  EXPECT_EQ(o.ops.at("Softmax"), 1);
  EXPECT_TRUE(near_missed(o.result, "fuse-attention", "opset 23"));
  auto raised = optimize_text(model(17, kSig4d, kSdpa4d), {"raise-opset", "fuse-attention", "dce"},
                              PassOptions{.target_opset = 23});
  EXPECT_EQ(raised.ops.at("Attention"), 1);
}

TEST(OptAttention, UnscaledWithoutMaskAndKeysNotTransposed) {
  auto o = optimize_text(
      model(23, "(float[1,2,3,4] q, float[1,2,4,6] kt, float[1,2,6,5] v) => (float[1,2,3,5] y)", R"(
      s = MatMul(q, kt)
      p = Softmax(s)
      y = MatMul(p, v)
  )"),
      {"fuse-attention", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Attention", 1}, {"Transpose", 1}}));
}

// BERT as torch exports it: heads split from [N, T, 32] by Reshape + Transpose, K^T by a
// Transpose of [0, 2, 3, 1], the result merged back; symbolic batch and sequence.
TEST(OptAttention, HeadSplitAndMergeGoIntoThe3DForm) {
  auto o = optimize_text(
      model(23,
            "(float[N,T,32] xq, float[N,T,32] xk, float[N,T,32] xv, float[N,1,1,T] mask) => "
            "(float[N,T,32] y)",
            R"(
      heads = Constant <value = int64[4] {0, 0, 4, 8}> ()
      rq = Reshape(xq, heads)
      q = Transpose <perm = [0, 2, 1, 3]> (rq)
      rk = Reshape(xk, heads)
      kt = Transpose <perm = [0, 2, 3, 1]> (rk)
      rv = Reshape(xv, heads)
      v = Transpose <perm = [0, 2, 1, 3]> (rv)
      s = MatMul(q, kt)
      c = Constant <value = float {0.35355339}> ()
      sc = Mul(c, s)
      sm = Add(mask, sc)
      p = Softmax <axis = 3> (sm)
      a = MatMul(p, v)
      t = Transpose <perm = [0, 2, 1, 3]> (a)
      hidden = Constant <value = int64[3] {0, 0, 32}> ()
      y = Reshape(t, hidden)
  )"),
      {"fuse-attention", "dce"});
  // The mask is expanded to [N, 1, T, 1] with T read from Q at run time (ONNX Runtime 1.30).
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{
                       {"Attention", 1}, {"Shape", 1}, {"Concat", 1}, {"Expand", 1}}));
  for (const auto& n : o.model.graph->nodes())
    if (n->op_type == "Attention") {
      EXPECT_EQ(attr_int(*n, "q_num_heads", 0), 4);
      EXPECT_EQ(attr_int(*n, "kv_num_heads", 0), 4);
      EXPECT_EQ(n->inputs[0]->name, "xq");
    }
  EXPECT_EQ(o.model.graph->outputs[0]->name, "y");
}

TEST(OptAttention, ScoresScaledByATensorAreANearMiss) {
  auto o = optimize_text(
      model(23, "(float[1,2,3,4] q, float[1,2,4,3] kt, float[1,2,3,4] v, float[1,2,3,3] w) => "
                "(float[1,2,3,4] y)",
            R"(
      s = MatMul(q, kt)
      sw = Mul(s, w)
      p = Softmax(sw)
      y = MatMul(p, v)
  )"),
      {"fuse-attention", "dce"});
  EXPECT_EQ(o.ops.count("Attention"), 0u);
  EXPECT_TRUE(near_missed(o.result, "fuse-attention", "scalar constant"));
}

}  // namespace
}  // namespace kiln::opt
