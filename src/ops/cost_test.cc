#include "ops/cost.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

struct Built {
  Graph g;
  Node* n = nullptr;
};

Value* value(Graph& g, const std::string& name, DataType t, Shape s) {
  Value* v = g.add_value(name);
  v->type = TypeInfo::tensor(t, std::move(s));
  return v;
}

// A node of `op` with inputs and output 0 of the given float shapes.
void build(Built& b, const std::string& op, const std::vector<Shape>& ins, const Shape& out) {
  b.n = b.g.add_node(op);
  for (size_t i = 0; i < ins.size(); ++i)
    b.g.set_input(b.n, static_cast<int>(i), value(b.g, "in" + std::to_string(i), DataType::kFloat, ins[i]));
  b.g.set_output(b.n, 0, value(b.g, "out", DataType::kFloat, out));
}

void set_ints(Node* n, const char* name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.kind = AttrKind::kInts;
  a.ints = std::move(v);
  n->attrs.push_back(a);
}

TEST(Cost, ConvMacsAndBytes) {
  Built b;
  build(b, "Conv", {Shape{1, 3, 8, 8}, Shape{16, 3, 3, 3}}, Shape{1, 16, 6, 6});
  const NodeCost c = node_cost(*b.n);
  EXPECT_DOUBLE_EQ(c.macs, 16.0 * 36 * 27);
  EXPECT_DOUBLE_EQ(c.flops, 2 * c.macs);
  EXPECT_DOUBLE_EQ(c.bytes, 4.0 * (3 * 64 + 16 * 27 + 16 * 36));
  EXPECT_TRUE(c.exact);
}

TEST(Cost, MatMulAndGemm) {
  Built mm;
  build(mm, "MatMul", {Shape{2, 5, 7}, Shape{7, 3}}, Shape{2, 5, 3});
  EXPECT_DOUBLE_EQ(node_cost(*mm.n).macs, 2.0 * 5 * 3 * 7);
  Built gemm;
  build(gemm, "Gemm", {Shape{7, 5}, Shape{7, 3}, Shape{3}}, Shape{5, 3});
  Attribute ta;
  ta.name = "transA";
  ta.kind = AttrKind::kInt;
  ta.i = 1;
  gemm.n->attrs.push_back(ta);
  const NodeCost c = node_cost(*gemm.n);
  EXPECT_DOUBLE_EQ(c.macs, 15.0 * 7);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 15.0 * 7 + 15);  // plus C
}

TEST(Cost, ConvTransposeCountsPerInputElement) {
  Built b;
  build(b, "ConvTranspose", {Shape{1, 4, 5, 5}, Shape{4, 2, 3, 3}}, Shape{1, 2, 7, 7});
  EXPECT_DOUBLE_EQ(node_cost(*b.n).macs, 100.0 * 18);
}

TEST(Cost, ElementwiseNormsPoolsSoftmaxReductions) {
  auto flops = [](const std::string& op, std::vector<Shape> ins, Shape out) {
    Built b;
    build(b, op, ins, out);
    if (op == "MaxPool") set_ints(b.n, "kernel_shape", {3, 3});
    return node_cost(*b.n).flops;
  };
  EXPECT_DOUBLE_EQ(flops("Add", {Shape{4, 8}, Shape{8}}, Shape{4, 8}), 32);
  EXPECT_DOUBLE_EQ(flops("Sum", {Shape{10}, Shape{10}, Shape{10}}, Shape{10}), 20);
  EXPECT_DOUBLE_EQ(flops("BatchNormalization", {Shape{1, 2, 3, 3}}, Shape{1, 2, 3, 3}), 36);
  EXPECT_DOUBLE_EQ(flops("LayerNormalization", {Shape{2, 8}}, Shape{2, 8}), 7 * 16);
  EXPECT_DOUBLE_EQ(flops("Softmax", {Shape{2, 8}}, Shape{2, 8}), 5 * 16);
  EXPECT_DOUBLE_EQ(flops("MaxPool", {Shape{1, 1, 6, 6}}, Shape{1, 1, 2, 2}), 4 * 9);
  EXPECT_DOUBLE_EQ(flops("GlobalAveragePool", {Shape{1, 4, 5, 5}}, Shape{1, 4, 1, 1}), 100);
  EXPECT_DOUBLE_EQ(flops("ReduceSum", {Shape{6, 10}, Shape{1}}, Shape{6, 1}), 60);
  EXPECT_DOUBLE_EQ(flops("Reshape", {Shape{6, 10}, Shape{2}}, Shape{60}), 0);
  EXPECT_DOUBLE_EQ(flops("Transpose", {Shape{6, 10}}, Shape{10, 6}), 0);
}

