#include "engine/cpu/gru.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/error.h"

namespace kiln::engine::cpu {

namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Row-major C[M, N] = A[M, K] B[N, K]^T, B's rows `ldb` apart.
void gemm_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float* c) {
  const dnnl_status_t s = dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, k, 0.0f, c, n);
  KILN_CHECK(s == dnnl_success, ErrorKind::kRuntime, "GRU: oneDNN sgemm failed ({})",
             static_cast<int>(s));
}

}  // namespace

void gru_direction(const GruDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                   const float* r, const float* bias, float* h, float* y) {
  const int64_t S = d.seq, B = d.batch, H = d.hidden, G = 3 * H;
  // x W^T + Wb for every (step, batch) row, in X's row order; Rb is added per step (with
  // linear_before_reset it sits inside r * (.)).
  std::vector<float> xw(static_cast<size_t>(S * B * G));
  gemm_bt(S * B, G, d.input, x, d.input, w, xw.data());
  if (bias)
    for (int64_t row = 0; row < S * B; ++row)
      for (int64_t g = 0; g < G; ++g) xw[row * G + g] += bias[g];
  const float* rb = bias ? bias + G : nullptr;
  std::vector<float> hr(static_cast<size_t>(B * G)), rh(static_cast<size_t>(B * H));
  for (int64_t s = 0; s < S; ++s) {
    const int64_t t = reverse ? S - 1 - s : s;
    auto x_row = [&](int64_t b) { return xw.data() + (d.batch_first ? b * S + t : t * B + b) * G; };
    if (d.linear_before_reset) {
      gemm_bt(B, G, H, h, H, r, hr.data());  // all three gates' H R^T
    } else {
      // z and r first; the candidate's product reads r * H.
      std::vector<float> zr(static_cast<size_t>(B * 2 * H));
      gemm_bt(B, 2 * H, H, h, H, r, zr.data());
      for (int64_t b = 0; b < B; ++b)
        std::copy_n(zr.data() + b * 2 * H, 2 * H, hr.data() + b * G);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < H; ++k) {
          const float rt = sigmoid(x_row(b)[H + k] + hr[b * G + H + k] + (rb ? rb[H + k] : 0.0f));
          rh[b * H + k] = rt * h[b * H + k];
        }
      std::vector<float> cand(static_cast<size_t>(B * H));
      gemm_bt(B, H, H, rh.data(), H, r + 2 * H * H, cand.data());
      for (int64_t b = 0; b < B; ++b) std::copy_n(cand.data() + b * H, H, hr.data() + b * G + 2 * H);
    }
    for (int64_t b = 0; b < B; ++b) {
      const float* xt = x_row(b);
      const float* ht = hr.data() + b * G;
      float* hb = h + b * H;
      for (int64_t k = 0; k < H; ++k) {
        const float z = sigmoid(xt[k] + ht[k] + (rb ? rb[k] : 0.0f));
        const float rr = sigmoid(xt[H + k] + ht[H + k] + (rb ? rb[H + k] : 0.0f));
        const float rbh = rb ? rb[2 * H + k] : 0.0f;
        const float cand = d.linear_before_reset ? std::tanh(xt[2 * H + k] + rr * (ht[2 * H + k] + rbh))
                                                 : std::tanh(xt[2 * H + k] + ht[2 * H + k] + rbh);
        hb[k] = (1.0f - z) * cand + z * hb[k];
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
