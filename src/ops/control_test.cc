// Unit tests of the control family: control flow through a fake subgraph runner, sequences,
// optionals, recurrent cells, and shape inference of the subgraph ops.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "ir/scalar_types.h"
#include "ops/op.h"
#include "ops/op_test_util.h"
#include "support/error.h"

namespace kiln {
namespace {

using op_test::OpNode;
using op_test::values;

using Body = std::function<std::vector<RtValue>(std::vector<RtValue>)>;

// Runs subgraphs as C++ functions registered per Graph.
struct FakeRunner : SubgraphRunner {
  std::map<const Graph*, Body> bodies;
  int calls = 0;
  std::vector<RtValue> run(const Graph& g, std::vector<RtValue> inputs) override {
    ++calls;
    return bodies.at(&g)(std::move(inputs));
  }
};

Tensor f32(std::vector<int64_t> d, std::vector<double> v) {
  Tensor t(DataType::kFloat, std::move(d));
  EXPECT_EQ(t.numel(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) t.set_f64(static_cast<int64_t>(i), v[i]);
  return t;
}
Tensor i64s(std::vector<int64_t> d, std::vector<double> v) {
  Tensor t(DataType::kInt64, std::move(d));
  for (size_t i = 0; i < v.size(); ++i) t.set_f64(static_cast<int64_t>(i), v[i]);
  return t;
}
Tensor i64(int64_t v) { return i64s({}, {static_cast<double>(v)}); }
Tensor boolean(bool b) {
  Tensor t(DataType::kBool, {});
  t.data<bool>()[0] = b;
  return t;
}
RtValue val(Tensor t) { return RtValue::of(std::move(t)); }
Tensor add(const Tensor& a, const Tensor& b) {
  Tensor r(a.dtype(), a.dims());
  for (int64_t i = 0; i < a.numel(); ++i) r.set_f64(i, a.get_f64(i) + b.get_f64(i));
  return r;
}

// ---------------------------------------------------------------------------------------------

TEST(ControlIf, RunsTheChosenBranch) {
  OpNode h("If", 1, 1);
  Graph* then_g = h.attr_g("then_branch");
  Graph* else_g = h.attr_g("else_branch");
  FakeRunner r;
  r.bodies[then_g] = [](std::vector<RtValue>) { return std::vector<RtValue>{val(f32({1}, {1}))}; };
  r.bodies[else_g] = [](std::vector<RtValue>) {
    return std::vector<RtValue>{val(f32({2}, {2, 2}))};
  };
  EXPECT_EQ(values(h.run_values({val(boolean(true))}, &r)[0].tensor), std::vector<double>{1});
  EXPECT_EQ(values(h.run_values({val(boolean(false))}, &r)[0].tensor), (std::vector<double>{2, 2}));
}

TEST(ControlIf, InferenceMergesBranches) {
  OpNode h("If", 1, 2);
  Graph* then_g = h.attr_g("then_branch");
  h.attr_g("else_branch");
  auto sub = [&](const Graph& g, const std::vector<TypeInfo>&) {
    if (&g == then_g)
      return std::vector<TypeInfo>{
          TypeInfo::tensor(DataType::kFloat, Shape{2, 3}),
          TypeInfo::sequence(TypeInfo::tensor(DataType::kInt64, Shape{4}))};
    return std::vector<TypeInfo>{TypeInfo::tensor(DataType::kFloat, Shape{2, 5}),
                                 TypeInfo::sequence(TypeInfo::tensor(DataType::kInt64, Shape{4}))};
  };
  auto out = h.infer({TypeInfo::tensor(DataType::kBool, Shape{})}, {}, sub);
  EXPECT_EQ(out[0]->to_string(), TypeInfo::tensor(DataType::kFloat, Shape{2, Dim()}).to_string());
  EXPECT_EQ(out[1]->kind, TypeInfo::Kind::kSequence);
  EXPECT_EQ(out[1]->inner->to_string(), TypeInfo::tensor(DataType::kInt64, Shape{4}).to_string());
}

// Body: (i, cond, y) -> (i < stop, y + i, y + i)
void loop_body(FakeRunner& r, Graph* body, int64_t stop) {
  r.bodies[body] = [stop](std::vector<RtValue> in) {
    const int64_t i = in[0].tensor.get_i64(0);
    Tensor y = in[2].tensor;
    Tensor inc = f32(y.dims(), std::vector<double>(y.numel(), static_cast<double>(i)));
    Tensor y2 = add(y, inc);
    return std::vector<RtValue>{val(boolean(i + 1 < stop)), val(y2), val(y2)};
  };
}

TEST(ControlLoop, TripCountAndScanOutputs) {
  OpNode h("Loop", 3, 2);
  Graph* body = h.attr_g("body");
  FakeRunner r;
  loop_body(r, body, 100);
  auto out = h.run_values({val(i64(4)), val(boolean(true)), val(f32({2}, {0, 1}))}, &r);
  EXPECT_EQ(values(out[0].tensor), (std::vector<double>{6, 7}));  // + 0+1+2+3
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(values(out[1].tensor), (std::vector<double>{0, 1, 1, 2, 3, 4, 6, 7}));
}

TEST(ControlLoop, ConditionStopsEarlyAndMMayBeOmitted) {
  OpNode h("Loop", 3, 2);
  h.omit_input(0);
  Graph* body = h.attr_g("body");
  FakeRunner r;
  loop_body(r, body, 2);
  auto out = h.run_values({RtValue{}, val(boolean(true)), val(f32({1}, {10}))}, &r);
  EXPECT_EQ(r.calls, 2);
  EXPECT_EQ(values(out[0].tensor), std::vector<double>{11});
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{2, 1}));
}

TEST(ControlLoop, ZeroIterations) {
  OpNode h("Loop", 3, 2);
  Graph* body = h.attr_g("body");
  h.n->outputs[1]->type = TypeInfo::tensor(DataType::kFloat, Shape{Dim(), 3});
  FakeRunner r;
  loop_body(r, body, 5);
  auto out = h.run_values({val(i64(0)), val(boolean(true)), val(f32({3}, {1, 2, 3}))}, &r);
  EXPECT_EQ(r.calls, 0);
  EXPECT_EQ(values(out[0].tensor), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{0, 3}));
}