TEST(Cost, Recurrent) {
  // LSTM: X [seq 5, batch 2, input 8], W [1, 4*16, 8], R [1, 4*16, 16].
  Built b;
  build(b, "LSTM", {Shape{5, 2, 8}, Shape{1, 64, 8}, Shape{1, 64, 16}}, Shape{5, 1, 2, 16});
  const NodeCost c = node_cost(*b.n);
  EXPECT_DOUBLE_EQ(c.macs, 10.0 * 64 * (8 + 16));
  EXPECT_DOUBLE_EQ(c.flops, 2 * c.macs + 3 * 10.0 * 64);
}

TEST(Cost, Attention) {
  // Q [B 1, H 2, Sq 4, D 8], K [1, 2, 6, 8], V [1, 2, 6, 8]: QK^T and PV.
  Built b;
  build(b, "Attention", {Shape{1, 2, 4, 8}, Shape{1, 2, 6, 8}, Shape{1, 2, 6, 8}},
        Shape{1, 2, 4, 8});
  const NodeCost c = node_cost(*b.n);
  EXPECT_DOUBLE_EQ(c.macs, 8.0 * 6 * 16);
  EXPECT_DOUBLE_EQ(c.flops, 2 * c.macs + 5 * 8.0 * 6);
}

TEST(Cost, ShapeReadsNoData) {
  Built b;
  b.n = b.g.add_node("Shape");
  b.g.set_input(b.n, 0, value(b.g, "x", DataType::kFloat, Shape{100, 100}));
  b.g.set_output(b.n, 0, value(b.g, "s", DataType::kInt64, Shape{2}));
  EXPECT_DOUBLE_EQ(node_cost(*b.n).bytes, 16);
}

TEST(Cost, ViewsAndGathersMoveOnlyWhatTheyTouch) {
  Built reshape;  // a view: only the int64 target shape is read
  reshape.n = reshape.g.add_node("Reshape");
  reshape.g.set_input(reshape.n, 0, value(reshape.g, "x", DataType::kFloat, Shape{64, 64}));
  reshape.g.set_input(reshape.n, 1, value(reshape.g, "s", DataType::kInt64, Shape{1}));
  reshape.g.set_output(reshape.n, 0, value(reshape.g, "y", DataType::kFloat, Shape{4096}));
  EXPECT_DOUBLE_EQ(node_cost(*reshape.n).bytes, 8);

  Built gather;  // 3 rows of a 1000 x 16 table: the rows, the indices and the output
  gather.n = gather.g.add_node("Gather");
  gather.g.set_input(gather.n, 0, value(gather.g, "table", DataType::kFloat, Shape{1000, 16}));
  gather.g.set_input(gather.n, 1, value(gather.g, "ids", DataType::kInt64, Shape{3}));
  gather.g.set_output(gather.n, 0, value(gather.g, "rows", DataType::kFloat, Shape{3, 16}));
  EXPECT_DOUBLE_EQ(node_cost(*gather.n).bytes, 3 * 16 * 4 + 3 * 8 + 3 * 16 * 4);
}

TEST(Cost, SymbolicDimsAreInexactRunShapesExact) {
  Built b;
  build(b, "MatMul", {Shape{Dim::symbol("batch"), 16}, Shape{16, 4}}, Shape{Dim::symbol("batch"), 4});
  const NodeCost inferred = node_cost(*b.n);
  EXPECT_FALSE(inferred.exact);
  EXPECT_DOUBLE_EQ(inferred.macs, 4.0 * 16);  // batch taken as 1

  const RtValue x = RtValue::of(Tensor(DataType::kFloat, {8, 16}));
  const RtValue w = RtValue::of(Tensor(DataType::kFloat, {16, 4}));
  const RtValue y = RtValue::of(Tensor(DataType::kFloat, {8, 4}));
  const std::vector<OperandShape> ins = {OperandShape::of(&x), OperandShape::of(&w)};
  const std::vector<OperandShape> outs = {OperandShape::of(&y)};
  const NodeCost run = node_cost(*b.n, ins, outs);
  EXPECT_TRUE(run.exact);
  EXPECT_DOUBLE_EQ(run.macs, 8.0 * 4 * 16);
  EXPECT_DOUBLE_EQ(run.bytes, 4.0 * (128 + 64 + 32));
  EXPECT_EQ(ins[0].dtype, DataType::kFloat);
}

TEST(Cost, FusedOpOfAnotherDomainCountsAsItsBase) {
  Built b;
  build(b, "FusedConv", {Shape{1, 3, 8, 8}, Shape{16, 3, 3, 3}}, Shape{1, 16, 6, 6});
  b.n->domain = "com.microsoft";
  EXPECT_DOUBLE_EQ(node_cost(*b.n).macs, 16.0 * 36 * 27);
}

}  // namespace
}  // namespace kiln
