#include "ops/op_families.h"

#include "ops/op.h"

namespace kiln {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
#define KILN_REGISTER_FAMILY(f) register_##f##_ops(*r);
    KILN_OP_FAMILIES(KILN_REGISTER_FAMILY)
#undef KILN_REGISTER_FAMILY
    return r;
  }();
  return *registry;
}

}  // namespace kiln
