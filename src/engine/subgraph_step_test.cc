// If and Loop bodies run on the fast engine (their own plans, compiled on first run) and give the
// reference Session's outputs: outer-scope reads, nested Ifs, branch outputs that are outer values
// or constants, shapes that change from run to run, and the interpreter where a body declines.
#include "engine/subgraph_step.h"

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using testing::expect_same_as_reference;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::steps_of;

Tensor bool_scalar(bool v) {
  Tensor t(DataType::kBool, {});
  t.set_f64(0, v);
  return t;
}

// The nodes that ran (name, kernel, depth).
struct Ran {
  std::string name;
  std::string kernel;
  int depth;
};
class RanObserver : public RunObserver {
 public:
  void on_node(const NodeEvent& e) override {
    ran.push_back({e.node ? e.node->name : "", std::string(e.kernel), e.depth});
  }
  const Ran* find(const std::string& name) const {
    for (const Ran& r : ran)
      if (r.name == name) return &r;
    return nullptr;
  }
  std::vector<Ran> ran;
};

// A subgraph of `parent` under construction.
struct Body {
  explicit Body(Graph* parent, const std::string& name) : g(std::make_shared<Graph>(parent)) {
    g->name = name;
  }
  Value* input(const std::string& name, DataType t, Shape s) {
    Value* v = g->add_value(name);
    v->type = TypeInfo::tensor(t, std::move(s));
    v->is_graph_input = true;
    g->inputs.push_back(v);
    return v;
  }
  Value* op(const std::string& type, std::vector<Value*> ins, std::vector<Attribute> attrs = {}) {
    Node* n = g->add_node(type);
    n->name = g->name + "_" + type + std::to_string(count++);
    n->opset = 17;
    n->attrs = std::move(attrs);
    for (size_t i = 0; i < ins.size(); ++i) g->set_input(n, static_cast<int>(i), ins[i]);
    Value* v = g->add_value(n->name + "_out");
    g->set_output(n, 0, v);
    return v;
  }
  Value* constant(const std::string& name, Tensor t) {
    Value* v = g->add_value(name);
    v->type = TypeInfo::tensor(t.dtype(), shape_of(t.dims()));
    v->data = std::move(t);
    g->initializers.push_back(v);
    return v;
  }
  Attribute attr(const std::string& name) {
    Attribute a{.name = name, .kind = AttrKind::kGraph};
    a.g = g;
    return a;
  }
  std::shared_ptr<Graph> g;
  int count = 0;
};

// An If node of cond with the given branches and `outputs` outputs, added to `g`.
std::vector<Value*> add_if(Graph& g, const std::string& name, Value* cond, Body& then_b,
                           Body& else_b, int outputs = 1) {
  Node* n = g.add_node("If");
  n->name = name;
  n->opset = 17;
  n->attrs = {then_b.attr("then_branch"), else_b.attr("else_branch")};
  g.set_input(n, 0, cond);
  std::vector<Value*> outs;
  for (int i = 0; i < outputs; ++i) {
    outs.push_back(g.add_value(name + "_out" + std::to_string(i)));
    g.set_output(n, i, outs.back());
  }
  return outs;
}

// The If's branches read values of the main graph (a oneDNN conv's output): the branch's Relu
// is a fast step of the branch's plan, reported as the branch's node one level down.
TEST(SubgraphStep, IfBranchRunsItsOwnPlan) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 4, 5, 5});
    Value* cond = b.input("cond", {}, DataType::kBool);
    Value* c = b.op("Conv", {x, b.constant("w", random_tensor({4, 4, 1, 1}, 3))});
    b.output(b.if_op(cond, {"Relu", {c}}, {"Add", {c, x}}));
    return b.take();
  };
  for (bool cond : {true, false}) {
    const Tensor x = random_tensor({1, 4, 5, 5}, 1);
    const auto s = expect_same_as_reference(make, {x, bool_scalar(cond)});
    EXPECT_EQ(steps_of(s, "onednn.conv"), 1);
    EXPECT_EQ(steps_of(s, "engine.if"), 1);
    CompiledModel m(make());
    RanObserver seen;
    m.run({RtValue::of(x), RtValue::of(bool_scalar(cond))}, &seen);
    const Ran* inner = seen.find(cond ? "then_Relu" : "else_Add");
    ASSERT_NE(inner, nullptr);
    EXPECT_EQ(inner->depth, 1);
    EXPECT_NE(inner->kernel, "reference");
    const std::string plan = m.describe({{1, 4, 5, 5}, {}});
    EXPECT_NE(plan.find(cond ? "then_branch: fast engine, 1 plan" : "else_branch: fast engine"),
              std::string::npos)
        << plan;
    EXPECT_NE(plan.find(cond ? "else_branch: not run" : "then_branch: not run"),
              std::string::npos)
        << plan;
  }
}

