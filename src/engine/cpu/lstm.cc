#include "engine/cpu/lstm.h"

#include <algorithm>

#include "engine/cpu/kernels.h"
#include "engine/cpu/recurrent_gemm.h"

namespace kiln::engine::cpu {

void lstm_direction(const LstmDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                    const float* r, const float* bias, const float* peep, float* h, float* c,
                    float* y) {
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
  std::vector<float> hr(static_cast<size_t>(B * G));
  for (int64_t s = 0; s < S; ++s) {
    const int64_t t = reverse ? S - 1 - s : s;
    gemm_bt("LSTM", B, G, H, h, H, r, hr.data(), G);
    for (int64_t b = 0; b < B; ++b) {
      const float* xt = xw.data() + (d.batch_first ? b * S + t : t * B + b) * G;
      float* hb = h + b * H;
      k.lstm_cell(xt, hr.data() + b * G, peep, c + b * H, hb, H);
      if (y) {
        const int64_t at = d.batch_first ? ((b * S + t) * d.directions + dir) * H
                                         : ((t * d.directions + dir) * B + b) * H;
        std::copy(hb, hb + H, y + at);
      }
    }
  }
}

}  // namespace kiln::engine::cpu
