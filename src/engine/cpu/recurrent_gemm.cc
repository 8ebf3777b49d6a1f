#include "engine/cpu/recurrent_gemm.h"

#include <sched.h>

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
    : gates_(gates), hidden_(hidden) {
  const int64_t H = hidden;
  int64_t total = 0;
  for (int64_t b = 0; b < blocks(); ++b) {
    offsets_.push_back(total);
    total += H * width(b);
  }
  data_.assign(static_cast<size_t>(total), 0.0f);
  zeros_.assign(static_cast<size_t>(kBlockUnits * gates), 0.0f);
  for (int64_t b = 0; b < blocks(); ++b) {
    const UnitRange u = block_units(b);
    const int64_t w = width(b);
    float* at = data_.data() + offsets_[b];
    for (int64_t unit = u.first; unit < u.last; ++unit) {
      const int64_t p = (unit - u.first) / kPanel, lane = (unit - u.first) % kPanel;
      for (int64_t g = 0; g < gates; ++g) {
        const float* row = r + (g * H + unit) * H;  // this gate's weights of this unit
        const int64_t col = (p * gates + g) * kPanel + lane;
        for (int64_t k = 0; k < H; ++k) at[k * w + col] = row[k];
      }
    }
  }
}

void PackedRecurrent::unpack(float* r) const {
  const int64_t H = hidden_;
  for (int64_t b = 0; b < blocks(); ++b) {
    const UnitRange u = block_units(b);
    const int64_t w = width(b);
    const float* at = data_.data() + offsets_[b];
    for (int64_t unit = u.first; unit < u.last; ++unit) {
      const int64_t p = (unit - u.first) / kPanel, lane = (unit - u.first) % kPanel;
      for (int64_t g = 0; g < gates_; ++g) {
        float* row = r + (g * H + unit) * H;
        const int64_t col = (p * gates_ + g) * kPanel + lane;
        for (int64_t k = 0; k < H; ++k) row[k] = at[k * w + col];
      }
    }
  }
}

int64_t PackedRecurrent::width(int64_t b) const {
  const int64_t panels = (block_units(b).size() + kPanel - 1) / kPanel;
  return panels * gates_ * kPanel;
}

void PackedRecurrent::product(int64_t b, const float* h, float* out) const {
  const int64_t w = width(b);
  kiln::cpu::kernels().rows_times_matrix(h, 1, hidden_, data_.data() + offsets_[b], w, zeros_.data(),
                                         out, w);
}

}  // namespace kiln::engine::cpu
