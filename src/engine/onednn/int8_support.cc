#include "engine/onednn/int8_support.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>

#include "engine/graph_facts.h"

namespace kiln::engine {

bool int8_dot_product() {
  static const bool has = [] {
    using isa = dnnl::cpu_isa;
    const isa e = dnnl::get_effective_cpu_isa();
    return e == isa::avx512_core_vnni || e == isa::avx512_core_bf16 || e == isa::avx512_core_amx;
  }();
  return has;
}

bool int8_exact(DataType src, const Value* v, const GraphFacts& f) {
  if (int8_dot_product()) return true;
  if (src != DataType::kUInt8) return false;
  const Tensor* w = f.constant(v);
  if (!w || w->dtype() != DataType::kInt8) return false;
  const int8_t* p = w->data<int8_t>();
  for (int64_t i = 0; i < w->numel(); ++i)
    if (std::abs(static_cast<int>(p[i])) > 63) return false;
  return true;
}

}  // namespace kiln::engine
