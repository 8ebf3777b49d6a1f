// kiln's fast kernels in the reference kernels' form (KernelContext in, tensors of their own
// out), for ops whose output shape depends on the data (NonMaxSuppression, NonZero) or that
// detection post-processing runs many times on small tensors (GatherND): planned steps cannot
// take the former, and in models they often sit in If/Loop bodies, which the interpreter runs.
// They run as main-graph steps (dispatch table) and, through the interpreter's KernelOverrides,
// in the subgraphs of the engine's reference steps. Each falls back to the reference kernel for the
// element types it does not take, so the reference's errors stay the errors.
#pragma once

#include "engine/kernel_table.h"
#include "runtime/interpreter.h"

namespace kiln::engine {

// The overrides a subgraph frame of the engine runs with.
const KernelOverrides& context_kernel_overrides();

}  // namespace kiln::engine
