// One ONNX op run through its reference kernel (the OpRegistry in src/ops): what the CPU kernels'
// differential tests and microbenchmarks compare against. Header-only; tests and benchmarks use it.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln::cpu {

class ReferenceOp {
 public:
  explicit ReferenceOp(const std::string& op, int opset = 23) : op_(op), opset_(opset) {
    schema_ = OpRegistry::global().find("", op);
    KILN_CHECK(schema_ != nullptr, ErrorKind::kUnsupported, "no reference kernel for {}", op);
  }

  ReferenceOp& attr(const std::string& name, int64_t v) {
    Attribute& a = add(name, AttrKind::kInt);
    a.i = v;
    return *this;
  }
  ReferenceOp& attr(const std::string& name, float v) {
    Attribute& a = add(name, AttrKind::kFloat);
    a.f = v;
    return *this;
  }
  ReferenceOp& attr(const std::string& name, const std::string& v) {
    Attribute& a = add(name, AttrKind::kString);
    a.s = v;
    return *this;
  }
  ReferenceOp& attr(const std::string& name, std::vector<int64_t> v) {
    Attribute& a = add(name, AttrKind::kInts);
    a.ints = std::move(v);
    return *this;
  }

  // Runs the op on `inputs` (an undefined Tensor: an omitted optional input); returns its
  // first `outputs` outputs.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, int outputs = 1) const {
    Graph g;
    Node* n = g.add_node(op_);
    n->opset = opset_;
    n->attrs = attrs_;
    for (size_t i = 0; i < inputs.size(); ++i)
      g.set_input(n, static_cast<int>(i),
                  inputs[i].defined() ? g.add_value("x" + std::to_string(i)) : nullptr);
    for (int i = 0; i < outputs; ++i) g.set_output(n, i, g.add_value("y" + std::to_string(i)));
    std::vector<RtValue> vals;
    for (const Tensor& t : inputs) vals.push_back(t.defined() ? RtValue::of(t) : RtValue{});
    std::vector<const RtValue*> ptrs;
    for (const RtValue& v : vals) ptrs.push_back(&v);
    std::vector<RtValue> outs;
    KernelContext ctx(*n, ptrs, outs, nullptr);
    schema_->kernel(ctx);
    std::vector<Tensor> result;
    for (int i = 0; i < outputs; ++i) result.push_back(outs.at(i).tensor);
    return result;
  }
  Tensor run1(const std::vector<Tensor>& inputs) const { return run(inputs, 1)[0]; }

 private:
  Attribute& add(const std::string& name, AttrKind kind) {
    Attribute& a = attrs_.emplace_back();
    a.name = name;
    a.kind = kind;
    return a;
  }

  std::string op_;
  int opset_;
  const OpSchema* schema_ = nullptr;
  std::vector<Attribute> attrs_;
};

// A float tensor of `dims` with values uniform in [lo, hi), from a seeded generator.
inline Tensor random_tensor(std::vector<int64_t> dims, std::mt19937& rng, float lo = -4.0f,
                            float hi = 4.0f) {
  Tensor t(DataType::kFloat, std::move(dims));
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

}  // namespace kiln::cpu
