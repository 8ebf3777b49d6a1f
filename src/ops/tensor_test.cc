// Unit tests of the tensor family: kernels on small tensors, index guards, and symbolic shape
// inference (what the conformance suite does not cover).
#include <gtest/gtest.h>

#include <limits>

#include "ir/scalar_types.h"
#include "ops/op.h"
#include "ops/op_test_util.h"
#include "support/error.h"

namespace kiln {
namespace {

using op_test::OpNode;
using op_test::make;
using op_test::values;

Dim sym(const std::string& s) { return Dim::symbol(s); }
TypeInfo ty(DataType dt, std::optional<Shape> s) { return TypeInfo::tensor(dt, std::move(s)); }
TypeInfo f32t(Shape s) { return ty(DataType::kFloat, std::move(s)); }
TypeInfo i64t(Shape s) { return ty(DataType::kInt64, std::move(s)); }

Tensor f32(std::vector<int64_t> d, std::vector<double> v) { return make(DataType::kFloat, d, v); }
Tensor i64(std::vector<int64_t> d, std::vector<double> v) { return make(DataType::kInt64, d, v); }
// Exact int64 values (set_f64 would round the large ones).
Tensor i64x(std::vector<int64_t> d, std::vector<int64_t> v) {
  Tensor t(DataType::kInt64, std::move(d));
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
Tensor strs(std::vector<int64_t> d, std::vector<std::string> v) {
  Tensor t(DataType::kString, std::move(d));
  for (size_t i = 0; i < v.size(); ++i) t.strings()[i] = v[i];
  return t;
}

std::vector<double> iota(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// Expects the kernel to fail cleanly (kRuntime) with a message containing `what`.
void expect_fail(OpNode& t, std::vector<Tensor> in, const std::string& what) {
  try {
    t.run(std::move(in));
    ADD_FAILURE() << "no error, expected: " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Shape inference with symbols

TEST(TensorInfer, ReshapeWithSymbolicDimsValue) {
  OpNode t("Reshape", 2);
  t.ins = {{f32t({sym("batch"), 3, 4})}, {i64t({2}), std::nullopt, std::vector<Dim>{sym("batch"), 12}}};
  t.infer();
  EXPECT_EQ(t.out_type(), "float[batch,12]");
}

TEST(TensorInfer, ReshapeMinusOneCancelsSymbols) {
  OpNode t("Reshape", 2);
  t.ins = {{f32t({sym("batch"), 3, 4})}, {i64t({2}), i64({2}, {0, -1})}};
  t.infer();
  EXPECT_EQ(t.out_type(), "float[batch,12]");

  OpNode u("Reshape", 2);
  u.ins = {{f32t({sym("batch"), sym("seq"), 768})}, {i64t({2}), i64({2}, {-1, 768})}};
  u.infer();
  EXPECT_EQ(u.out_type(), "float[batch*seq,768]");

  // [batch, seq, 768] -> [batch, seq, 12, -1]: the -1 is 64
  OpNode w("Reshape", 2);
  w.ins = {{f32t({sym("batch"), sym("seq"), 768})},
           {i64t({4}), std::nullopt, std::vector<Dim>{sym("batch"), sym("seq"), 12, Dim()}}};
  w.infer();
  EXPECT_EQ(w.out_type(), "float[batch,seq,12,64]");
}

// What an inference failure says ("" when it infers).
std::string infer_error(OpNode& t) {
  try {
    t.infer();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TensorInfer, SplitBeforeOpset18MakesEqualParts) {
  OpNode a("Split", 1, 2, 13);
  a.ins = {{f32t({5})}};
  EXPECT_NE(infer_error(a).find("node producing 'y0' (Split): a dim of 5 does not split evenly "
                                "into 2 outputs (Split-13 makes equal parts"),
            std::string::npos)
      << infer_error(a);
  EXPECT_THROW(a.run_all({f32({5}, iota(5))}), Error);
  OpNode b("Split", 1, 2, 18);  // since 18 the last part may be smaller
  b.ins = {{f32t({5})}};
  EXPECT_EQ(infer_error(b), "");
  EXPECT_EQ(b.out_type(1), "float[2]");
  OpNode c("Split", 1, 2, 13);
  c.ins = {{f32t({6})}};
  EXPECT_EQ(infer_error(c), "");
}

TEST(TensorInfer, OneHotDepthHoldsOneValueAndValuesTwo) {
  auto onehot = [](Shape depth, Shape vals) {
    OpNode t("OneHot", 3, 1, 11);
    t.ins = {{i64t({3})}, {i64t(std::move(depth))}, {f32t(std::move(vals))}};
    return infer_error(t);
  };
  EXPECT_EQ(onehot({}, {2}), "");
  EXPECT_EQ(onehot({1}, {2}), "");  // a 1-element vector, as ONNX accepts
  EXPECT_NE(onehot({2}, {2}).find("(OneHot): depth has 2 elements, expected one"),
            std::string::npos);
  EXPECT_NE(onehot({1, 1}, {2}).find("depth has rank 2"), std::string::npos);
  EXPECT_NE(onehot({}, {3}).find("values has 3 elements, expected 2"), std::string::npos);
  EXPECT_NE(onehot({}, {2, 1}).find("values has rank 2, expected 1"), std::string::npos);
}

TEST(TensorInfer, ReshapeUnknownTargetKeepsRank) {
  OpNode t("Reshape", 2);
  t.ins = {{f32t({2, 3})}, {i64t({3})}};
  t.infer();
  EXPECT_EQ(t.out_type(), "float[?,?,?]");
}

TEST(TensorInfer, ReshapeCountMismatchFails) {
  OpNode t("Reshape", 2);
  t.ins = {{f32t({2, 3})}, {i64t({1}), i64({1}, {7})}};
  EXPECT_THROW(t.infer(), Error);
}

TEST(TensorInfer, TorchShapeChain) {
  // Shape -> Gather(0) -> Unsqueeze -> Concat([b], [-1]) -> Reshape
  OpNode shape("Shape", 1);
  shape.ins = {{f32t({sym("batch"), sym("seq"), 4})}};
  shape.infer();
  EXPECT_EQ(shape.out_type(), "int64[3]");
  EXPECT_EQ(shape.out_value(), "[batch,seq,4]");

  OpNode gather("Gather", 2);
  gather.ins = {{i64t({3}), std::nullopt, *shape.values[0]}, {i64t({}), i64({}, {0})}};
  gather.infer();
  EXPECT_EQ(gather.out_type(), "int64[]");
  EXPECT_EQ(gather.out_value(), "[batch]");

  OpNode unsq("Unsqueeze", 2);
  unsq.ins = {{i64t({}), std::nullopt, *gather.values[0]}, {i64t({1}), i64({1}, {0})}};
  unsq.infer();
  EXPECT_EQ(unsq.out_type(), "int64[1]");
  EXPECT_EQ(unsq.out_value(), "[batch]");

  OpNode concat("Concat", 2);
  concat.attr_i("axis", 0);
  concat.ins = {{i64t({1}), std::nullopt, *unsq.values[0]}, {i64t({1}), i64({1}, {-1})}};
  concat.infer();
  EXPECT_EQ(concat.out_type(), "int64[2]");
  ASSERT_TRUE(concat.values[0] && concat.values[0]->size() == 2);
  EXPECT_EQ((*concat.values[0])[0].to_string(), "batch");  // then the -1

  OpNode reshape("Reshape", 2);
  reshape.ins = {{f32t({sym("batch"), sym("seq"), 4})}, {i64t({2}), std::nullopt, *concat.values[0]}};
  reshape.infer();
  EXPECT_EQ(reshape.out_type(), "float[batch,4*seq]");
}

TEST(TensorInfer, ConcatSumsSymbolicDims) {
  OpNode t("Concat", 2);
  t.attr_i("axis", 1);
  t.ins = {{f32t({sym("b"), sym("n"), 4})}, {f32t({sym("b"), 2, 4})}};
  t.infer();
  EXPECT_EQ(t.out_type(), "float[b,n+2,4]");
}

TEST(TensorInfer, SliceSymbolic) {
  OpNode t("Slice", 4);  // x[:, 1:] on [b, seq]
  t.ins = {{f32t({sym("b"), sym("seq")})},
           {i64t({1}), i64({1}, {1})},
           {i64t({1}), i64x({1}, {kMax})},
           {i64t({1}), i64({1}, {1})}};
  t.infer();
  EXPECT_EQ(t.out_type(), "float[b,seq-1]");

  OpNode u("Slice", 4);  // pos_table[:seq] with seq from a Shape
  u.ins = {{f32t({512, 768})},
           {i64t({1}), i64({1}, {0})},
           {i64t({1}), std::nullopt, std::vector<Dim>{sym("seq")}},
           {i64t({1}), i64({1}, {0})}};
  u.infer();
  EXPECT_EQ(u.out_type(), "float[seq,768]");

  OpNode v("Slice", 3);  // Shape -> Slice [1:]: the value follows
  v.ins = {{i64t({3}), std::nullopt, std::vector<Dim>{sym("b"), sym("s"), 4}},
           {i64t({1}), i64({1}, {1})},
           {i64t({1}), i64({1}, {3})}};
  v.infer();
  EXPECT_EQ(v.out_type(), "int64[2]");
  EXPECT_EQ(v.out_value(), "[s,4]");
}

TEST(TensorInfer, TransposeSqueezeFlatten) {
  OpNode t("Transpose", 1);
  t.attr_is("perm", {0, 2, 1});
  t.ins = {{f32t({sym("b"), 3, sym("s")})}};
  t.infer();
  EXPECT_EQ(t.out_type(), "float[b,s,3]");

  OpNode s("Squeeze", 2);
  s.ins = {{f32t({sym("b"), 1, 4})}, {i64t({1}), i64({1}, {-2})}};
  s.infer();
  EXPECT_EQ(s.out_type(), "float[b,4]");

  OpNode f("Flatten", 1);
  f.attr_i("axis", 1);
  f.ins = {{f32t({sym("b"), 3, 4})}};
  f.infer();
  EXPECT_EQ(f.out_type(), "float[b,12]");
}

TEST(TensorInfer, ExpandAndConstantOfShape) {
  OpNode e("Expand", 2);
  e.ins = {{f32t({1, 4})}, {i64t({2}), std::nullopt, std::vector<Dim>{sym("b"), 1}}};
  e.infer();
  EXPECT_EQ(e.out_type(), "float[b,4]");

  OpNode c("ConstantOfShape", 1);
  c.ins = {{i64t({2}), std::nullopt, std::vector<Dim>{sym("b"), 7}}};
  c.infer();
  EXPECT_EQ(c.out_type(), "float[b,7]");

  OpNode r("Range", 3);
  r.ins = {{i64t({}), i64({}, {0})}, {i64t({}), std::nullopt, std::vector<Dim>{sym("seq")}},
           {i64t({}), i64({}, {1})}};
  r.infer();
  EXPECT_EQ(r.out_type(), "int64[seq]");
}

TEST(TensorInfer, TileSplitGatherPad) {
  OpNode t("Tile", 2);
  t.ins = {{f32t({sym("b"), 3})}, {i64t({2}), i64({2}, {2, 2})}};
  t.infer();
  EXPECT_EQ(t.out_type(), "float[2*b,6]");

  OpNode s("Split", 2, 2);
  s.attr_i("axis", 1);
  s.ins = {{f32t({sym("b"), 10})}, {i64t({2}), i64({2}, {3, 7})}};
  s.infer();
  EXPECT_EQ(s.out_type(0), "float[b,3]");
  EXPECT_EQ(s.out_type(1), "float[b,7]");

  OpNode g("Gather", 2);
  g.attr_i("axis", 1);
  g.ins = {{f32t({sym("b"), 10, 4})}, {i64t({sym("n"), 2})}};
  g.infer();
  EXPECT_EQ(g.out_type(), "float[b,n,2,4]");

  OpNode p("Pad", 2);
  p.ins = {{f32t({sym("b"), 5})}, {i64t({4}), i64({4}, {0, 1, 0, -2})}};
  p.infer();
  EXPECT_EQ(p.out_type(), "float[b,4]");
}

// ---------------------------------------------------------------------------------------------
// Kernels

TEST(TensorKernel, ReshapeAllowZeroAndMinusOne) {
  OpNode t("Reshape", 2);
  Tensor y = t.run({f32({2, 3, 4}, iota(24)), i64({2}, {0, -1})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 12}));
  OpNode z("Reshape", 2);
  z.attr_i("allowzero", 1);
  Tensor e = z.run({f32({0, 3}, {}), i64({2}, {3, 0})});
  EXPECT_EQ(e.dims(), (std::vector<int64_t>{3, 0}));
  OpNode bad("Reshape", 2);
  expect_fail(bad, {f32({2, 3}, iota(6)), i64({1}, {5})}, "cannot reshape");
}

TEST(TensorKernel, TransposeStrings) {
  OpNode t("Transpose", 1);
  Tensor y = t.run({strs({2, 3}, {"a", "b", "c", "d", "e", "f"})});
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{3, 2}));
  std::vector<std::string> got(y.strings(), y.strings() + 6);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "d", "b", "e", "c", "f"}));
}

TEST(TensorKernel, ConcatSliceSplit) {
  OpNode c("Concat", 2);
  c.attr_i("axis", -1);
  Tensor y = c.run({f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})});
  EXPECT_EQ(values(y), (std::vector<double>{1, 3, 4, 2, 5, 6}));

  OpNode s("Slice", 5);  // reversed with step -2
  Tensor r = s.run({f32({5}, iota(5)), i64({1}, {-1}), i64({1}, {-100}), i64({1}, {0}), i64({1}, {-2})});
  EXPECT_EQ(values(r), (std::vector<double>{4, 2, 0}));

  OpNode sp("Split", 1, 3);
  sp.attr_i("num_outputs", 3);
  auto parts = sp.run_all({f32({5}, iota(5))});
  EXPECT_EQ(values(parts[0]), (std::vector<double>{0, 1}));
  EXPECT_EQ(values(parts[2]), (std::vector<double>{4}));
}

