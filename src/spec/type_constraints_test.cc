#include "spec/type_constraints.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "spec/normalize.h"
#include "spec/op_types.h"
#include "support/error.h"

namespace kiln {
namespace {

const TypeInfo kF32 = TypeInfo::tensor(DataType::kFloat);
const TypeInfo kI32 = TypeInfo::tensor(DataType::kInt32);
const TypeInfo kI64 = TypeInfo::tensor(DataType::kInt64);

// A model built in code: values get their types directly, as shape inference would set them.
struct TestModel {
  Model m;
  explicit TestModel(int opset) {
    m.ir_version = 8;
    m.opsets[""] = opset;
    m.graph = std::make_unique<Graph>();
  }
  Value* value(const std::string& name, const TypeInfo& t, Graph* g = nullptr) {
    Value* v = (g ? g : m.graph.get())->add_value(name);
    v->type = t;
    return v;
  }
  // Inputs and outputs by value (null: omitted); the node takes the model's ai.onnx opset.
  Node* node(const std::string& op, std::initializer_list<Value*> ins,
             std::initializer_list<Value*> outs, Graph* g = nullptr) {
    Graph& owner = g ? *g : *m.graph;
    Node* n = owner.add_node(op);
    n->name = op == "Relu" ? "r" : op;
    n->opset = static_cast<int>(m.opsets.at(""));
    int i = 0;
    for (Value* v : ins) owner.set_input(n, i++, v);
    i = 0;
    for (Value* v : outs) owner.set_output(n, i++, v);
    return n;
  }
};

// The one-line message check_type_constraints gives, or "" when it accepts the model.
std::string verdict(const Model& m) {
  try {
    check_type_constraints(m);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadModel);
    return e.what();
  }
}

// -- tensors

TEST(TypeConstraints, RejectsATensorTypeTheOpDoesNotTake) {
  TestModel t(13);
  t.node("Relu", {t.value("x", kI32)}, {t.value("y", kI32)});
  EXPECT_EQ(verdict(t.m),
            "node 'r' (Relu): input 0 'x' has type int32, allowed: float16, float, double, bfloat16");
}

TEST(TypeConstraints, AcceptsWhatTheOpsOpsetTakes) {
  TestModel t13(13);
  t13.node("Relu", {t13.value("x", kF32)}, {t13.value("y", kF32)});
  EXPECT_EQ(verdict(t13.m), "");
  TestModel t14(14);  // Relu-14 takes integers
  t14.node("Relu", {t14.value("x", kI32)}, {t14.value("y", kI32)});
  EXPECT_EQ(verdict(t14.m), "");
}

TEST(TypeConstraints, JudgesOutputs) {
  TestModel t(13);
  Node* cast = t.node("Cast", {t.value("x", kF32)},
                      {t.value("y", TypeInfo::tensor(DataType::kFloat8E4M3FN))});
  cast->name = "c";
  EXPECT_NE(verdict(t.m).find("node 'c' (Cast): output 0 'y' has type float8e4m3fn, allowed: "),
            std::string::npos);
}

TEST(TypeConstraints, RejectsFloatIndices) {
  TestModel t(13);
  t.node("Gather", {t.value("d", kF32), t.value("i", kF32)}, {t.value("y", kF32)});
  EXPECT_EQ(verdict(t.m), "node 'Gather' (Gather): input 1 'i' has type float, allowed: int32, int64");
}

TEST(TypeConstraints, OneTypeParameterBindsOneType) {
  TestModel t(13);
  t.node("Add", {t.value("a", kF32), t.value("b", kI64)}, {t.value("y", kF32)});
  EXPECT_EQ(verdict(t.m), "node 'Add' (Add): input 1 'b' has type int64, but T is float (input 0 'a')");
}

TEST(TypeConstraints, UnknownTypesAreNotJudged) {
  TestModel unknown(13);
  unknown.node("Relu", {unknown.value("x", TypeInfo{})}, {unknown.value("y", TypeInfo{})});
  EXPECT_EQ(verdict(unknown.m), "");
  TestModel no_elem(13);  // a tensor whose element type is not known yet
  no_elem.node("Relu", {no_elem.value("x", TypeInfo::tensor(DataType::kUndefined))},
               {no_elem.value("y", kF32)});
  EXPECT_EQ(verdict(no_elem.m), "");
}

// -- op versions libonnx 1.12 does not know (opsets after 17): kiln's table from the ONNX spec

TEST(TypeConstraints, SignaturesComeFromLibonnxUpTo17AndFromTheSpecTableAfter) {
  const OpTypes* relu = find_op_types("", "Relu", 21);  // Relu has not changed since 14
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->source, "libonnx");
  EXPECT_EQ(relu->since, 14);
  const OpTypes* cast = find_op_types("", "Cast", 21);
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->source, "kiln's table");
  EXPECT_EQ(cast->since, 21);
  EXPECT_EQ(find_op_types("", "Cast", 20)->since, 19);
  EXPECT_EQ(find_op_types("", "Cast", 17)->since, 13);
  EXPECT_EQ(find_op_types("", "BitwiseAnd", 17), nullptr);  // not an op before 18
  EXPECT_EQ(find_op_types("", "Relu", 29), nullptr);         // newer than the spec kiln has
  EXPECT_EQ(find_op_types("", "GroupNormalization", 20), nullptr);  // 18: deprecated
  const OpTypes* loop = find_op_types("", "Loop", 21);
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->inputs.size(), 3u);
  EXPECT_TRUE(loop->inputs[2].variadic);
  EXPECT_FALSE(loop->inputs[2].homogeneous);
  ASSERT_NE(find_op_types("", "Concat", 13), nullptr);
  EXPECT_TRUE(find_op_types("", "Concat", 13)->inputs[0].homogeneous);
}

