#include "ops/infer.h"

#include <gtest/gtest.h>

#include <optional>

#include "ops/check.h"
#include "support/error.h"

namespace kiln {
namespace {

Value* input(Graph& g, const std::string& name, DataType t, Shape s) {
  Value* v = g.add_value(name);
  v->is_graph_input = true;
  v->type = TypeInfo::tensor(t, std::move(s));
  g.inputs.push_back(v);
  return v;
}

Value* constant(Graph& g, const std::string& name, std::vector<int64_t> values) {
  Value* v = g.add_value(name);
  v->data = Tensor::from_int64s(values);
  v->type = TypeInfo::tensor(DataType::kInt64, Shape{int64_t(values.size())});
  g.initializers.push_back(v);
  return v;
}

Node* node(Graph& g, const std::string& op, std::vector<Value*> ins, const std::string& out) {
  Node* n = g.add_node(op);
  n->opset = 17;
  for (size_t i = 0; i < ins.size(); ++i) g.set_input(n, int(i), ins[i]);
  g.set_output(n, 0, g.add_value(out));
  return n;
}

// The chain torch writes for x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
TEST(Infer, TorchFlattenChainStaysSymbolic) {
  Model m;
  m.opsets[""] = 17;
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  Value* x = input(g, "x", DataType::kFloat, {Dim::symbol("batch"), 64, 7, 7});
  Node* shape = node(g, "Shape", {x}, "shape");
  Value* zero = g.add_value("zero");
  zero->data = Tensor(DataType::kInt64, {});
  zero->type = TypeInfo::tensor(DataType::kInt64, Shape{});
  g.initializers.push_back(zero);
  Node* gather = node(g, "Gather", {shape->outputs[0], zero}, "batch_dim");
  Node* unsq = node(g, "Unsqueeze", {gather->outputs[0], constant(g, "axes", {0})}, "batch_1d");
  Node* concat = node(g, "Concat", {unsq->outputs[0], constant(g, "minus_one", {-1})}, "target");
  Attribute axis;
  axis.name = "axis";
  axis.kind = AttrKind::kInt;
  axis.i = 0;
  concat->attrs.push_back(axis);
  Node* reshape = node(g, "Reshape", {x, concat->outputs[0]}, "y");
  g.outputs.push_back(reshape->outputs[0]);
  check_model(m);
  infer_shapes(m);
  const Value* y = reshape->outputs[0];
  ASSERT_TRUE(y->type.shape);
  EXPECT_EQ(shape_to_string(*y->type.shape), "[batch,3136]");
  EXPECT_EQ(y->type.elem, DataType::kFloat);
}

TEST(Infer, BroadcastOfSymbols) {
  Model m;
  m.opsets[""] = 17;
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  Value* a = input(g, "a", DataType::kFloat, {Dim::symbol("batch"), 1, 8});
  Value* b = input(g, "b", DataType::kFloat, {Dim::symbol("seq"), 1});
  Node* add = node(g, "Add", {a, b}, "c");
  g.outputs.push_back(add->outputs[0]);
  infer_shapes(m);
  ASSERT_TRUE(add->outputs[0]->type.shape);
  EXPECT_EQ(shape_to_string(*add->outputs[0]->type.shape), "[batch,seq,8]");
}

TEST(Infer, ConvWithSymbolicBatch) {
  Model m;
  m.opsets[""] = 17;
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  Value* x = input(g, "x", DataType::kFloat, {Dim::symbol("N"), 3, 224, 224});
  Value* w = g.add_value("w");
  w->data = Tensor(DataType::kFloat, {64, 3, 7, 7});
  w->type = TypeInfo::tensor(DataType::kFloat, shape_of({64, 3, 7, 7}));
  g.initializers.push_back(w);
  Node* conv = node(g, "Conv", {x, w}, "y");
  for (auto [name, vals] : {std::pair{"strides", std::vector<int64_t>{2, 2}},
                            std::pair{"pads", std::vector<int64_t>{3, 3, 3, 3}}}) {
    Attribute a;
    a.name = name;
    a.kind = AttrKind::kInts;
    a.ints = vals;
    conv->attrs.push_back(a);
  }
  g.outputs.push_back(conv->outputs[0]);
  infer_shapes(m);
  ASSERT_TRUE(conv->outputs[0]->type.shape);
  EXPECT_EQ(shape_to_string(*conv->outputs[0]->type.shape), "[N,64,112,112]");
}

TEST(Infer, FailureNamesTheNode) {
  Model m;
  m.opsets[""] = 17;
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  Value* a = input(g, "a", DataType::kFloat, {3, 4});
  Value* b = input(g, "b", DataType::kFloat, {5, 6});
  Node* mm = node(g, "MatMul", {a, b}, "c");
  mm->name = "mm";
  g.outputs.push_back(mm->outputs[0]);
  try {
    infer_shapes(m);
    FAIL() << "inference accepted a 3x4 by 5x6 MatMul";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'mm' (MatMul)"), std::string::npos) << e.what();
  }
}


// If(cond) { Identity(x) } else { MatMul(x, x) }, x a 3x4 float: the else branch cannot be inferred
// (with bad_then, the then branch is MatMul(x, x) too).
struct IfWithBadElse {
  Model m;
  Node* if_node = nullptr;
  Value* matmul_out = nullptr;