TEST(TensorKernel, TileExpandPad) {
  OpNode t("Tile", 2);
  Tensor y = t.run({f32({2}, {1, 2}), i64({1}, {3})});
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 1, 2, 1, 2}));

  OpNode e("Expand", 2);
  Tensor x = e.run({f32({2, 1}, {1, 2}), i64({2}, {1, 3})});
  EXPECT_EQ(values(x), (std::vector<double>{1, 1, 1, 2, 2, 2}));

  OpNode p("Pad", 2);
  p.attr_s("mode", "reflect");
  Tensor q = p.run({f32({3}, {1, 2, 3}), i64({2}, {2, 2})});
  EXPECT_EQ(values(q), (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));

  OpNode w("Pad", 2);
  w.attr_s("mode", "wrap");
  Tensor ww = w.run({f32({3}, {1, 2, 3}), i64({2}, {1, 2})});
  EXPECT_EQ(values(ww), (std::vector<double>{3, 1, 2, 3, 1, 2}));
}

TEST(TensorKernel, GatherIndexGuards) {
  OpNode g("Gather", 2);
  EXPECT_EQ(values(g.run({f32({3}, {10, 20, 30}), i64({2}, {-1, 0})})), (std::vector<double>{30, 10}));
  expect_fail(g, {f32({3}, {10, 20, 30}), i64({1}, {3})}, "out of range");
  expect_fail(g, {f32({3}, {10, 20, 30}), i64({1}, {-4})}, "out of range");

  OpNode ge("GatherElements", 2);
  expect_fail(ge, {f32({2}, {1, 2}), i64({2}, {0, 2})}, "out of range");

  OpNode gn("GatherND", 2);
  expect_fail(gn, {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {1, 2})}, "out of range");
  OpNode gn_ok("GatherND", 2);
  EXPECT_EQ(values(gn_ok.run({f32({2, 2}, {1, 2, 3, 4}), i64({2, 1}, {1, 0})})),
            (std::vector<double>{3, 4, 1, 2}));

  OpNode sn("ScatterND", 3);
  expect_fail(sn, {f32({3}, {0, 0, 0}), i64({1, 1}, {5}), f32({1}, {1})}, "out of range");

  OpNode se("ScatterElements", 3);
  se.attr_s("reduction", "add");
  EXPECT_EQ(values(se.run({f32({3}, {1, 1, 1}), i64({2}, {2, 2}), f32({2}, {5, 6})})),
            (std::vector<double>{1, 1, 12}));
  OpNode se_bad("ScatterElements", 3);
  expect_fail(se_bad, {f32({3}, {0, 0, 0}), i64({1}, {-7}), f32({1}, {1})}, "out of range");

  OpNode cp("Compress", 2);
  Tensor cond(DataType::kBool, {4});
  cond.data<bool>()[3] = true;
  expect_fail(cp, {f32({3}, {1, 2, 3}), cond}, "condition selects index 3");
}