// Versions whose types libonnx 1.12 has wrong come from the spec's table too.
TEST(TypeConstraints, TheSpecCorrectsLibonnx) {
  const OpTypes* erf = find_op_types("", "Erf", 17);
  ASSERT_NE(erf, nullptr);
  EXPECT_EQ(erf->source, "kiln's table");
  EXPECT_EQ(erf->since, 13);
  EXPECT_EQ(find_op_types("", "Erf", 12)->source, "libonnx");  // Erf-9
  TestModel erf_int(13);  // libonnx lists the integer types for Erf-13
  erf_int.node("Erf", {erf_int.value("x", kI32)}, {erf_int.value("y", kI32)});
  EXPECT_EQ(verdict(erf_int.m),
            "node 'Erf' (Erf): input 0 'x' has type int32, allowed: bfloat16, float16, float, double");
  TestModel grid(16);  // GridSample-16: X and Y are T1, grid T2 (libonnx: grid T1, Y T2)
  const TypeInfo kF64 = TypeInfo::tensor(DataType::kDouble);
  grid.node("GridSample", {grid.value("x", kF64), grid.value("g", kF32)}, {grid.value("y", kF64)});
  EXPECT_EQ(verdict(grid.m), "");
}

TEST(TypeConstraints, NewerOpsetsAreJudged) {
  TestModel relu(18);  // Relu-14 still: libonnx's schema judges it
  relu.node("Relu", {relu.value("x", TypeInfo::tensor(DataType::kUInt8))},
            {relu.value("y", TypeInfo::tensor(DataType::kUInt8))});
  EXPECT_EQ(verdict(relu.m).find("node 'r' (Relu): input 0 'x' has type uint8, allowed: "), 0u)
      << verdict(relu.m);
  TestModel bitwise(18);  // an op libonnx 1.12 does not know at all
  bitwise.node("BitwiseAnd", {bitwise.value("a", kF32), bitwise.value("b", kF32)},
               {bitwise.value("y", kF32)});
  EXPECT_EQ(verdict(bitwise.m),
            "node 'BitwiseAnd' (BitwiseAnd): input 0 'a' has type float, allowed: uint8, uint16, "
            "uint32, uint64, int8, int16, int32, int64");
  TestModel ints(18);
  ints.node("BitwiseAnd", {ints.value("a", kI32), ints.value("b", kI32)}, {ints.value("y", kI32)});
  EXPECT_EQ(verdict(ints.m), "");
  TestModel mixed(18);
  mixed.node("BitwiseAnd", {mixed.value("a", kI32), mixed.value("b", kI64)},
             {mixed.value("y", kI32)});
  EXPECT_EQ(verdict(mixed.m),
            "node 'BitwiseAnd' (BitwiseAnd): input 1 'b' has type int64, but T is int32 (input 0 'a')");
}

