// The kernel tables by ISA, and the active one.
#include "engine/cpu/kernels.h"

#include <atomic>

#include "support/error.h"

namespace kiln::cpu {
namespace {

std::atomic<const KernelTable*> g_active{nullptr};

}  // namespace

const KernelTable& kernel_table(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return scalar::kernel_table();
    case Isa::kAvx2: return avx2::kernel_table();
    case Isa::kAvx512: return avx512::kernel_table();
  }
  return scalar::kernel_table();
}

const KernelTable& kernels() {
  const KernelTable* t = g_active.load(std::memory_order_acquire);
  if (!t) [[unlikely]] {
    t = &kernel_table(best_isa());
    const KernelTable* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, t)) t = expected;
  }
  return *t;
}

Isa active_isa() { return kernels().isa; }

Isa set_active_isa(Isa isa) {
  KILN_CHECK(isa_supported(isa), ErrorKind::kUnsupported, "this CPU cannot run {} kernels",
             isa_name(isa));
  const Isa previous = active_isa();
  g_active.store(&kernel_table(isa), std::memory_order_release);
  return previous;
}

}  // namespace kiln::cpu
