#include "engine/cpu/lstm.h"

#include <algorithm>

#include "engine/cpu/kernels.h"
#include "engine/cpu/recurrent_gemm.h"

namespace kiln::engine::cpu {

void lstm_direction(const LstmDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                    const float* r, const float* bias, const float* peep, float* h, float* c,
                    float* y, const PackedRecurrent* packed) {
  const int64_t S = d.seq, B = d.batch, H = d.hidden, G = 4 * H;
  const kiln::cpu::IsaKernels& k = kiln::cpu::kernels();
  // x W^T (+ Wb + Rb) for every (step, batch) row, in X's row order.
  std::vector<float> xw(static_cast<size_t>(S * B * G));
  gemm_bt("LSTM", S * B, G, d.input, x, d.input, w, xw.data(), G);
  if (bias) {
    std::vector<float> b(bias, bias + G);
    k.binary_vv(kiln::cpu::BinaryOp::kAdd, b.data(), bias + G, b.data(), G);
    for (int64_t row = 0; row < S * B; ++row)
      k.binary_vv(kiln::cpu::BinaryOp::kAdd, xw.data() + row * G, b.data(), xw.data() + row * G, G);
  }
  if (B != 1 || (packed && (packed->gates() != 4 || packed->hidden() != H))) packed = nullptr;
  std::vector<float> hr(static_cast<size_t>(B * G));
  // The state read by this step's product and the one its cells make (every thread reads all
  // of the first while each writes its units of the second).
  std::vector<float> other(static_cast<size_t>(B * H));
  float* state[2] = {h, other.data()};
  auto y_at = [&](int64_t t, int64_t b) {
    return y + (d.batch_first ? ((b * S + t) * d.directions + dir) * H : ((t * d.directions + dir) * B + b) * H);
  };
  // The blocks of a step: the packed weights' blocks of units, or one range of units per thread.
  const int threads = recurrent_threads(G, H, B);
  StageScheduler steps(threads, packed ? packed->blocks() : threads);
  on_threads(threads, [&](int thread) {
    // packed: a block's gates side by side per panel of 16 units
    std::vector<float> gh(static_cast<size_t>(packed ? PackedRecurrent::kBlockUnits * 4 : 0));
    for (int64_t s = 0; s < S; ++s) {
      const int64_t t = reverse ? S - 1 - s : s;
      const float* h0 = state[s % 2];
      float* h1 = state[(s + 1) % 2];
      steps.run(thread, s, [&](int64_t blk) {
        if (packed) {
          const float* xt = xw.data() + t * G;
          packed->product(blk, h0, gh.data());
          const UnitRange bu = packed->block_units(blk);
          for (int64_t first = bu.first; first < bu.last; first += PackedRecurrent::kPanel) {
            const int64_t p = (first - bu.first) / PackedRecurrent::kPanel;
            const int64_t n = std::min(PackedRecurrent::kPanel, bu.last - first);
            k.lstm_cell(xt + first, gh.data() + p * 4 * PackedRecurrent::kPanel,
                        peep ? peep + first : nullptr, c + first, h1 + first, n, H, PackedRecurrent::kPanel);
          }
          if (y) std::copy(h1 + bu.first, h1 + bu.last, y_at(t, 0) + bu.first);
          return;
        }
        const UnitRange u = unit_range(static_cast<int>(blk), threads, H);
        gate_products("LSTM", 4, B, H, u, h0, r, hr.data(), G);
        for (int64_t b = 0; b < B; ++b) {
          const float* xt = xw.data() + (d.batch_first ? b * S + t : t * B + b) * G;
          float* hb = h1 + b * H + u.first;
          k.lstm_cell(xt + u.first, hr.data() + b * G + u.first, peep ? peep + u.first : nullptr,
                      c + b * H + u.first, hb, u.size(), H, H);
          if (y) std::copy(hb, hb + u.size(), y_at(t, b) + u.first);
        }
      });
    }
  });
  if (S % 2 == 1) std::copy(other.begin(), other.end(), h);  // the last state is h's
}

}  // namespace kiln::engine::cpu