// then: t = x + w; an inner If on c2 runs Relu(t) or Neg(x) (a value two scopes up).
Model nested_if_model() {
  ModelBuilder b;
  Value* x = b.input("x", {2, 3});
  Value* c1 = b.input("c1", {}, DataType::kBool);
  Value* c2 = b.input("c2", {}, DataType::kBool);
  Value* w = b.constant("w", random_tensor({2, 3}, 5));
  Model m = b.take();
  Graph& g = *m.graph;
  Body then_b(&g, "then_branch"), else_b(&g, "else_branch");
  Value* t = then_b.op("Add", {x, w});
  Body inner_then(then_b.g.get(), "inner_then"), inner_else(then_b.g.get(), "inner_else");
  inner_then.g->outputs.push_back(inner_then.op("Relu", {t}));
  inner_else.g->outputs.push_back(inner_else.op("Neg", {x}));
  then_b.g->outputs.push_back(add_if(*then_b.g, "inner_if", c2, inner_then, inner_else)[0]);
  else_b.g->outputs.push_back(else_b.op("Sigmoid", {x}));
  g.outputs.push_back(add_if(g, "outer_if", c1, then_b, else_b)[0]);
  return m;
}

TEST(SubgraphStep, NestedIfs) {
  for (bool c1 : {true, false}) {
    for (bool c2 : {true, false}) {
      SCOPED_TRACE(fmt::format("c1 {} c2 {}", c1, c2));
      const std::vector<Tensor> feeds = {random_tensor({2, 3}, 9), bool_scalar(c1), bool_scalar(c2)};
      expect_same_as_reference(nested_if_model, feeds);
      CompiledModel m(nested_if_model());
      RanObserver seen;
      std::vector<RtValue> values;
      for (const Tensor& t : feeds) values.push_back(RtValue::of(t));
      m.run(values, &seen);
      if (!c1) continue;
      const Ran* inner = seen.find(c2 ? "inner_then_Relu0" : "inner_else_Neg0");
      ASSERT_NE(inner, nullptr);
      EXPECT_EQ(inner->depth, 2);
      EXPECT_NE(inner->kernel, "reference");
      const Ran* inner_if = seen.find("inner_if");
      ASSERT_NE(inner_if, nullptr);
      EXPECT_EQ(inner_if->kernel, "engine.if");
      EXPECT_EQ(inner_if->depth, 1);
    }
  }
}

// Branch outputs that are no node's: a main-graph input, a main-graph initializer, a constant of
// the branch itself.
TEST(SubgraphStep, BranchOutputsOuterValuesAndConstants) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {2, 2});
    Value* cond = b.input("cond", {}, DataType::kBool);
    Value* w = b.constant("w", random_tensor({2, 2}, 2));
    Model m = b.take();
    Graph& g = *m.graph;
    Body then_b(&g, "then_branch"), else_b(&g, "else_branch");
    then_b.g->outputs = {x, w};
    else_b.g->outputs = {else_b.constant("k", random_tensor({2, 2}, 4)), x};
    for (Value* v : add_if(g, "if", cond, then_b, else_b, 2)) g.outputs.push_back(v);
    return m;
  };
  for (bool cond : {true, false}) {
    expect_same_as_reference(make, {random_tensor({2, 2}, 1), bool_scalar(cond)});
    CompiledModel m(make());
    m.run({RtValue::of(random_tensor({2, 2}, 1)), RtValue::of(bool_scalar(cond))});
    const std::string plan = m.describe({{2, 2}, {}});
    EXPECT_NE(plan.find(cond ? "then_branch: fast engine" : "else_branch: fast engine"),
              std::string::npos)
        << plan;
  }
}

// A branch returning a view of an outer value (Squeeze of a Relu's planned result): the If's output
// must not keep viewing arena bytes the memory plan gives to the steps after it (Silero VAD v4
// read garbage there once its Pad became a planned cpu.pad step).
TEST(SubgraphStep, BranchViewOfAnOuterValueOutlivesItsBuffer) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 64});
    Value* cond = b.input("cond", {}, DataType::kBool);
    Value* r = b.op("Relu", {x});
    Value* axes = b.constant("axes", testing::int64_tensor({1}, {0}));
    Value* y = b.if_op(cond, {"Squeeze", {r, axes}}, {"Squeeze", {r, axes}});
    // Work after the If, on buffers the plan may place where r was.
    Value* z = b.op("Sigmoid", {b.op("Mul", {b.op("Neg", {x}), x})});
    b.output(b.op("Add", {y, b.op("Squeeze", {z, axes})}));
    return b.take();
  };
  for (bool cond : {true, false})
    expect_same_as_reference(make, {random_tensor({1, 64}, 1), bool_scalar(cond)});
}

