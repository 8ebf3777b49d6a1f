#include "engine/cpu/recurrent_gemm.h"

#include <sched.h>

#include <algorithm>

#include "engine/cpu/kernels.h"

namespace kiln::engine::cpu {

StageScheduler::StageScheduler(int threads, int64_t blocks)
    : threads_(std::max(threads, 1)), blocks_(blocks), claims_(static_cast<size_t>(blocks)) {}

// Spins while the wait is likely a block's time (a few microseconds), then gives the core away
// (the thread it waits for may be queued behind us on it).
void StageScheduler::wait_until(int64_t done) const {
  constexpr int kSpins = 2000;  // about 50-100 us of pauses
  for (int spins = 0; done_.load(std::memory_order_acquire) < done; ++spins) {
    if (spins < kSpins) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
    } else {
      sched_yield();
    }
  }
}

PackedRecurrent::PackedRecurrent(const float* r, int64_t gates, int64_t hidden)
    : gates_(gates), hidden_(hidden), rows_(r, r + gates * hidden * hidden) {}

void PackedRecurrent::unpack(float* r) const {
  std::copy(rows_.begin(), rows_.end(), r);
}

void PackedRecurrent::product(int64_t b, const float* h, float* out) const {
  const int64_t H = hidden_;
  const UnitRange u = block_units(b);
  const float* rows = rows_.data();
  const auto& k = kiln::cpu::kernels();
  for (int64_t first = u.first; first < u.last; first += kPanel) {
    const int64_t p = (first - u.first) / kPanel, n = std::min(kPanel, u.last - first);
    for (int64_t g = 0; g < gates_; ++g) {
      float* at = out + (p * gates_ + g) * kPanel;
      k.rows_times_rows(h, 1, H, rows + (g * H + first) * H, n, nullptr, at, n);
      std::fill(at + n, at + kPanel, 0.0f);  // units past H
    }
  }
}

}  // namespace kiln::engine::cpu
