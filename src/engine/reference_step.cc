#include "engine/reference_step.h"

#include "engine/lowering.h"
#include "engine/subgraph_step.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln::engine {

KernelContextStep::KernelContextStep(const Node& n, const KernelFn& fn, std::string_view name)
    : fn_(fn) {
  node = &n;
  kernel = name;
}

void KernelContextStep::run(RunState& st) {
  ptrs_.assign(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] >= 0) ptrs_[i] = &st.slots[inputs[i]];
  outs_.clear();
  KernelContext ctx(*node, ptrs_, outs_, subgraph_runner(st));
  invoke(ctx);
  for (size_t k = 0; k < out_index_.size(); ++k) {
    const int i = out_index_[k];
    KILN_CHECK(i < static_cast<int>(outs_.size()), ErrorKind::kRuntime,
               "kernel did not produce output {}", i);
    st.slots[outputs[k].slot] = std::move(outs_[i]);
  }
}

void KernelContextStep::wire(Lowering& lw) {
  for (const Value* v : node->inputs) inputs.push_back(v ? lw.plain(v) : -1);
  for (int i = 0; i < node->num_outputs(); ++i) {
    const Value* v = node->outputs[i];
    if (!v) continue;
    outputs.push_back({lw.define(v), OutputMemory::kSelf, -1});
    out_index_.push_back(i);
  }
}

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
  if (has_subgraph(*g.anchor)) return add_subgraph_step(*g.anchor, lw, kernel);
  auto step = std::make_unique<KernelContextStep>(*g.anchor, kernel, name);
  step->wire(lw);
  lw.add(std::move(step));
}

}  // namespace kiln::engine