// The branch reads a value whose dims depend on the data (NonZero): one main plan, a branch plan
// per set of dims seen.
TEST(SubgraphStep, BranchShapesChangeFromRunToRun) {
  const auto make = [] {
    ModelBuilder b(13);
    Value* x = b.input("x", {6});
    Value* cond = b.input("cond", {}, DataType::kBool);
    Value* nz = b.op("NonZero", {x});
    Model m = b.take();
    Graph& g = *m.graph;
    Body then_b(&g, "then_branch"), else_b(&g, "else_branch");
    Value* f = then_b.op("Cast", {nz}, {testing::attr("to", int64_t{1})});
    then_b.g->outputs.push_back(then_b.op("Relu", {then_b.op("Neg", {f})}));
    else_b.g->outputs.push_back(else_b.op("Cast", {nz}, {testing::attr("to", int64_t{1})}));
    g.outputs.push_back(add_if(g, "if", cond, then_b, else_b)[0]);
    return m;
  };
  CompiledModel m(make());
  Session reference(make());
  for (int zeros : {0, 2, 5, 2}) {
    Tensor x = random_tensor({6}, 3, 1, 2);
    for (int i = 0; i < zeros; ++i) x.data<float>()[i] = 0;
    const std::vector<RtValue> feeds = {RtValue::of(x), RtValue::of(bool_scalar(true))};
    const auto expected = reference.run(feeds);
    const auto actual = m.run(feeds);
    ASSERT_EQ(actual.size(), 1u);
    EXPECT_EQ(actual[0].tensor.dims(), (std::vector<int64_t>{1, 6 - zeros}));
    EXPECT_TRUE(compare_values(actual[0], expected[0], Tolerance{}).equal);
  }
  EXPECT_EQ(m.plans(), 1);
  const std::string plan = m.describe({{6}, {}});
  EXPECT_NE(plan.find("then_branch: fast engine, 3 plans"), std::string::npos) << plan;
}

// Loop: a carried value plus a main-graph value, M iterations.
Model loop_model(bool grow) {
  ModelBuilder b(13);
  Value* x = b.input("x", {1, 3});
  Value* trip = b.constant("M", testing::int64_tensor({}, {12}));
  Model m = b.take();
  Graph& g = *m.graph;
  Body body(&g, "body");
  body.input("i", DataType::kInt64, Shape{});
  Value* c = body.input("c", DataType::kBool, Shape{});
  Value* y = body.input("y", DataType::kFloat, grow ? Shape{1, Dim()} : Shape{1, 3});
  Value* next = grow ? body.op("Concat", {y, x}, {testing::attr("axis", int64_t{1})})
                     : body.op("Add", {y, x});
  body.g->outputs = {body.op("Identity", {c}), body.op("Tanh", {next})};
  Node* n = g.add_node("Loop");
  n->name = "loop";
  n->opset = 13;
  n->attrs = {body.attr("body")};
  g.set_input(n, 0, trip);
  g.set_input(n, 1, nullptr);
  g.set_input(n, 2, x);
  Value* out = g.add_value("loop_out");
  g.set_output(n, 0, out);
  g.outputs.push_back(out);
  return m;
}

TEST(SubgraphStep, LoopBodyRunsItsOwnPlan) {
  const auto make = [] { return loop_model(false); };
  const auto s = expect_same_as_reference(make, {random_tensor({1, 3}, 6)});
  EXPECT_EQ(steps_of(s, "engine.loop"), 1);
  CompiledModel m(make());
  RanObserver seen;
  m.run({RtValue::of(random_tensor({1, 3}, 6))}, &seen);
  int adds = 0;
  for (const Ran& r : seen.ran)
    if (r.name == "body_Add0") {
      ++adds;
      EXPECT_EQ(r.depth, 1);
      EXPECT_NE(r.kernel, "reference");
    }
  EXPECT_EQ(adds, 12);
  const std::string plan = m.describe({{1, 3}});
  EXPECT_NE(plan.find("body: fast engine, 1 plan"), std::string::npos) << plan;
}

// A carried value that grows every iteration would need a plan per iteration: after a few the
// body goes to the interpreter, and says so.
TEST(SubgraphStep, GrowingLoopFallsBackToTheInterpreter) {
  const auto make = [] { return loop_model(true); };
  expect_same_as_reference(make, {random_tensor({1, 3}, 6)});
  CompiledModel m(make());
  m.run({RtValue::of(random_tensor({1, 3}, 6))});
  const std::string plan = m.describe({{1, 3}});
  EXPECT_NE(plan.find("body: interpreter: its input shapes changed more than"), std::string::npos)
      << plan;
}

}  // namespace
}  // namespace kiln::engine