TEST(TypeConstraints, TheOpsetPicksTheVersion) {
  const TypeInfo kF8 = TypeInfo::tensor(DataType::kFloat8E4M3FN);
  const TypeInfo kInt4 = TypeInfo::tensor(DataType::kInt4);
  TestModel f8_19(19);  // Cast-19 added the float8 kinds
  f8_19.node("Cast", {f8_19.value("x", kF32)}, {f8_19.value("y", kF8)});
  EXPECT_EQ(verdict(f8_19.m), "");
  TestModel int4_20(20);  // Cast-19 still: int4 came with Cast-21
  int4_20.node("Cast", {int4_20.value("x", kF32)}, {int4_20.value("y", kInt4)});
  EXPECT_NE(verdict(int4_20.m).find("output 0 'y' has type int4, allowed: "), std::string::npos);
  TestModel int4_21(21);
  int4_21.node("Cast", {int4_21.value("x", kF32)}, {int4_21.value("y", kInt4)});
  EXPECT_EQ(verdict(int4_21.m), "");
}

TEST(TypeConstraints, TableSignaturesWithOptionalAndDirectlyTypedInputs) {
  // Attention-24: (Q:T1, K:T1, V:T2, attn_mask:U?, past_key:T1?, past_value:T2?,
  // nonpad_kv_seqlen:tensor(int64)?)
  TestModel ok(24);
  ok.node("Attention", {ok.value("q", kF32), ok.value("k", kF32), ok.value("v", kF32), nullptr,
                        nullptr, nullptr, ok.value("len", kI64)},
          {ok.value("y", kF32)});
  EXPECT_EQ(verdict(ok.m), "");
  TestModel bad(24);
  bad.node("Attention", {bad.value("q", kF32), bad.value("k", kF32), bad.value("v", kF32), nullptr,
                         nullptr, nullptr, bad.value("len", kI32)},
           {bad.value("y", kF32)});
  EXPECT_EQ(verdict(bad.m),
            "node 'Attention' (Attention): input 6 'len' has type int32, allowed: int64");
}

TEST(TypeConstraints, MlOpsetsAfter3AreJudged) {
  TestModel t(21);
  t.m.opsets["ai.onnx.ml"] = 4;
  Node* n = t.node("LabelEncoder", {t.value("x", TypeInfo::tensor(DataType::kBool))},
                   {t.value("y", kI64)});
  n->domain = "ai.onnx.ml";
  n->opset = 4;
  EXPECT_EQ(verdict(t.m).find("node 'LabelEncoder' (ai.onnx.ml.LabelEncoder): input 0 'x' has type "
                              "bool, allowed: string, int64"),
            0u)
      << verdict(t.m);
}

TEST(TypeConstraints, ReturnsTheNodesItCannotJudge) {
  TestModel newer(29);  // beyond the spec kiln's table was made from: Relu may have changed
  newer.node("Relu", {newer.value("x", TypeInfo::tensor(DataType::kUInt8))},
             {newer.value("y", TypeInfo::tensor(DataType::kUInt8))});
  EXPECT_EQ(check_type_constraints(newer.m),
            std::vector<std::string>{"node 'r' (Relu): no signature known in opset 29"});
  TestModel deprecated(18);  // GroupNormalization-18 is deprecated: it has no signature
  deprecated.node("GroupNormalization", {deprecated.value("x", kF32), deprecated.value("s", kF32),
                                         deprecated.value("b", kF32)},
                  {deprecated.value("y", kF32)});
  EXPECT_EQ(check_type_constraints(deprecated.m).size(), 1u);
  TestModel known(21);
  known.node("Relu", {known.value("x", kF32)}, {known.value("y", kF32)});
  EXPECT_TRUE(check_type_constraints(known.m).empty());
}

// -- optional inputs

