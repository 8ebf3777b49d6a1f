// The op families. Adding a family: one line here and its file src/ops/<family>.cc defining
// register_<family>_ops. The registry is built from this list once (OpRegistry::global()).
#pragma once

#define KILN_OP_FAMILIES(X) \
  X(elementwise)            \
  X(tensor)                 \
  X(nn)                     \
  X(normalization)          \
  X(control)                \
  X(misc)

namespace kiln {
class OpRegistry;
#define KILN_DECLARE_FAMILY(f) void register_##f##_ops(OpRegistry& r);
KILN_OP_FAMILIES(KILN_DECLARE_FAMILY)
#undef KILN_DECLARE_FAMILY
}  // namespace kiln
