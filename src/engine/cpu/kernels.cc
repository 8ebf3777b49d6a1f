// The kernel tables by ISA, and the active one.
#include "engine/cpu/kernels.h"

#include <atomic>

#include "support/error.h"

namespace kiln::cpu {
namespace {

std::atomic<const IsaKernels*> g_active{nullptr};

}  // namespace

// Only one architecture's tables are compiled in (kernels_avx2.cc and kernels_avx512.cc on x86,
// kernels_neon.cc on aarch64); an ISA of the other one is never supported, so never asked for.
const IsaKernels& isa_kernels(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return scalar::isa_kernels();
#if defined(__x86_64__)
    case Isa::kAvx2: return avx2::isa_kernels();
    case Isa::kAvx512: return avx512::isa_kernels();
#elif defined(__aarch64__)
    case Isa::kNeon: return neon::isa_kernels();
#endif
    default: break;
  }
  return scalar::isa_kernels();
}

const IsaKernels& kernels() {
  const IsaKernels* t = g_active.load(std::memory_order_acquire);
  if (!t) [[unlikely]] {
    t = &isa_kernels(best_isa());
    const IsaKernels* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, t)) t = expected;
  }
  return *t;
}

Isa active_isa() { return kernels().isa; }

Isa set_active_isa(Isa isa) {
  KILN_CHECK(isa_supported(isa), ErrorKind::kUnsupported, "this CPU cannot run {} kernels",
             isa_name(isa));
  const Isa previous = active_isa();
  g_active.store(&isa_kernels(isa), std::memory_order_release);
  return previous;
}

}  // namespace kiln::cpu
