// The products LSTM and GRU share (lstm.cc, gru.cc): oneDNN's row-major sgemm of A by B's rows.
#pragma once

#include <oneapi/dnnl/dnnl.h>

#include <cstdint>

#include "support/error.h"

namespace kiln::engine::cpu {

// C[M, N] = A[M, K] B[N, K]^T, A's rows `lda` apart and C's `ldc`; `op` names the node in errors.
inline void gemm_bt(const char* op, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* b, float* c, int64_t ldc) {
  const dnnl_status_t s = dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, k, 0.0f, c, ldc);
  KILN_CHECK(s == dnnl_success, ErrorKind::kRuntime, "{}: oneDNN sgemm failed ({})", op,
             static_cast<int>(s));
}

}  // namespace kiln::engine::cpu
