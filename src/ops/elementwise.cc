// Op family: elementwise (see docs/ops.md for the contract every op follows).
#include "ops/op.h"
#include "ops/kernel_util.h"

namespace kiln {

void register_elementwise_ops(OpRegistry& r) {}

}  // namespace kiln
