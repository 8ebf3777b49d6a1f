#include "engine/cpu/lstm.h"

#include <oneapi/dnnl/dnnl.h>

#include <cmath>

#include "support/error.h"

namespace kiln::engine::cpu {

namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Row-major C[M, N] = A[M, K] B[N, K]^T.
void gemm_bt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  const dnnl_status_t s = dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
  KILN_CHECK(s == dnnl_success, ErrorKind::kRuntime, "LSTM: oneDNN sgemm failed ({})",
             static_cast<int>(s));
}

}  // namespace

void lstm_direction(const LstmDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                    const float* r, const float* bias, const float* peep, float* h, float* c,
                    float* y) {
  const int64_t S = d.seq, B = d.batch, H = d.hidden, G = 4 * H;
  // x W^T (+ Wb + Rb) for every (step, batch) row, in X's row order.
  std::vector<float> xw(static_cast<size_t>(S * B * G));
  gemm_bt(S * B, G, d.input, x, w, xw.data());
  if (bias)
    for (int64_t row = 0; row < S * B; ++row)
      for (int64_t g = 0; g < G; ++g) xw[row * G + g] += bias[g] + bias[G + g];
  std::vector<float> hr(static_cast<size_t>(B * G));
  for (int64_t s = 0; s < S; ++s) {
    const int64_t t = reverse ? S - 1 - s : s;
    gemm_bt(B, G, H, h, r, hr.data());
    for (int64_t b = 0; b < B; ++b) {
      const float* xt = xw.data() + (d.batch_first ? b * S + t : t * B + b) * G;
      const float* ht = hr.data() + b * G;
      float* hb = h + b * H;
      float* cb = c + b * H;
      for (int64_t k = 0; k < H; ++k) {
        // gates i, o, f, c; peepholes i, o, f
        const float pi = peep ? peep[k] * cb[k] : 0.0f;
        const float pf = peep ? peep[2 * H + k] * cb[k] : 0.0f;
        const float i = sigmoid(xt[k] + ht[k] + pi);
        const float f = sigmoid(xt[2 * H + k] + ht[2 * H + k] + pf);
        const float cand = std::tanh(xt[3 * H + k] + ht[3 * H + k]);
        cb[k] = f * cb[k] + i * cand;
        const float po = peep ? peep[H + k] * cb[k] : 0.0f;
        const float o = sigmoid(xt[H + k] + ht[H + k] + po);
        hb[k] = o * std::tanh(cb[k]);
      }
      if (y) {
        const int64_t at = d.batch_first ? ((b * S + t) * d.directions + dir) * H
                                         : ((t * d.directions + dir) * B + b) * H;
        std::copy(hb, hb + H, y + at);
      }
    }
  }
}

}  // namespace kiln::engine::cpu