TEST(ControlLoop, CarriesSequencesAndEmptyOptionals) {
  OpNode h("Loop", 3, 1);
  Graph* body = h.attr_g("body");
  FakeRunner r;
  r.bodies[body] = [](std::vector<RtValue> in) {
    std::vector<Tensor> seq = in[2].is_none() ? std::vector<Tensor>{} : in[2].sequence;
    seq.push_back(i64(in[0].tensor.get_i64(0)));
    return std::vector<RtValue>{in[1], RtValue::of_sequence(seq)};
  };
  auto out = h.run_values({val(i64(3)), val(boolean(true)), RtValue{}}, &r);
  ASSERT_TRUE(out[0].is_sequence());
  EXPECT_EQ(out[0].sequence.size(), 3u);
  EXPECT_EQ(out[0].sequence[2].get_i64(0), 2);
}

TEST(ControlLoop, InferenceWidensChangingCarriedShapes) {
  OpNode h("Loop", 3, 2);
  h.attr_g("body");
  auto sub = [](const Graph&, const std::vector<TypeInfo>& in) {
    // the carried tensor grows by one each iteration
    TypeInfo y = in[2];
    if (y.shape && (*y.shape)[0].is_known()) (*y.shape)[0] = (*y.shape)[0].value() + 1;
    return std::vector<TypeInfo>{TypeInfo::tensor(DataType::kBool, Shape{}), y,
                                 TypeInfo::tensor(DataType::kFloat, Shape{7})};
  };
  auto out = h.infer(
      {TypeInfo::tensor(DataType::kInt64, Shape{}), TypeInfo::tensor(DataType::kBool, Shape{}),
       TypeInfo::tensor(DataType::kFloat, Shape{1})},
      {}, sub);
  EXPECT_EQ(out[0]->to_string(), TypeInfo::tensor(DataType::kFloat, Shape{Dim()}).to_string());
  EXPECT_EQ(out[1]->to_string(), TypeInfo::tensor(DataType::kFloat, Shape{Dim(), 7}).to_string());
}

