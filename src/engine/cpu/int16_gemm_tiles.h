// What int16_gemm.cc calls in the ISA-specific file (int16_gemm_avx2.cc): for internal use.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/cpu/int16_gemm.h"

namespace kiln::cpu {

constexpr int64_t kTileRows = 6;  // rows of A per register block (12 accumulators, 2 of B, 1 of A, 1 product)

namespace avx2 {
// y's rows [0, m) by panels [p_first, p_last) of b (epilogue e), A's int16 rows lda apart.
void int16_rows(const int16_t* a, int64_t lda, int64_t m, const Int16Weights& b, int64_t p_first,
                int64_t p_last, const Int16Epilogue& e);
}  // namespace avx2

}  // namespace kiln::cpu
