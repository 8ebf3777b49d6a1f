// The reference implementation: a node run by its op's reference kernel (src/ops) through
// KernelContext, as the interpreter runs it. Always the last entry of the dispatch table.
#pragma once

#include <string_view>
#include <vector>

#include "engine/kernel_table.h"
#include "engine/step.h"
#include "ops/op.h"

namespace kiln::engine {

bool match_reference(const Node& n, const MatchContext& ctx, Group& g);
bool build_reference(Group& g, Lowering& lw);

// A step that runs `kernel` (a reference kernel, or a fast one of the same form) on g's anchor
// through KernelContext. A node holding subgraphs (If, Loop, Scan) gets a SubgraphStep
// (subgraph_step.h), which runs its bodies on the fast engine.
void add_kernel_context_step(Group& g, Lowering& lw, const KernelFn& kernel,
                             std::string_view name);

// Runs a kernel of the reference form on the step's input slots and moves the outputs it made
// into the output slots.
class KernelContextStep : public Step {
 public:
  KernelContextStep(const Node& n, const KernelFn& fn, std::string_view name);
  void run(RunState& st) override;
  // Reads the node's inputs (row-major) and defines its outputs, made by the kernel (kSelf).
  void wire(Lowering& lw);

 protected:
  // What runs the node's subgraphs in this run; null for a node without any.
  virtual SubgraphRunner* subgraph_runner(RunState& st) { return nullptr; }
  // Runs the kernel: fn_, or a step's own call with what it prepared (native/recurrent_step.h).
  virtual void invoke(KernelContext& ctx) { fn_(ctx); }

 private:
  const KernelFn& fn_;
  std::vector<int> out_index_;  // per entry of outputs: the node's output
  std::vector<const RtValue*> ptrs_;
  std::vector<RtValue> outs_;
};

}  // namespace kiln::engine