TEST(TensorKernel, HugeOutputsFailCleanly) {
  OpNode e("Expand", 2);
  expect_fail(e, {f32({1}, {1}), i64({3}, {1 << 30, 1 << 30, 1 << 30})}, "");
  OpNode t("Tile", 2);
  expect_fail(t, {f32({2}, {1, 2}), i64x({1}, {kMax})}, "overflow");
  OpNode c("ConstantOfShape", 1);
  expect_fail(c, {i64x({2}, {kMax, 4})}, "overflow");
  OpNode r("Range", 3);
  expect_fail(r, {i64({}, {0}), i64x({}, {kMax}), i64({}, {1})}, "");
  OpNode p("Pad", 2);
  expect_fail(p, {f32({1}, {1}), i64x({2}, {0, kMax})}, "");
}

TEST(TensorKernel, TopKStableTies) {
  OpNode t("TopK", 2, 2);
  auto r = t.run_all({f32({5}, {1, 3, 3, 2, 3}), i64({1}, {3})});
  EXPECT_EQ(values(r[0]), (std::vector<double>{3, 3, 3}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{1, 2, 4}));
  OpNode s("TopK", 2, 2);
  s.attr_i("largest", 0);
  auto q = s.run_all({f32({5}, {1, 3, 1, 2, 3}), i64({1}, {2})});
  EXPECT_EQ(values(q[1]), (std::vector<double>{0, 2}));
}