TEST(TypeConstraints, OptionalInputsMayBeOmittedButAreJudgedWhenGiven) {
  TestModel ok(13);  // Clip(input, min, max): min omitted
  ok.node("Clip", {ok.value("x", kF32), nullptr, ok.value("hi", kF32)}, {ok.value("y", kF32)});
  EXPECT_EQ(verdict(ok.m), "");
  TestModel bad(13);
  bad.node("Clip", {bad.value("x", kF32), bad.value("lo", kI64)}, {bad.value("y", kF32)});
  EXPECT_EQ(verdict(bad.m), "node 'Clip' (Clip): input 1 'lo' has type int64, but T is float (input 0 'x')");
  TestModel scales(13);  // Resize-13's scales are float only
  scales.node("Resize", {scales.value("x", kF32), nullptr,
                         scales.value("s", TypeInfo::tensor(DataType::kDouble))},
              {scales.value("y", kF32)});
  EXPECT_EQ(verdict(scales.m),
            "node 'Resize' (Resize): input 2 's' has type double, allowed: float");
}

TEST(TypeConstraints, OptionalTypes) {
  TestModel ok(15);
  ok.node("OptionalHasElement", {ok.value("o", TypeInfo::optional(kF32))},
          {ok.value("b", TypeInfo::tensor(DataType::kBool))});
  EXPECT_EQ(verdict(ok.m), "");
  TestModel bad(15);  // OptionalHasElement-15 takes optionals only (18 takes tensors too)
  bad.node("OptionalHasElement", {bad.value("o", kF32)},
           {bad.value("b", TypeInfo::tensor(DataType::kBool))});
  EXPECT_NE(verdict(bad.m).find("input 0 'o' has type float, allowed: optional(seq(tensor(uint8)))"),
            std::string::npos);
}

// -- variadic inputs

TEST(TypeConstraints, HomogeneousVariadicInputsShareOneType) {
  TestModel ok(13);
  ok.node("Concat", {ok.value("a", kF32), ok.value("b", kF32), ok.value("c", kF32)},
          {ok.value("y", kF32)});
  EXPECT_EQ(verdict(ok.m), "");
  TestModel bad(13);
  bad.node("Concat", {bad.value("a", kF32), bad.value("b", kF32), bad.value("c", kI32)},
           {bad.value("y", kF32)});
  EXPECT_EQ(verdict(bad.m), "node 'Concat' (Concat): input 2 'c' has type int32, but T is float (input 0 'a')");
  TestModel sum(13);
  sum.node("Sum", {sum.value("a", kI32), sum.value("b", kI32)}, {sum.value("y", kI32)});
  EXPECT_EQ(verdict(sum.m), "node 'Sum' (Sum): input 0 'a' has type int32, allowed: float16, float, double, bfloat16");
}

// Loop's loop-carried values are a heterogeneous variadic; its body is judged too.
TestModel loop_model(const TypeInfo& body_in, int opset = 13) {
  TestModel t(opset);
  auto body = std::make_shared<Graph>(t.m.graph.get());
  Value* iter = t.value("iter", kI64, body.get());
  Value* cond = t.value("cond", TypeInfo::tensor(DataType::kBool), body.get());
  Value* x = t.value("x_in", body_in, body.get());
  Value* y = t.value("x_out", body_in, body.get());
  Value* k = t.value("k", kI64, body.get());  // a second loop-carried value, of another type
  body->inputs = {iter, cond, x, k};
  body->outputs = {cond, y, k};
  t.node("Relu", {x}, {y}, body.get());
  Node* loop = t.node("Loop", {t.value("m", kI64), nullptr, t.value("x0", body_in), t.value("k0", kI64)},
                      {t.value("xn", body_in), t.value("kn", kI64)});
  Attribute a;
  a.name = "body";
  a.kind = AttrKind::kGraph;
  a.g = body;
  loop->attrs.push_back(std::move(a));
  return t;
}

TEST(TypeConstraints, HeterogeneousVariadicAndSubgraphs) {
  EXPECT_EQ(verdict(loop_model(kF32).m), "");  // V float and V int64: each value its own type
  EXPECT_EQ(verdict(loop_model(kF32, 21).m), "");  // Loop-21 from kiln's table: V as well
  EXPECT_EQ(verdict(loop_model(TypeInfo::tensor(DataType::kUInt8), 21).m),
            "node 'r' (Relu): input 0 'x_in' has type uint8, allowed: float, int32, int8, int16, "
            "int64, float16, double, bfloat16");
  EXPECT_EQ(verdict(loop_model(kI32).m),
            "node 'r' (Relu): input 0 'x_in' has type int32, allowed: float16, float, double, bfloat16");
}

