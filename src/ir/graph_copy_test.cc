#include "ir/graph_copy.h"

#include <gtest/gtest.h>

#include "support/error.h"

namespace kiln {
namespace {

Value* tensor_input(Graph& g, const std::string& name, DataType t = DataType::kFloat) {
  Value* v = g.add_value(name);
  v->type = TypeInfo::tensor(t, Shape{2});
  v->is_graph_input = true;
  g.inputs.push_back(v);
  return v;
}

Value* op(Graph& g, const std::string& type, std::vector<Value*> ins, const std::string& out) {
  Node* n = g.add_node(type);
  n->name = type + "_" + out;
  for (size_t i = 0; i < ins.size(); ++i) g.set_input(n, static_cast<int>(i), ins[i]);
  Value* v = g.add_value(out);
  g.set_output(n, 0, v);
  return v;
}

// main: x, c2, w (initializer); If's then_branch: t = Add(x, w); an inner If on c2 whose
// then_branch is Mul(t, x) and whose else_branch outputs x itself.
struct Nested {
  Graph main;
  Value* x = nullptr;
  Value* c2 = nullptr;
  Value* w = nullptr;
  std::shared_ptr<Graph> then_branch;
};

std::unique_ptr<Nested> nested() {
  auto m = std::make_unique<Nested>();
  Graph& g = m->main;
  m->x = tensor_input(g, "x");
  m->c2 = tensor_input(g, "c2", DataType::kBool);
  m->w = g.add_value("w");
  m->w->data = Tensor(DataType::kFloat, {2});
  m->w->type = TypeInfo::tensor(DataType::kFloat, Shape{2});
  g.initializers.push_back(m->w);

  auto body = std::make_shared<Graph>(&g);
  body->name = "then_branch";
  Value* t = op(*body, "Add", {m->x, m->w}, "t");
  auto inner_then = std::make_shared<Graph>(body.get());
  inner_then->name = "inner_then";
  inner_then->outputs.push_back(op(*inner_then, "Mul", {t, m->x}, "p"));
  auto inner_else = std::make_shared<Graph>(body.get());
  inner_else->name = "inner_else";
  inner_else->outputs.push_back(m->x);
  Node* inner = body->add_node("If");
  inner->name = "inner_if";
  body->set_input(inner, 0, m->c2);
  Attribute a{.name = "then_branch", .kind = AttrKind::kGraph};
  a.g = inner_then;
  Attribute b{.name = "else_branch", .kind = AttrKind::kGraph};
  b.g = inner_else;
  inner->attrs = {a, b};
  Value* out = body->add_value("inner_out");
  body->set_output(inner, 0, out);
  body->outputs.push_back(out);
  m->then_branch = body;
  return m;
}

TEST(GraphCopy, OuterValuesBecomeInputsAndConstantsInitializers) {
  auto m = nested();
  const SubgraphCopy c = copy_subgraph(*m->then_branch);
  const Graph& g = *c.graph;
  EXPECT_EQ(g.parent(), nullptr);
  EXPECT_EQ(g.name, "then_branch");
  // x read first (by Add), then c2 (by the inner If); w has data: an initializer sharing it.
  EXPECT_EQ(c.outer_inputs, (std::vector<const Value*>{m->x, m->c2}));
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[0]->name, "x");
  EXPECT_EQ(g.inputs[0]->owner, &g);
  EXPECT_TRUE(g.inputs[0]->is_graph_input);
  ASSERT_EQ(g.initializers.size(), 1u);
  EXPECT_TRUE(g.initializers[0]->data.same_buffer(m->w->data));

  ASSERT_EQ(g.nodes().size(), 2u);
  const Node& add = *g.nodes()[0];
  EXPECT_EQ(add.inputs[0], g.inputs[0]);
  EXPECT_EQ(add.inputs[1], g.initializers[0]);
  const Node& inner = *g.nodes()[1];
  EXPECT_EQ(inner.inputs[0], g.inputs[1]);
  EXPECT_EQ(g.outputs[0], inner.outputs[0]);
  EXPECT_EQ(g.outputs[0]->producer, &inner);

  // The nested graphs are copies whose outer reads point into the copy.
  const Graph& then_copy = *inner.attr("then_branch")->g;
  EXPECT_NE(&then_copy, m->then_branch->nodes()[1]->attr("then_branch")->g.get());
  EXPECT_EQ(then_copy.parent(), &g);
  const Node& mul = *then_copy.nodes()[0];
  EXPECT_EQ(mul.inputs[0], add.outputs[0]);
  EXPECT_EQ(mul.inputs[1], g.inputs[0]);
  EXPECT_EQ(inner.attr("else_branch")->g->outputs[0], g.inputs[0]);
  EXPECT_EQ(g.inputs[0]->uses.size(), 2u);  // Add and the nested Mul

  // Every copied node knows its original; the original is untouched.
  EXPECT_EQ(c.origin.at(&add), m->then_branch->nodes()[0].get());
  EXPECT_EQ(c.origin.at(&mul), m->then_branch->nodes()[1]->attr("then_branch")->g->nodes()[0].get());
  EXPECT_EQ(c.origin.size(), 3u);
  EXPECT_EQ(m->then_branch->nodes()[0]->inputs[0], m->x);
}

TEST(GraphCopy, ConstantOfMakesOuterValuesInitializers) {
  auto m = nested();
  Tensor known(DataType::kFloat, {2});
  const SubgraphCopy c = copy_subgraph(*m->then_branch, [&](const Value* v) -> const Tensor* {
    return v == m->x ? &known : nullptr;
  });
  // w: constant only where constant_of says so
  EXPECT_EQ(c.outer_inputs, (std::vector<const Value*>{m->w, m->c2}));
  ASSERT_EQ(c.graph->initializers.size(), 1u);
  EXPECT_TRUE(c.graph->initializers[0]->data.same_buffer(known));
}

TEST(GraphCopy, AValueReadBeforeItIsMadeFails) {
  Graph main;
  Value* x = tensor_input(main, "x");
  Graph body(&main);
  body.name = "body";
  Value* late = body.add_value("late");  // made by no node before its reader
  body.outputs.push_back(op(body, "Add", {x, late}, "y"));
  try {
    copy_subgraph(body);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadModel);
    EXPECT_NE(std::string(e.what()).find("'late'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
