#include "engine/subgraph_step.h"

#include <algorithm>
#include <unordered_map>

#include "engine/compiled_subgraph.h"
#include "engine/native/context_kernels.h"
#include "engine/reference_step.h"
#include "ir/walk.h"
#include "runtime/interpreter.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

std::string_view kernel_name(const Node& n) {
  if (n.domain.empty() && n.op_type == "If") return "engine.if";
  if (n.domain.empty() && n.op_type == "Loop") return "engine.loop";
  if (n.domain.empty() && n.op_type == "Scan") return "engine.scan";
  return "engine.subgraphs";
}

class SubgraphStep : public KernelContextStep, private SubgraphRunner {
 public:
  SubgraphStep(const Node& n, const KernelFn& fn, Lowering& lw)
      : KernelContextStep(n, fn, kernel_name(n)) {
    wire(lw);
    // A subgraph may read any value of the enclosing graph the node reads, its inputs included.
    std::unordered_map<const Value*, Tensor> constants;
    for (const Value* v : lw.facts().reads(&n)) {
      const int s = lw.plain(v);
      outer_[v] = s;
      if (std::find(n.inputs.begin(), n.inputs.end(), v) == n.inputs.end()) also_reads.push_back(s);
      if (const Tensor* c = lw.facts().constant(v)) constants.emplace(v, *c);
    }
    for_each_subgraph(n, [&](const Graph& g) { add_body(g, constants, lw); });
  }

  std::string detail() const override {
    std::string out;
    for (const auto& [g, body] : bodies_)
      out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", g->name, body->describe());
    return out;
  }

 protected:
  SubgraphRunner* subgraph_runner(RunState& st) override {
    state_ = &st;
    return this;
  }

 private:
  void add_body(const Graph& g, const std::unordered_map<const Value*, Tensor>& constants,
                Lowering& lw) {
    bodies_.emplace_back(&g, std::make_unique<CompiledSubgraph>(lw.facts().model(), g, constants,
                                                                lw.options()));
  }

  const RtValue& outer_value(const Value* v) const {
    auto it = outer_.find(v);
    KILN_ASSERT(it != outer_.end(), "a subgraph reads '" + v->name + "', not among the node's reads");
    return state_->slots[it->second];
  }

  std::vector<RtValue> run(const Graph& g, std::vector<RtValue> inputs) override {
    for (auto& [body, compiled] : bodies_) {
      if (body != &g) continue;
      auto outs = compiled->run(inputs, [&](const Value* v) -> const RtValue& { return outer_value(v); },
                                state_->observer);
      if (outs) return std::move(*outs);
    }
    // The interpreter, seeing the enclosing graph's values, with the engine's context kernels.
    Frame frame(nullptr, state_->observer);
    frame.set_overrides(&context_kernel_overrides());
    for (const auto& [v, s] : outer_) frame.bind(v, state_->slots[s]);
    return run_graph(g, inputs, &frame);
  }

  std::unordered_map<const Value*, int> outer_;  // enclosing-graph values the subgraphs read
  std::vector<std::pair<const Graph*, std::unique_ptr<CompiledSubgraph>>> bodies_;
  RunState* state_ = nullptr;
};

}  // namespace

void add_subgraph_step(const Node& n, Lowering& lw, const KernelFn& kernel) {
  lw.add(std::make_unique<SubgraphStep>(n, kernel, lw));
}

}  // namespace kiln::engine