TEST(TensorKernel, UniqueUnsorted) {
  OpNode u("Unique", 1, 4);
  u.attr_i("sorted", 0);
  auto r = u.run_all({f32({6}, {2, 1, 1, 3, 4, 3})});
  EXPECT_EQ(values(r[0]), (std::vector<double>{2, 1, 3, 4}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{0, 1, 3, 4}));
  EXPECT_EQ(values(r[2]), (std::vector<double>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values(r[3]), (std::vector<double>{1, 2, 2, 1}));
}

TEST(TensorKernel, CumSumExclusiveReverse) {
  OpNode c("CumSum", 2);
  c.attr_i("exclusive", 1).attr_i("reverse", 1);
  EXPECT_EQ(values(c.run({f32({4}, {1, 2, 3, 4}), i64({}, {0})})), (std::vector<double>{9, 7, 4, 0}));
}

TEST(TensorKernel, OneHotOutOfRangeIsOff) {
  OpNode o("OneHot", 3);
  Tensor y = o.run({i64({2}, {1, 5}), i64({}, {3}), f32({2}, {0, 1})});
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 0, 0, 0, 0}));
}

TEST(TensorKernel, DepthToSpaceRoundTrip) {
  OpNode d("DepthToSpace", 1);
  d.attr_i("blocksize", 2);
  Tensor x = f32({1, 8, 2, 3}, iota(48));
  Tensor y = d.run({x});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 2, 4, 6}));
  OpNode s("SpaceToDepth", 1);
  s.attr_i("blocksize", 2);
  EXPECT_EQ(values(s.run({y})), values(x));
}

