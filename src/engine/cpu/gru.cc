#include "engine/cpu/gru.h"

#include <algorithm>
#include <vector>

#include "engine/cpu/kernels.h"
#include "engine/cpu/recurrent_gemm.h"

namespace kiln::engine::cpu {

void gru_direction(const GruDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                   const float* r, const float* bias, float* h, float* y) {
  const int64_t S = d.seq, B = d.batch, H = d.hidden, G = 3 * H;
  const kiln::cpu::IsaKernels& k = kiln::cpu::kernels();
  // x W^T + Wb for every (step, batch) row, in X's row order, with the parts of Rb that add to
  // a gate's sum as they are: z's and r's, and the candidate's unless linear_before_reset puts it
  // inside r * (h Rh^T + Rbh).
  std::vector<float> xw(static_cast<size_t>(S * B * G));
  gemm_bt("GRU", S * B, G, d.input, x, d.input, w, xw.data(), G);
  const float* rbh = bias && d.linear_before_reset ? bias + G + 2 * H : nullptr;
  if (bias) {
    std::vector<float> b(bias, bias + G);
    k.binary_vv(kiln::cpu::BinaryOp::kAdd, b.data(), bias + G, b.data(), rbh ? 2 * H : G);
    for (int64_t row = 0; row < S * B; ++row)
      k.binary_vv(kiln::cpu::BinaryOp::kAdd, xw.data() + row * G, b.data(), xw.data() + row * G, G);
  }
  // linear_before_reset without a bias still scales by r: a zero Rbh selects that form.
  const std::vector<float> zeros(d.linear_before_reset && !rbh ? H : 0, 0.0f);
  if (d.linear_before_reset && !rbh) rbh = zeros.data();
  std::vector<float> hr(static_cast<size_t>(B * G)), rh(static_cast<size_t>(B * H));
  for (int64_t s = 0; s < S; ++s) {
    const int64_t t = reverse ? S - 1 - s : s;
    auto x_row = [&](int64_t b) { return xw.data() + (d.batch_first ? b * S + t : t * B + b) * G; };
    if (d.linear_before_reset) {
      gemm_bt("GRU", B, G, H, h, H, r, hr.data(), G);  // all three gates' h R^T
    } else {
      // z and r first; the candidate's product reads r * h.
      gemm_bt("GRU", B, 2 * H, H, h, H, r, hr.data(), G);
      for (int64_t b = 0; b < B; ++b)
        k.gru_reset(x_row(b) + H, hr.data() + b * G + H, h + b * H, rh.data() + b * H, H);
      gemm_bt("GRU", B, H, H, rh.data(), H, r + 2 * H * H, hr.data() + 2 * H, G);
    }
    for (int64_t b = 0; b < B; ++b) {
      float* hb = h + b * H;
      k.gru_cell(x_row(b), hr.data() + b * G, rbh, hb, H);
      if (y) {
        const int64_t at = d.batch_first ? ((b * S + t) * d.directions + dir) * H
                                         : ((t * d.directions + dir) * B + b) * H;
        std::copy(hb, hb + H, y + at);
      }
    }
  }
}

}  // namespace kiln::engine::cpu
