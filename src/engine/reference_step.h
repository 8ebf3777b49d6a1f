// The reference implementation: a node run by its op's reference kernel (src/ops) through
// KernelContext, as the interpreter runs it. Always the last entry of the dispatch table.
#pragma once

#include <string_view>

#include "engine/kernel_table.h"
#include "ops/op.h"

namespace kiln::engine {

bool match_reference(const Node& n, const MatchContext& ctx, Group& g);
bool build_reference(Group& g, Lowering& lw);

// A step that runs `kernel` (a reference kernel, or a fast one of the same form) on g's anchor
// through KernelContext; subgraphs run in the interpreter with the engine's kernel overrides.
void add_kernel_context_step(Group& g, Lowering& lw, const KernelFn& kernel,
                             std::string_view name);

}  // namespace kiln::engine
