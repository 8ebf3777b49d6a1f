// Op family: tensor (see docs/ops.md for the contract every op follows).
#include "ops/op.h"
#include "ops/kernel_util.h"

namespace kiln {

void register_tensor_ops(OpRegistry& r) {}

}  // namespace kiln