// Scan body: (sum, x) -> (sum + x, sum + x)
void scan_body(FakeRunner& r, Graph* body) {
  r.bodies[body] = [](std::vector<RtValue> in) {
    Tensor s = add(in[0].tensor, in[1].tensor);
    return std::vector<RtValue>{val(s), val(s)};
  };
}

TEST(ControlScan, AxesAndDirections) {
  OpNode h("Scan", 2, 2, 16);
  h.attr_i("num_scan_inputs", 1);
  h.attr_is("scan_input_axes", {1});
  h.attr_is("scan_input_directions", {1});
  h.attr_is("scan_output_axes", {-1});
  Graph* body = h.attr_g("body");
  FakeRunner r;
  scan_body(r, body);
  // x [2, 3]: scanned along axis 1, in reverse: steps x[:,2], x[:,1], x[:,0]
  auto out = h.run_values({val(f32({2}, {0, 0})), val(f32({2, 3}, {1, 2, 3, 10, 20, 30}))}, &r);
  EXPECT_EQ(values(out[0].tensor), (std::vector<double>{6, 60}));
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(out[1].tensor), (std::vector<double>{3, 5, 6, 30, 50, 60}));
}

TEST(ControlScan, ReverseOutputDirection) {
  OpNode h("Scan", 2, 2, 16);
  h.attr_i("num_scan_inputs", 1);
  h.attr_is("scan_output_directions", {1});
  Graph* body = h.attr_g("body");
  FakeRunner r;
  scan_body(r, body);
  auto out = h.run_values({val(f32({1}, {0})), val(f32({3, 1}, {1, 2, 3}))}, &r);
  EXPECT_EQ(values(out[1].tensor), (std::vector<double>{6, 3, 1}));
}

TEST(ControlScan, Opset8Batched) {
  OpNode h("Scan", 3, 2, 8);
  h.omit_input(0);
  h.attr_i("num_scan_inputs", 1);
  Graph* body = h.attr_g("body");
  FakeRunner r;
  scan_body(r, body);
  // batch 2, seq 3, item [1]
  auto out =
      h.run_values({RtValue{}, val(f32({2, 1}, {0, 100})), val(f32({2, 3, 1}, {1, 2, 3, 4, 5, 6}))}, &r);
  EXPECT_EQ(values(out[0].tensor), (std::vector<double>{6, 115}));
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(values(out[1].tensor), (std::vector<double>{1, 3, 6, 104, 109, 115}));
}

TEST(ControlScan, Opset8SequenceLens) {
  OpNode h("Scan", 3, 2, 8);
  h.attr_i("num_scan_inputs", 1);
  Graph* body = h.attr_g("body");
  FakeRunner r;
  scan_body(r, body);
  auto out = h.run_values(
      {val(i64s({2}, {2, 3})), val(f32({2, 1}, {0, 0})), val(f32({2, 3, 1}, {1, 2, 3, 4, 5, 6}))},
      &r);
  EXPECT_EQ(values(out[0].tensor), (std::vector<double>{3, 15}));
  EXPECT_EQ(values(out[1].tensor), (std::vector<double>{1, 3, 0, 4, 9, 15}));
}

TEST(ControlScan, Inference) {
  OpNode h("Scan", 2, 2, 16);
  h.attr_i("num_scan_inputs", 1);
  h.attr_is("scan_input_axes", {1});
  h.attr_is("scan_output_axes", {1});
  h.attr_g("body");
  std::vector<TypeInfo> seen;
  auto sub = [&](const Graph&, const std::vector<TypeInfo>& in) {
    seen = in;
    return std::vector<TypeInfo>{in[0], TypeInfo::tensor(DataType::kFloat, Shape{4, 5})};
  };
  auto out = h.infer({TypeInfo::tensor(DataType::kFloat, Shape{2}),
                      TypeInfo::tensor(DataType::kFloat, Shape{2, Dim::symbol("T")})},
                     {}, sub);
  EXPECT_EQ(seen[1].to_string(), TypeInfo::tensor(DataType::kFloat, Shape{2}).to_string());
  EXPECT_EQ(out[1]->to_string(),
            TypeInfo::tensor(DataType::kFloat, Shape{4, Dim::symbol("T"), 5}).to_string());
}

// ---------------------------------------------------------------------------------------------