  // cond: true or false as a constant, or nullopt for a graph input.
  explicit IfWithBadElse(std::optional<bool> cond, bool bad_then = false) {
    m.opsets[""] = 17;
    m.graph = std::make_unique<Graph>();
    Graph& g = *m.graph;
    Value* x = input(g, "x", DataType::kFloat, {3, 4});
    Value* c;
    if (cond) {
      c = g.add_value("cond");
      c->data = Tensor::scalar(DataType::kBool, *cond);
      c->type = TypeInfo::tensor(DataType::kBool, Shape{});
      g.initializers.push_back(c);
    } else {
      c = input(g, "cond", DataType::kBool, {});
    }
    if_node = node(g, "If", {c}, "y");
    auto then_g = std::make_shared<Graph>(&g);
    then_g->outputs.push_back(
        node(*then_g, bad_then ? "MatMul" : "Identity", bad_then ? std::vector<Value*>{x, x}
                                                                  : std::vector<Value*>{x},
             "then_y")
            ->outputs[0]);
    auto else_g = std::make_shared<Graph>(&g);
    Node* mm = node(*else_g, "MatMul", {x, x}, "else_y");
    mm->name = "mm";
    matmul_out = mm->outputs[0];
    else_g->outputs.push_back(matmul_out);
    for (auto [name, body] : {std::pair{"then_branch", then_g}, std::pair{"else_branch", else_g}}) {
      Attribute a;
      a.name = name;
      a.kind = AttrKind::kGraph;
      a.g = body;
      if_node->attrs.push_back(std::move(a));
    }
    g.outputs.push_back(if_node->outputs[0]);
  }
};

TEST(Infer, AnIfBranchAConstantConditionRulesOutMayNotInfer) {
  IfWithBadElse model(true);
  check_model(model.m);
  infer_shapes(model.m);
  const TypeInfo& y = model.if_node->outputs[0]->type;
  ASSERT_TRUE(y.shape);
  EXPECT_EQ(shape_to_string(*y.shape), "[3,4]");
  EXPECT_EQ(model.matmul_out->type.kind, TypeInfo::Kind::kUnknown);  // the dead branch's value
}

TEST(Infer, AnIfBranchAConstantConditionTakesMustInfer) {
  IfWithBadElse model(false);
  try {
    infer_shapes(model.m);
    FAIL() << "inference accepted a 3x4 by 3x4 MatMul in the branch that runs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'mm' (MatMul)"), std::string::npos) << e.what();
  }
}

// The condition is only known at run time (silero VAD's sample rate): the sound branch gives the
// outputs' types and a warning names the failing one.
TEST(Infer, AnIfBranchThatMayNotRunWarns) {
  IfWithBadElse model(std::nullopt);
  InferFacts facts;
  infer_shapes(model.m, {}, &facts);
  const TypeInfo& y = model.if_node->outputs[0]->type;
  ASSERT_TRUE(y.shape);
  EXPECT_EQ(shape_to_string(*y.shape), "[3,4]");
  ASSERT_EQ(facts.warnings.size(), 1u);
  EXPECT_EQ(facts.warnings[0].first, model.if_node);
  EXPECT_NE(facts.warnings[0].second.find("else_branch fails inference"), std::string::npos);
  EXPECT_NE(facts.warnings[0].second.find("node 'mm' (MatMul)"), std::string::npos);
}

TEST(Infer, AnIfWhoseBranchesBothFailFails) {
  IfWithBadElse model(std::nullopt, /*bad_then=*/true);
  EXPECT_THROW(infer_shapes(model.m), Error);
}

}  // namespace
}  // namespace kiln