// -- sequences

TEST(TypeConstraints, Sequences) {
  const TypeInfo seq = TypeInfo::sequence(kF32);
  TestModel ok(11);
  ok.node("SequenceInsert", {ok.value("s", seq), ok.value("t", kF32), ok.value("p", kI64)},
          {ok.value("out", seq)});
  EXPECT_EQ(verdict(ok.m), "");
  TestModel position(11);
  position.node("SequenceInsert", {position.value("s", seq), position.value("t", kF32),
                                   position.value("p", kF32)},
                {position.value("out", seq)});
  EXPECT_EQ(verdict(position.m),
            "node 'SequenceInsert' (SequenceInsert): input 2 'p' has type float, allowed: int32, int64");
  TestModel not_seq(11);
  not_seq.node("SequenceInsert", {not_seq.value("s", kF32), not_seq.value("t", kF32)},
               {not_seq.value("out", seq)});
  EXPECT_NE(verdict(not_seq.m).find("input 0 's' has type float, allowed: seq(tensor(uint8)), "),
            std::string::npos);
  TestModel nested(11);  // the element type inside the sequence counts
  nested.node("SequenceLength",
              {nested.value("s", TypeInfo::sequence(TypeInfo::tensor(DataType::kBFloat16)))},
              {nested.value("n", kI64)});
  EXPECT_NE(verdict(nested.m).find("input 0 's' has type seq(tensor(bfloat16)), allowed: "),
            std::string::npos);
}

// -- the file's form of normalized ops

TEST(TypeConstraints, NormalizedOpsAreJudgedInTheirFilesForm) {
  TestModel sq(11);  // Squeeze-11 takes axes as an attribute; import made it input 1
  Node* n = sq.node("Squeeze", {sq.value("x", kF32)}, {sq.value("y", kF32)});
  Attribute axes;
  axes.name = "axes";
  axes.kind = AttrKind::kInts;
  axes.ints = {0};
  n->attrs.push_back(axes);
  normalize_opsets(sq.m);
  ASSERT_TRUE(n->has_input(1));
  EXPECT_EQ(verdict(sq.m), "");
  sq.m.graph->set_input(n, 1, sq.value("a", kI64));  // a real second input: not Squeeze-11's
  EXPECT_EQ(verdict(sq.m), "node 'Squeeze' (Squeeze): input 1 'a': Squeeze in opset 11 takes 1 inputs");

  TestModel rs(10);  // Resize-10 (X, scales) is held as (X, roi, scales)
  Node* r = rs.node("Resize", {rs.value("x", kF32), rs.value("s", kF32)}, {rs.value("y", kF32)});
  normalize_opsets(rs.m);
  ASSERT_FALSE(r->has_input(1));
  EXPECT_EQ(verdict(rs.m), "");
}

// -- functions

TEST(TypeConstraints, FunctionBodiesAreJudgedAndCallsAreNot) {
  TestModel t(13);
  Function f;
  f.name = "f";
  f.domain = "local";
  f.opsets[""] = 13;
  f.body = std::make_shared<Graph>();
  Value* in = t.value("fx", TypeInfo{}, f.body.get());
  Value* out = t.value("fy", TypeInfo{}, f.body.get());
  f.body->inputs = {in};
  f.body->outputs = {out};
  t.node("Relu", {in}, {out}, f.body.get());
  t.m.functions.push_back(f);
  t.m.opsets["local"] = 1;
  Node* call = t.m.graph->add_node("f", "local");
  call->opset = 1;
  t.m.graph->set_input(call, 0, t.value("x", kI32));
  t.m.graph->set_output(call, 0, t.value("y", kI32));
  EXPECT_EQ(verdict(t.m), "");  // the call's formals have no types; its body's are unknown here
  in->type = kI32;             // known, as after inlining and inference
  EXPECT_EQ(verdict(t.m),
            "function 'f': node 'r' (Relu): input 0 'fx' has type int32, allowed: float16, float, "
            "double, bfloat16");
}

}  // namespace
}  // namespace kiln
