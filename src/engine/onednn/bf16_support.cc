#include "engine/onednn/bf16_support.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <cstdio>

#include "engine/graph_facts.h"
#include "engine/kernel_table.h"
#include "ops/attrs.h"

namespace kiln::engine {

bool native_bf16() {
  static const bool has = [] {
    const auto e = dnnl::get_effective_cpu_isa();
    return e == dnnl::cpu_isa::avx512_core_bf16 || e == dnnl::cpu_isa::avx512_core_amx;
  }();
  return has;
}

const Tensor* stored_bf16_tensor(const Value* w, const GraphFacts& f) {
  const Node* cast = w ? w->producer : nullptr;
  if (!is_op(cast, "Cast") || !cast->has_input(0) ||
      attr_int(*cast, "to", 0) != static_cast<int64_t>(DataType::kFloat))
    return nullptr;
  const Tensor* t = f.constant(cast->inputs[0]);
  return t && t->dtype() == DataType::kBFloat16 ? t : nullptr;
}

bool stored_bf16(const Value* w, const GraphFacts& f) { return stored_bf16_tensor(w, f) != nullptr; }

bool use_bf16(const EngineOptions& opts, const Value* w, const GraphFacts& f) {
  const bool stored = !opts.bf16 && stored_bf16(w, f);
  if (!opts.bf16 && !stored) return false;
  if (native_bf16()) return true;
  static std::atomic<bool> said_asked{false}, said_stored{false};
  if (opts.bf16 && !said_asked.exchange(true))
    std::fputs("kiln: this CPU has no native bf16 (AVX-512 BF16 or AMX); precision bf16 runs in float32\n", stderr);
  if (stored && !said_stored.exchange(true))
    std::fputs("kiln: this CPU has no native bf16 (AVX-512 BF16 or AMX): the model's bf16 weights "
               "compute in float32 (emulated bf16 would be slower)\n", stderr);
  return false;
}

}  // namespace kiln::engine