TEST(ControlSequence, ConstructInsertAtEraseLength) {
  OpNode c("SequenceConstruct", 2, 1);
  auto seq = c.run_values({val(f32({1}, {1})), val(f32({2}, {2, 3}))})[0];
  ASSERT_TRUE(seq.is_sequence());
  OpNode ins("SequenceInsert", 3, 1);
  seq = ins.run_values({seq, val(f32({1}, {9})), val(i64(-1))})[0];  // before the last
  ASSERT_EQ(seq.sequence.size(), 3u);
  EXPECT_EQ(values(seq.sequence[1]), std::vector<double>{9});
  OpNode at("SequenceAt", 2, 1);
  EXPECT_EQ(values(at.run_values({seq, val(i64(-1))})[0].tensor), (std::vector<double>{2, 3}));
  EXPECT_THROW(at.run_values({seq, val(i64(3))}), Error);
  OpNode er("SequenceErase", 2, 1);
  er.omit_input(1);
  auto shorter = er.run_values({seq, RtValue{}})[0];
  EXPECT_EQ(shorter.sequence.size(), 2u);
  OpNode len("SequenceLength", 1, 1);
  EXPECT_EQ(len.run_values({shorter})[0].tensor.get_i64(0), 2);
  OpNode empty("SequenceEmpty", 0, 1);
  EXPECT_TRUE(empty.run_values({})[0].is_sequence());
  EXPECT_THROW(ins.run_values({seq, val(i64(1)), val(i64(0))}), Error);  // int64 into floats
}

