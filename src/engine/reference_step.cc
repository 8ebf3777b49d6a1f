#include "engine/reference_step.h"

#include "engine/context_kernels.h"
#include "engine/lowering.h"
#include "ops/op.h"
#include "runtime/interpreter.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

// Subgraphs (If/Loop/Scan bodies) run in the interpreter, seeing the main-graph values they use.
class FrameRunner : public SubgraphRunner {
 public:
  explicit FrameRunner(const Frame* frame) : frame_(frame) {}
  std::vector<RtValue> run(const Graph& g, std::vector<RtValue> inputs) override {
    return run_graph(g, inputs, frame_);
  }

 private:
  const Frame* frame_;
};

class KernelContextStep : public Step {
 public:
  KernelContextStep(const Node& n, const KernelFn& fn, std::string_view name) : fn_(fn) {
    node = &n;
    kernel = name;
  }

  void run(RunState& st) override {
    ptrs_.assign(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] >= 0) ptrs_[i] = &st.slots[inputs[i]];
    outs_.clear();
    if (!has_subgraphs_) {
      KernelContext ctx(*node, ptrs_, outs_, nullptr);
      fn_(ctx);
    } else {
      Frame frame(nullptr, st.observer);
      frame.set_overrides(&context_kernel_overrides());
      for (const auto& [v, s] : outer_) frame.bind(v, st.slots[s]);
      FrameRunner runner(&frame);
      KernelContext ctx(*node, ptrs_, outs_, &runner);
      fn_(ctx);
    }
    for (size_t k = 0; k < out_index_.size(); ++k) {
      const int i = out_index_[k];
      KILN_CHECK(i < static_cast<int>(outs_.size()), ErrorKind::kRuntime,
                 "kernel did not produce output {}", i);
      st.slots[outputs[k].slot] = std::move(outs_[i]);
    }
  }

  std::vector<std::pair<const Value*, int>> outer_;  // main-graph values the subgraphs read
  std::vector<int> out_index_;                       // per entry of outputs: the node's output
  bool has_subgraphs_ = false;

 private:
  const KernelFn& fn_;
  std::vector<const RtValue*> ptrs_;
  std::vector<RtValue> outs_;
};

}  // namespace

bool match_reference(const Node& n, const MatchContext& ctx, Group& g) { return true; }

bool build_reference(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const OpSchema* schema = OpRegistry::global().find(n.domain, n.op_type);
  KILN_CHECK(schema && schema->kernel, ErrorKind::kUnsupported, "{}no kernel for this op", n.where());
  add_kernel_context_step(g, lw, schema->kernel, "reference");
  return true;
}

void add_kernel_context_step(Group& g, Lowering& lw, const KernelFn& kernel,
                             std::string_view name) {
  const Node& n = *g.anchor;
  auto step = std::make_unique<KernelContextStep>(n, kernel, name);
  for (const Value* v : n.inputs) step->inputs.push_back(v ? lw.plain(v) : -1);
  for (const auto& a : n.attrs) step->has_subgraphs_ |= a.g || !a.graphs.empty();
  // A subgraph may read any main-graph value the node reads, its own inputs included.
  for (const Value* v : step->has_subgraphs_ ? lw.facts().reads(&n) : std::vector<const Value*>{}) {
    const int s = lw.plain(v);
    step->outer_.emplace_back(v, s);
    if (std::find(n.inputs.begin(), n.inputs.end(), v) == n.inputs.end()) step->also_reads.push_back(s);
  }
  for (int i = 0; i < n.num_outputs(); ++i) {
    const Value* v = n.outputs[i];
    if (!v) continue;
    step->outputs.push_back({lw.define(v), OutputMemory::kSelf, -1});
    step->out_index_.push_back(i);
  }
  lw.add(std::move(step));
}

}  // namespace kiln::engine
