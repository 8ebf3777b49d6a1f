// Helpers for the engine's tests: small models built in code, and a run of the fast engine next to
// the reference Session on the same inputs. For *_test.cc files only.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/compiled_model.h"
#include "engine/cpu/cpu_features.h"
#include "runtime/compare.h"
#include "runtime/session.h"
#include "support/error.h"

namespace kiln::engine::testing {

// Points XDG_CACHE_HOME at a fresh folder for one test (kiln's caches: the machine's peaks, its
// implementation choices) and restores it after.
class CacheHome {
 public:
  explicit CacheHome(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / ("kiln_" + name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(dir_);
    if (const char* old = std::getenv("XDG_CACHE_HOME")) old_ = old;
    setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
  }
  ~CacheHome() {
    if (old_) setenv("XDG_CACHE_HOME", old_->c_str(), 1);
    else unsetenv("XDG_CACHE_HOME");
    std::filesystem::remove_all(dir_);
  }
  CacheHome(const CacheHome&) = delete;
  CacheHome& operator=(const CacheHome&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::optional<std::string> old_;
};

// An attribute for ModelBuilder::node.
inline Attribute attr(std::string name, int64_t v) {
  Attribute a{.name = std::move(name), .kind = AttrKind::kInt};
  a.i = v;
  return a;
}
inline Attribute attr(std::string name, float v) {
  Attribute a{.name = std::move(name), .kind = AttrKind::kFloat};
  a.f = v;
  return a;
}
inline Attribute attr(std::string name, std::vector<int64_t> v) {
  Attribute a{.name = std::move(name), .kind = AttrKind::kInts};
  a.ints = std::move(v);
  return a;
}
inline Attribute attr(std::string name, std::string v) {
  Attribute a{.name = std::move(name), .kind = AttrKind::kString};
  a.s = std::move(v);
  return a;
}

inline Tensor random_tensor(std::vector<int64_t> dims, uint32_t seed, float lo = -1, float hi = 1) {
  Tensor t(DataType::kFloat, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

inline Tensor int64_tensor(std::vector<int64_t> dims, std::vector<int64_t> values) {
  Tensor t(DataType::kInt64, std::move(dims));
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

// Builds a model node by node; inputs may have symbolic dims.
class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17) {
    m_.ir_version = 8;
    m_.opsets[""] = opset;
    m_.graph = std::make_unique<Graph>();
  }
  Value* input(const std::string& name, Shape shape, DataType t = DataType::kFloat) {
    Value* v = g().add_value(name);
    v->type = TypeInfo::tensor(t, std::move(shape));
    v->is_graph_input = true;
    v->has_declared_type = true;
    g().inputs.push_back(v);
    return v;
  }
  Value* constant(const std::string& name, Tensor t) {
    Value* v = g().add_value(name);
    v->type = TypeInfo::tensor(t.dtype(), shape_of(t.dims()));
    v->data = std::move(t);
    g().initializers.push_back(v);
    return v;
  }
  // A node of op with the given inputs (null: omitted); returns its outputs.
  std::vector<Value*> node(const std::string& op, std::vector<Value*> ins,
                           std::vector<Attribute> attrs = {}, int outputs = 1) {
    Node* n = g().add_node(op);
    n->name = op + "_" + std::to_string(count_++);
    n->opset = static_cast<int>(m_.opsets.at(""));
    n->attrs = std::move(attrs);
    for (size_t i = 0; i < ins.size(); ++i) g().set_input(n, static_cast<int>(i), ins[i]);
    std::vector<Value*> outs;
    for (int i = 0; i < outputs; ++i) {
      outs.push_back(g().add_value(n->name + "_out" + std::to_string(i)));
      g().set_output(n, i, outs.back());
    }
    return outs;
  }
  Value* op(const std::string& op, std::vector<Value*> ins, std::vector<Attribute> attrs = {}) {
    return node(op, std::move(ins), std::move(attrs)).at(0);
  }
  void output(Value* v) { g().outputs.push_back(v); }

  // One branch of an If: a single node of `op` that reads `inputs`, values of the main graph
  // (outer scope); its output is the branch's.
  struct Branch {
    std::string op;
    std::vector<Value*> inputs;
  };
  // An If node named "if" of `cond` with the branch graphs then_branch and else_branch (their
  // nodes named then_<op> and else_<op>); returns its output.
  Value* if_op(Value* cond, const Branch& then_b, const Branch& else_b) {
    Node* n = g().add_node("If");
    n->name = "if";
    n->opset = static_cast<int>(m_.opsets.at(""));
    n->attrs = {branch("then", then_b), branch("else", else_b)};
    g().set_input(n, 0, cond);
    Value* out = g().add_value("if_out0");
    g().set_output(n, 0, out);
    return out;
  }

  Model take() { return std::move(m_); }

 private:
  Graph& g() { return *m_.graph; }
  Attribute branch(const std::string& which, const Branch& b) {
    auto body = std::make_shared<Graph>(&g());
    body->name = which + "_branch";
    Node* n = body->add_node(b.op);
    n->name = which + "_" + b.op;
    n->opset = static_cast<int>(m_.opsets.at(""));
    for (size_t i = 0; i < b.inputs.size(); ++i) body->set_input(n, static_cast<int>(i), b.inputs[i]);
    Value* out = body->add_value(n->name + "_out0");
    body->set_output(n, 0, out);
    body->outputs.push_back(out);
    Attribute a{.name = body->name, .kind = AttrKind::kGraph};
    a.g = std::move(body);
    return a;
  }
  Model m_;
  int count_ = 0;
};

using MakeModel = std::function<Model()>;

// Runs the model from `make` on the fast engine and on the reference Session with `feeds` and
// expects the same outputs (float tolerance rtol, atol). Returns the fast engine's plan summary
// for these inputs, so a test can check which implementations ran.
inline PlanSummary expect_same_as_reference(const MakeModel& make, const std::vector<Tensor>& feeds,
                                            double rtol = 1e-4, double atol = 1e-5,
                                            EngineOptions opts = {}) {
  std::vector<RtValue> values;
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor& t : feeds) {
    values.push_back(RtValue::of(t));
    dims.push_back(t.dims());
  }
  Session reference(make());
  const auto expected = reference.run(values);
  CompiledModel fast(make(), opts);
  for (int pass = 0; pass < 2; ++pass) {  // the second run reuses the plan and its buffers
    const auto actual = fast.run(values);
    EXPECT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
      const Comparison c = compare_values(actual[i], expected[i], Tolerance{rtol, atol});
      EXPECT_TRUE(c.equal) << "output " << i << " (run " << pass << "): " << c.reason;
    }
  }
  return fast.summary(dims);
}

// Whether oneDNN's direct convolutions write channels-last here: its AVX-512 kernels (brgconv) do,
// its AVX2 ones write channel-blocked (nChw8c). Tests of what the plan does around channels-last
// conv outputs (in-place concats, shuffles, windows, reorders counted) assert it only then; their
// outputs are checked against the reference on every CPU.
inline bool convs_write_channels_last() { return cpu::active_isa() == cpu::Isa::kAvx512; }

inline int steps_of(const PlanSummary& s, const std::string& kernel) {
  auto it = s.kernels.find(kernel);
  return it == s.kernels.end() ? 0 : it->second;
}

// Inputs the plan had their producers write inside the reading step's output ("(in place)").
inline int inputs_in_place(const PlanSummary& s) {
  int n = 0;
  for (size_t at = s.listing.find("(in place)"); at != std::string::npos;
       at = s.listing.find("(in place)", at + 1))
    ++n;
  return n;
}

}  // namespace kiln::engine::testing
