// Nodes holding subgraphs (If, Loop, Scan): the op's kernel (the reference one: it picks the
// branch, iterates, slices and stacks) runs as a step of the plan, and the subgraphs it runs go to
// the fast engine (CompiledSubgraph), or to the interpreter where that declines.
#pragma once

#include "engine/lowering.h"
#include "ops/op.h"

namespace kiln::engine {

void add_subgraph_step(const Node& n, Lowering& lw, const KernelFn& kernel);

}  // namespace kiln::engine