TEST(TensorKernel, TensorScatterCircular) {
  OpNode t("TensorScatter", 3);
  t.attr_s("mode", "circular");
  Tensor past = f32({1, 3, 1}, {0, 0, 0});
  Tensor y = t.run({past, f32({1, 2, 1}, {7, 8}), i64({1}, {2})});
  EXPECT_EQ(values(y), (std::vector<double>{8, 0, 7}));
  OpNode l("TensorScatter", 3);
  expect_fail(l, {past, f32({1, 2, 1}, {7, 8}), i64({1}, {2})}, "overflow the cache");
}

TEST(TensorKernel, ConstantSparseAndLists) {
  OpNode c("Constant", 0);
  Attribute a;
  a.name = "sparse_value";
  a.kind = AttrKind::kSparseTensor;
  a.sparse.values = f32({2}, {5, 7});
  a.sparse.indices = i64({2}, {1, 4});
  a.sparse.dims = {2, 3};
  c.attr(a);
  Tensor y = c.run({});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 5, 0, 0, 7, 0}));
  c.infer();
  EXPECT_EQ(c.out_type(), "float[2,3]");

  OpNode l("Constant", 0);
  l.attr_is("value_ints", {4, 5});
  l.infer();
  EXPECT_EQ(l.out_type(), "int64[2]");
  EXPECT_EQ(l.out_value(), "[4,5]");
}