TEST(ControlSequence, SplitAndConcat) {
  OpNode sp("SplitToSequence", 2, 1);
  sp.attr_i("axis", 1);
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto seq = sp.run_values({val(x), val(i64(2))})[0];
  ASSERT_EQ(seq.sequence.size(), 2u);
  EXPECT_EQ(seq.sequence[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(seq.sequence[1]), (std::vector<double>{3, 6}));
  OpNode sp2("SplitToSequence", 1, 1);
  sp2.attr_i("keepdims", 0);
  auto rows = sp2.run_values({val(x)})[0];
  ASSERT_EQ(rows.sequence.size(), 2u);
  EXPECT_EQ(rows.sequence[0].dims(), (std::vector<int64_t>{3}));

  OpNode cc("ConcatFromSequence", 1, 1);
  cc.attr_i("axis", -1);
  Tensor back = cc.run_values({seq})[0].tensor;
  EXPECT_EQ(back.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(back), values(x));
  OpNode st("ConcatFromSequence", 1, 1);
  st.attr_i("axis", -1).attr_i("new_axis", 1);
  Tensor stacked = st.run_values({rows})[0].tensor;
  EXPECT_EQ(stacked.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(stacked), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(ControlSequence, Map) {
  OpNode h("SequenceMap", 2, 1);
  Graph* body = h.attr_g("body");
  FakeRunner r;
  r.bodies[body] = [](std::vector<RtValue> in) {
    return std::vector<RtValue>{val(add(in[0].tensor, in[1].tensor))};
  };
  auto seq = RtValue::of_sequence({f32({2}, {1, 2}), f32({2}, {3, 4})});
  auto out = h.run_values({seq, val(f32({2}, {10, 20}))}, &r)[0];
  ASSERT_EQ(out.sequence.size(), 2u);
  EXPECT_EQ(values(out.sequence[1]), (std::vector<double>{13, 24}));
}

TEST(ControlOptional, HasAndGet) {
  OpNode has("OptionalHasElement", 1, 1);
  EXPECT_FALSE(has.run_values({RtValue{}})[0].tensor.data<bool>()[0]);
  EXPECT_TRUE(has.run_values({val(f32({1}, {1}))})[0].tensor.data<bool>()[0]);
  OpNode none("OptionalHasElement", 0, 1);
  EXPECT_FALSE(none.run_values({})[0].tensor.data<bool>()[0]);
  OpNode get("OptionalGetElement", 1, 1);
  EXPECT_THROW(get.run_values({RtValue{}}), Error);
  EXPECT_TRUE(get.run_values({RtValue::of_sequence({})})[0].is_sequence());
  OpNode opt("Optional", 0, 1);
  Attribute a;
  a.name = "type";
  a.kind = AttrKind::kTypeProto;
  a.tp = TypeInfo::tensor(DataType::kFloat);
  opt.n->attrs.push_back(a);
  EXPECT_TRUE(opt.run_values({})[0].is_none());
  auto t = opt.infer({});
  EXPECT_EQ(t[0]->kind, TypeInfo::Kind::kOptional);
}

// ---------------------------------------------------------------------------------------------

TEST(ControlRnn, LstmZeroWeights) {
  // All weights zero: i = f = o = 0.5, c~ = 0, so C = 0.5 C0 and H = 0.5 tanh(C).
  OpNode h("LSTM", 7, 3, 22);
  h.attr_i("hidden_size", 1);
  h.omit_input(3);
  h.omit_input(4);
  auto out = h.run_values({val(f32({1, 1, 1}, {5})), val(f32({1, 4, 1}, {0, 0, 0, 0})),
                    val(f32({1, 4, 1}, {0, 0, 0, 0})), RtValue{}, RtValue{},
                    val(f32({1, 1, 1}, {0})), val(f32({1, 1, 1}, {1}))});
  EXPECT_NEAR(out[2].tensor.get_f64(0), 0.5, 1e-6);
  EXPECT_NEAR(out[1].tensor.get_f64(0), 0.5 * std::tanh(0.5), 1e-6);
  EXPECT_NEAR(out[0].tensor.get_f64(0), 0.5 * std::tanh(0.5), 1e-6);
}

TEST(ControlRnn, BidirectionalWithSequenceLens) {
  // RNN with Relu, identity-like weights: H_t = relu(x_t + H_{t-1}): running sums.
  OpNode h("RNN", 5, 2, 22);
  h.attr_i("hidden_size", 1).attr_s("direction", "bidirectional");
  h.attr_ss("activations", {"Relu", "Relu"});
  h.omit_input(3);
  // X [seq 3, batch 2, input 1]
  Tensor x = f32({3, 2, 1}, {1, 10, 2, 20, 3, 30});
  auto out = h.run_values({val(x), val(f32({2, 1, 1}, {1, 1})), val(f32({2, 1, 1}, {1, 1})), RtValue{},
                    val(i64s({2}, {3, 2}))});
  const Tensor& y = out[0].tensor;  // [3, 2, 2, 1]
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{3, 2, 2, 1}));
  auto Y = [&](int t, int d, int b) { return y.get_f64((t * 2 + d) * 2 + b); };
  EXPECT_EQ(Y(0, 0, 0), 1);
  EXPECT_EQ(Y(2, 0, 0), 6);
  EXPECT_EQ(Y(1, 0, 1), 30);
  EXPECT_EQ(Y(2, 0, 1), 0);   // past the batch item's length
  EXPECT_EQ(Y(0, 1, 0), 6);   // reverse: sums from the end
  EXPECT_EQ(Y(1, 1, 1), 20);  // reverse of batch 1 starts at t = 1
  EXPECT_EQ(Y(0, 1, 1), 30);
  const Tensor& yh = out[1].tensor;  // [2, 2, 1]
  EXPECT_EQ(values(yh), (std::vector<double>{6, 30, 6, 30}));
}

TEST(ControlRnn, GruLayoutAndInference) {
  OpNode h("GRU", 3, 2, 22);
  h.attr_i("hidden_size", 2).attr_i("layout", 1);
  auto t = h.infer({TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("B"), 5, 3}),
                    TypeInfo::tensor(DataType::kFloat, Shape{1, 6, 3}),
                    TypeInfo::tensor(DataType::kFloat, Shape{1, 6, 2})});
  EXPECT_EQ(t[0]->to_string(),
            TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("B"), 5, 1, 2}).to_string());
  EXPECT_EQ(t[1]->to_string(),
            TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("B"), 1, 2}).to_string());
  // zero weights: z = 0.5, h~ = 0, H = 0.5 H0 = 0
  auto out = h.run_values({val(f32({1, 2, 3}, {1, 2, 3, 4, 5, 6})),
                    val(f32({1, 6, 3}, std::vector<double>(18, 0))),
                    val(f32({1, 6, 2}, std::vector<double>(12, 0)))});
  EXPECT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{1, 2, 1, 2}));
  EXPECT_EQ(values(out[1].tensor), (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace kiln
