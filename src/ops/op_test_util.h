// Test support for the op families' unit tests: one node in a graph of its own, run through its
// schema's reference kernel or its shape inference, and small tensors to feed it.
//
// The CPU kernels' differential tests compare against the same kernels through
// engine/cpu/reference_op.h's ReferenceOp, which builds its node per run; OpNode keeps the node,
// so a test can also infer shapes of it, give it subgraphs and look at it afterwards.
// Header-only; test code only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "ops/op.h"

namespace kiln::op_test {

class OpNode {
 public:
  Graph g;
  Node* n = nullptr;
  const OpSchema* schema = nullptr;

  // A node of `op` reading values x0.. and making y0.. (an input left out of the run is omitted).
  OpNode(const std::string& op, int inputs, int outputs = 1, int opset = 25,
         const std::string& domain = "") {
    n = g.add_node(op, domain);
    n->opset = opset;
    for (int i = 0; i < inputs; ++i) g.set_input(n, i, g.add_value("x" + std::to_string(i)));
    for (int i = 0; i < outputs; ++i) g.set_output(n, i, g.add_value("y" + std::to_string(i)));
    schema = OpRegistry::global().find(domain, op);
    EXPECT_NE(schema, nullptr) << op;
  }

  void omit_input(int i) { g.set_input(n, i, nullptr); }

  // Attributes, one setter per kind.
  OpNode& attr(Attribute a) {
    n->attrs.push_back(std::move(a));
    return *this;
  }
  OpNode& attr_i(const std::string& name, int64_t v) { return set(name, AttrKind::kInt, [&](Attribute& a) { a.i = v; }); }
  OpNode& attr_f(const std::string& name, float v) { return set(name, AttrKind::kFloat, [&](Attribute& a) { a.f = v; }); }
  OpNode& attr_s(const std::string& name, std::string v) {
    return set(name, AttrKind::kString, [&](Attribute& a) { a.s = std::move(v); });
  }
  OpNode& attr_t(const std::string& name, Tensor v) {
    return set(name, AttrKind::kTensor, [&](Attribute& a) { a.t = std::move(v); });
  }
  OpNode& attr_is(const std::string& name, std::vector<int64_t> v) {
    return set(name, AttrKind::kInts, [&](Attribute& a) { a.ints = std::move(v); });
  }
  OpNode& attr_fs(const std::string& name, std::vector<float> v) {
    return set(name, AttrKind::kFloats, [&](Attribute& a) { a.floats = std::move(v); });
  }
  OpNode& attr_ss(const std::string& name, std::vector<std::string> v) {
    return set(name, AttrKind::kStrings, [&](Attribute& a) { a.strings = std::move(v); });
  }
  // A graph attribute: an empty subgraph of g for the test to fill (or to leave to a fake
  // SubgraphRunner, which finds it by address).
  Graph* attr_g(const std::string& name) {
    auto sg = std::make_shared<Graph>(&g);
    set(name, AttrKind::kGraph, [&](Attribute& a) { a.g = sg; });
    return sg.get();
  }

  // Runs the reference kernel. Values in, values out (sequences, optionals, subgraphs) ...
  std::vector<RtValue> run_values(std::vector<RtValue> in, SubgraphRunner* runner = nullptr) {
    std::vector<const RtValue*> ptrs;
    for (auto& v : in) ptrs.push_back(&v);
    std::vector<RtValue> outs;
    KernelContext ctx(*n, ptrs, outs, runner);
    schema->kernel(ctx);
    return outs;
  }
  // ... or tensors (an undefined Tensor: an omitted input): every output, or the first.
  std::vector<Tensor> run_all(const std::vector<Tensor>& in) {
    std::vector<RtValue> vals;
    for (const Tensor& t : in) vals.push_back(t.defined() ? RtValue::of(t) : RtValue{});
    std::vector<Tensor> r;
    for (RtValue& o : run_values(std::move(vals))) r.push_back(std::move(o.tensor));
    return r;
  }
  Tensor run(const std::vector<Tensor>& in) { return run_all(in).at(0); }

  // Shape inference from input types (nullopt, or a type of kind kUnknown: the input is omitted),
  // constants for the first inputs, and how subgraphs infer; returns the output types.
  std::vector<std::optional<TypeInfo>> infer(std::vector<std::optional<TypeInfo>> types,
                                             std::vector<const Tensor*> consts = {},
                                             InferContext::SubgraphInferFn sub = nullptr) {
    ins.clear();
    for (size_t k = 0; k < types.size(); ++k) {
      In& in = ins.emplace_back();
      if (types[k] && types[k]->kind != TypeInfo::Kind::kUnknown) in.type = *types[k];
      if (k < consts.size() && consts[k]) in.constant = *consts[k];
    }
    infer_ins(std::move(sub));
    return outs;
  }

  // The general form: inputs set in `ins` (a type, optionally a constant or a dims value), then
  // infer(); the results land in `outs` and `values`.
  struct In {
    std::optional<TypeInfo> type;  // nullopt: omitted
    std::optional<Tensor> constant;
    std::optional<std::vector<Dim>> value;
    In() = default;
    In(TypeInfo t, std::optional<Tensor> c = std::nullopt,
       std::optional<std::vector<Dim>> v = std::nullopt)
        : type(std::move(t)), constant(std::move(c)), value(std::move(v)) {}
  };
  std::vector<In> ins;
  std::vector<std::optional<TypeInfo>> outs;
  std::vector<std::optional<std::vector<Dim>>> values;
  void infer() { infer_ins(nullptr); }
  std::string out_type(int i = 0) const { return outs.at(i) ? outs[i]->to_string() : "none"; }
  std::string out_value(int i = 0) const {
    return values.at(i) ? shape_to_string(*values[i]) : "none";
  }

 private:
  template <typename Fill>
  OpNode& set(const std::string& name, AttrKind kind, Fill fill) {
    Attribute a;
    a.name = name;
    a.kind = kind;
    fill(a);
    return attr(std::move(a));
  }
  void infer_ins(InferContext::SubgraphInferFn sub) {
    std::vector<InferContext::Input> v;
    for (const In& i : ins) {
      if (!i.type) {
        v.emplace_back();
        continue;
      }
      v.push_back({&*i.type, i.constant ? &*i.constant : nullptr, i.value ? &*i.value : nullptr});
    }
    InferContext ctx(*n, v, std::move(sub));
    schema->infer(ctx);
    outs = ctx.outputs();
    values = ctx.output_values();
  }
};

// A tensor of `dims` holding `v` (converted to dt; the count must match).
inline Tensor make(DataType dt, std::vector<int64_t> dims, const std::vector<double>& v) {
  Tensor t(dt, std::move(dims));
  EXPECT_EQ(t.numel(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) t.set_f64(static_cast<int64_t>(i), v[i]);
  return t;
}
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_f64(i));
  return v;
}
inline void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                        double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

}  // namespace kiln::op_test
