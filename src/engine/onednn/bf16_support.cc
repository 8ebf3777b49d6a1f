#include "engine/onednn/bf16_support.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <cstdio>

namespace kiln::engine {

bool native_bf16() {
  static const bool has = [] {
    const auto e = dnnl::get_effective_cpu_isa();
    return e == dnnl::cpu_isa::avx512_core_bf16 || e == dnnl::cpu_isa::avx512_core_amx;
  }();
  return has;
}

bool use_bf16(const EngineOptions& opts) {
  if (!opts.bf16) return false;
  if (native_bf16()) return true;
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fputs("kiln: this CPU has no native bf16 (AVX-512 BF16 or AMX); precision bf16 runs in float32\n", stderr);
  return false;
}

}  // namespace kiln::engine
