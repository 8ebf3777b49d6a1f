// The reference implementation: a node run by its op's reference kernel (src/ops) through
// KernelContext, as the interpreter runs it. Always the last entry of the dispatch table.
#pragma once

#include "engine/kernel_table.h"

namespace kiln::engine {

bool match_reference(const Node& n, const MatchContext& ctx, Group& g);
bool build_reference(Group& g, Lowering& lw);

}  // namespace kiln::engine
