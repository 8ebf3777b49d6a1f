// What LSTM and GRU share (lstm.cc, gru.cc): oneDNN's row-major sgemm of A by B's rows, the
// recurrent weights packed for batch 1, and the split of a step's hidden units over the threads.
//
// A step's recurrent product reads every recurrent weight ([gates * H, H]: 1 MB for a 256-unit
// LSTM) and little else: it runs at the speed a core streams them from its cache. So at batch 1
// the weights are copied once into aligned memory (PackedRecurrent: read as stored, 1.2-1.6x
// faster than oneDNN's sgemm of the initializer's rows) and the units are split over the
// threads: each streams its
// own blocks (which stay in its own core's cache from step to step) and makes the gates of its
// units; a StageScheduler hands the new state to all at the end of a step (two stages for GRU
// without linear_before_reset), and gives a late thread's blocks to one that is not. Batches use
// sgemm per range of units. Figures: docs/benchmarks.md ("Recurrent, UNet
// and Inception v3").
#pragma once

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "engine/cpu/parallel.h"
#include "engine/cpu/aligned.h"
#include "support/error.h"

namespace kiln::engine::cpu {

// C[M, N] = A[M, K] B[N, K]^T, A's rows `lda` apart and C's `ldc`; `op` names the node in errors.
// Inside a parallel region oneDNN runs it on the calling thread.
inline void gemm_bt(const char* op, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* b, float* c, int64_t ldc) {
  const dnnl_status_t s = dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, k, 0.0f, c, ldc);
  KILN_CHECK(s == dnnl_success, ErrorKind::kRuntime, "{}: oneDNN sgemm failed ({})", op,
             static_cast<int>(s));
}

// The hidden units [first, last) of one thread.
struct UnitRange {
  int64_t first = 0, last = 0;
  int64_t size() const { return last - first; }
};

// Threads for a recurrence of `rows` recurrent weight rows (gates * H) by H, over `batch`: one
// below kMinMacs multiply-adds a step (a barrier would cost about what a second thread saves),
// and at most one per 32 units.
inline int recurrent_threads(int64_t rows, int64_t hidden, int64_t batch) {
  constexpr int64_t kMinMacs = int64_t{1} << 17;
  if (rows * hidden * batch < kMinMacs) return 1;
  return static_cast<int>(std::clamp<int64_t>(hidden / 32, 1, kiln::cpu::worker_threads()));
}

// Thread t's share of H units among `threads`: runs of 16 (whole registers), the last to H.
inline UnitRange unit_range(int t, int threads, int64_t hidden) {
  auto at = [&](int i) { return i == threads ? hidden : hidden * i / threads / 16 * 16; };
  return {at(t), at(t + 1)};
}

// gates blocks of C's rows [g * H + u.first, g * H + u.last) = A (M rows, H deep) times the same
// rows of R ([gates * H, H]), C's rows `ldc` apart: one product when u is every unit.
inline void gate_products(const char* op, int gates, int64_t m, int64_t hidden, UnitRange u,
                          const float* a, const float* r, float* c, int64_t ldc) {
  if (u.first == 0 && u.last == hidden) return gemm_bt(op, m, gates * hidden, hidden, a, hidden, r, c, ldc);
  for (int g = 0; g < gates; ++g)
    gemm_bt(op, m, u.size(), hidden, a, hidden, r + (g * hidden + u.first) * hidden,
            c + g * hidden + u.first, ldc);
}

// The recurrent weights of some gates ([gates * H, H], gate-major as ONNX lays them out) for
// batch-1 steps: their rows copied once into 64-byte-aligned memory (an initializer's bytes sit
// 16 bytes past a page: every 64-byte load would span two cache lines), read as stored by
// rows_times_rows. A block's product gives, per panel p of 16 units, gate g's sums at
// (p * gates + g) * 16 (units past H zero). H 256, one core (kiln_micro_bench RecurrentStep,
// Intel Xeon family 6 model 207): 10.4 us a step for the LSTM's 1 MB where a panel-packed copy
// read by rows_times_matrix took 16.3 and oneDNN's sgemm of the plain rows 12.5; GRU 7.2 / 11.8
// / 9.4.
class PackedRecurrent {
 public:
  static constexpr int64_t kPanel = 16, kBlockUnits = 64;

  PackedRecurrent(const float* r, int64_t gates, int64_t hidden);
  int64_t gates() const { return gates_; }
  int64_t hidden() const { return hidden_; }
  int64_t blocks() const { return (hidden_ + kBlockUnits - 1) / kBlockUnits; }
  UnitRange block_units(int64_t b) const {
    return {b * kBlockUnits, std::min(hidden_, (b + 1) * kBlockUnits)};
  }
  // out [panels * gates * 16] = block b's gates for the state h [H] (h R^T of those rows).
  void product(int64_t b, const float* h, float* out) const;
  // The rows it was made from ([gates * H, H]) written to r again, exactly.
  void unpack(float* r) const;
  size_t bytes() const { return rows_.size() * sizeof(float); }

 private:
  int64_t gates_, hidden_;
  kiln::cpu::AlignedFloats rows_;  // [gates * H, H]
};

// f(t) on `threads` threads (t = 0 alone when 1).
template <class F>
void on_threads(int threads, F&& f) {
  if (threads <= 1) return f(0);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
  f(omp_get_thread_num());
#else
  f(0);
#endif
}

// Hands the blocks of a recurrence's stages (its steps; a GRU step without linear_before_reset
// is two) to the threads running it, and lets none begin a stage before the last is done. A
// thread takes its own blocks first (their weights stay in its core's cache from step to step),
// then any block of the stage no thread has taken yet: so a thread the OS has preempted holds a
// stage up only by a block it began, never by those it has not reached. With a barrier per step
// every step waited for the preempted thread whole: beside a second kiln process of 2 threads on
// 2 cores, the speech model's LSTM and GRU (128 steps) ran 13-32 ms p50, now 6.4-10; alone 3.7
// (docs/benchmarks.md, "Beside another process").
class StageScheduler {
 public:
  StageScheduler(int threads, int64_t blocks);
  // f(block) for the blocks of `stage` that `thread` gets; returns once every block of the stage
  // is done. Every thread calls it for stages 0, 1, 2, ... in order.
  template <class F>
  void run(int thread, int64_t stage, F&& f) {
    if (threads_ == 1) {  // nothing to hand out or wait for
      for (int64_t b = 0; b < blocks_; ++b) f(b);
      return;
    }
    const int64_t own_first = blocks_ * thread / threads_, own_last = blocks_ * (thread + 1) / threads_;
    for (int64_t i = 0; i < blocks_; ++i) {
      const int64_t b = (own_first + i) % blocks_;  // own blocks, then the others after them
      if (i >= own_last - own_first && done_.load(std::memory_order_acquire) >= (stage + 1) * blocks_) break;
      int64_t expected = stage;
      if (!claims_[b].stages.compare_exchange_strong(expected, stage + 1, std::memory_order_acq_rel)) continue;
      f(b);
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
    wait_until((stage + 1) * blocks_);
  }

 private:
  void wait_until(int64_t done) const;
  struct alignas(64) Claim {
    std::atomic<int64_t> stages{0};  // the stages whose block this is that a thread has taken
  };
  int threads_;
  int64_t blocks_;
  std::vector<Claim> claims_;
  alignas(64) std::atomic<int64_t> done_{0};  // blocks done over all stages
};

}  // namespace kiln::engine::cpu
