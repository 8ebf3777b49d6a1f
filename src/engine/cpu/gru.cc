#include "engine/cpu/gru.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <vector>

#include "engine/cpu/kernels.h"
#include "support/error.h"

namespace kiln::engine::cpu {

namespace {

// Row-major C[M, N] = A[M, K] B[N, K]^T, A's rows `lda` apart and C's `ldc`.
void gemm_bt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float* c,
             int64_t ldc) {
  const dnnl_status_t s = dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, k, 0.0f, c, ldc);
  KILN_CHECK(s == dnnl_success, ErrorKind::kRuntime, "GRU: oneDNN sgemm failed ({})",
             static_cast<int>(s));
}

}  // namespace

void gru_direction(const GruDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                   const float* r, const float* bias, float* h, float* y) {
  const int64_t S = d.seq, B = d.batch, H = d.hidden, G = 3 * H;
  const kiln::cpu::IsaKernels& k = kiln::cpu::kernels();
  // x W^T + Wb for every (step, batch) row, in X's row order, with the parts of Rb that add to
  // a gate's sum as they are: z's and r's, and the candidate's unless linear_before_reset puts it
  // inside r * (h Rh^T + Rbh).
  std::vector<float> xw(static_cast<size_t>(S * B * G));
  gemm_bt(S * B, G, d.input, x, d.input, w, xw.data(), G);
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
      gemm_bt(B, G, H, h, H, r, hr.data(), G);  // all three gates' h R^T
    } else {
      // z and r first; the candidate's product reads r * h.
      gemm_bt(B, 2 * H, H, h, H, r, hr.data(), G);
      for (int64_t b = 0; b < B; ++b)
        k.gru_reset(x_row(b) + H, hr.data() + b * G + H, h + b * H, rh.data() + b * H, H);
      gemm_bt(B, H, H, rh.data(), H, r + 2 * H * H, hr.data() + 2 * H, G);
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
