// Helpers for the backend layer's tests: a backend made in the test (it claims the ops it is given
// and runs them on its own small interpreter, or fails every compile when told to), and the facts
// of a small model. For *_test.cc files only.
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "engine/engine_test_util.h"
#include "runtime/session.h"

namespace kiln::backend::testing {

// Runs elementwise Relu, Neg and Add (same dims) node by node on float tensors.
class TestPartition : public CompiledPartition {
 public:
  explicit TestPartition(const PartitionSpec& p) : nodes_(p.nodes), inputs_(p.inputs), outputs_(p.outputs) {}
  void run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    std::map<const Value*, Tensor> vals;
    for (size_t i = 0; i < inputs_.size(); ++i) vals[inputs_[i]] = *in[i];
    for (const Node* n : nodes_) {
      const Tensor& a = vals.at(n->inputs[0]);
      Tensor y(DataType::kFloat, a.dims());
      for (int64_t k = 0; k < a.numel(); ++k) {
        const float x = a.data<float>()[k];
        if (n->op_type == "Relu") y.data<float>()[k] = x > 0 ? x : 0;
        else if (n->op_type == "Neg") y.data<float>()[k] = -x;
        else y.data<float>()[k] = x + vals.at(n->inputs[1]).data<float>()[k];
      }
      vals[n->outputs[0]] = y;
    }
    for (size_t j = 0; j < outputs_.size(); ++j) {
      const Tensor& y = vals.at(outputs_[j]);
      std::copy(y.data<float>(), y.data<float>() + y.numel(), out[j]->data<float>());
    }
  }

 private:
  std::vector<const Node*> nodes_;
  std::vector<const Value*> inputs_, outputs_;
};

class TestBackend : public Backend {
 public:
  TestBackend(std::string name, std::set<std::string> ops, bool fail_compile = false)
      : name_(std::move(name)), ops_(std::move(ops)), fail_(fail_compile) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "test"; }
  std::vector<NodeClaim> claim(const engine::GraphFacts& f, const Target&) override {
    std::vector<NodeClaim> out;
    for (const auto& n : f.graph().nodes())
      out.push_back(ops_.contains(n->op_type) ? NodeClaim{true, name_} : NodeClaim{false, "op not supported"});
    return out;
  }
  std::unique_ptr<CompiledPartition> compile(const PartitionSpec& p, std::string& why_not) override {
    ++compiles;
    if (fail_) {
      why_not = "made to fail by the test";
      return nullptr;
    }
    return std::make_unique<TestPartition>(p);
  }
  int compiles = 0;

 private:
  std::string name_;
  std::set<std::string> ops_;
  bool fail_;
};

// A prepared model and its facts for the dims its inputs declare.
struct Prepared {
  Model model;
  std::unique_ptr<engine::GraphFacts> facts;
  explicit Prepared(Model m) : model(std::move(m)) {
    prepare_model(model);
    std::vector<std::vector<int64_t>> dims;
    for (const Value* v : model.graph->inputs)
      if (!v->is_constant()) dims.push_back(*known_dims(*v->type.shape));
    facts = std::make_unique<engine::GraphFacts>(model, dims);
  }
  const Node* node(const std::string& name) const {
    for (const auto& n : model.graph->nodes())
      if (n->name == name) return n.get();
    return nullptr;
  }
};

}  // namespace kiln::backend::testing
