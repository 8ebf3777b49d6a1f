// The engine's activations (engine/activation.h) as operations of kiln's CPU kernels.
#pragma once

#include <optional>

#include "engine/activation.h"
#include "engine/cpu/elementwise.h"

namespace kiln::engine {

// a as one operation on a run of values (a cpu::UnaryOp, or affine for Linear); nullopt for the
// activations the kernels do not have (Elu, Log).
std::optional<cpu::RowOp> cpu_row_op(const Activation& a);

}  // namespace kiln::engine