TEST(TensorKernel, StringsAndBoolsMove) {
  OpNode g("Gather", 2);
  Tensor y = g.run({strs({3}, {"x", "y", "z"}), i64({2}, {2, 2})});
  EXPECT_EQ(y.strings()[0], "z");
  EXPECT_EQ(y.strings()[1], "z");

  OpNode p("Pad", 3);
  Tensor q = p.run({strs({1}, {"a"}), i64({2}, {1, 1}), strs({}, {"pad"})});
  ASSERT_EQ(q.numel(), 3);
  EXPECT_EQ(q.strings()[0], "pad");
  EXPECT_EQ(q.strings()[1], "a");

  OpNode c("Concat", 2);
  c.attr_i("axis", 0);
  Tensor b1(DataType::kBool, {1}), b2(DataType::kBool, {2});
  b2.data<bool>()[1] = true;
  Tensor r = c.run({b1, b2});
  EXPECT_EQ(r.dtype(), DataType::kBool);
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 1}));

  OpNode t("Transpose", 1);  // float16: two-byte storage
  Tensor h = make(DataType::kFloat16, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values(t.run({h})), (std::vector<double>{1, 3, 2, 4}));
}

TEST(TensorKernel, ShapeGuards) {
  OpNode s("Squeeze", 2);
  expect_fail(s, {f32({2, 1}, {1, 2}), i64({1}, {0})}, "cannot squeeze");
  OpNode u("Unsqueeze", 2);
  expect_fail(u, {f32({2}, {1, 2}), i64({2}, {0, 0})}, "given twice");
  OpNode sp("Split", 2, 2);
  expect_fail(sp, {f32({3}, {1, 2, 3}), i64({2}, {1, 1})}, "does not sum");
  OpNode gn("GatherND", 2);
  gn.attr_i("batch_dims", 1);
  expect_fail(gn, {f32({2, 2}, {1, 2, 3, 4}), i64({3, 1}, {0, 0, 0})}, "batch dims");
  OpNode tk("TopK", 2, 2);
  expect_fail(tk, {f32({2}, {1, 2}), i64({1}, {3})}, "out of range");
  OpNode rs("ReverseSequence", 2);
  expect_fail(rs, {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 3})}, "out of range");
  OpNode tr("Transpose", 1);
  tr.attr_is("perm", {0, 0});
  expect_fail(tr, {f32({2, 2}, {1, 2, 3, 4})}, "permutation");
}

TEST(TensorKernel, IntegerWrapNoOverflow) {
  OpNode c("CumSum", 2);
  Tensor x = make(DataType::kInt32, {2}, {2147483647, 1});
  EXPECT_EQ(values(c.run({x, i64({}, {0})})), (std::vector<double>{2147483647, -2147483648.0}));
  OpNode tr("Trilu", 2);  // a huge k keeps everything
  EXPECT_EQ(values(tr.run({f32({2, 2}, {1, 2, 3, 4}), i64x({}, {std::numeric_limits<int64_t>::min()})})),
            (std::vector<double>{1, 2, 3, 4}));
  OpNode sl("Slice", 5);  // extreme starts, ends and steps
  EXPECT_EQ(values(sl.run({f32({3}, {1, 2, 3}), i64x({1}, {kMax}), i64x({1}, {std::numeric_limits<int64_t>::min()}),
                           i64({1}, {0}), i64x({1}, {std::numeric_limits<int64_t>::min()})})),
            (std::vector<double>{3}));
}

TEST(TensorKernel, UniqueAxisReverseSequenceNonZero) {
  OpNode u("Unique", 1, 4);
  u.attr_i("axis", 0);
  auto r = u.run_all({f32({3, 2}, {1, 2, 0, 5, 1, 2})});
  EXPECT_EQ(values(r[0]), (std::vector<double>{0, 5, 1, 2}));
  EXPECT_EQ(values(r[2]), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(values(r[3]), (std::vector<double>{1, 2}));

  OpNode rs("ReverseSequence", 2);
  rs.attr_i("batch_axis", 0).attr_i("time_axis", 1);
  EXPECT_EQ(values(rs.run({f32({2, 3}, iota(6)), i64({2}, {2, 3})})),
            (std::vector<double>{1, 0, 2, 5, 4, 3}));

  OpNode nz("NonZero", 1);
  Tensor y = nz.run({f32({2, 2}, {0, 1, 1, 0})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 1, 0}));
}

}  // namespace
}  // namespace kiln
