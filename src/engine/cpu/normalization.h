// Vectorized LayerNormalization and RMSNormalization over the trailing axes, on float32.
#pragma once

#include <cstdint>

namespace kiln::cpu {

// x viewed as [rows, cols] (cols = the product of the normalized axes). For each row:
//   y = (x - mean) * inv_std * scale + bias,  inv_std = 1 / sqrt(var + epsilon)
// scale has cols values; bias has cols values or is null. mean and inv_std, when not null, get
// one value per row (LayerNormalization's optional outputs). y may be x.
void layer_norm(const float* x, const float* scale, const float* bias, float* y, int64_t rows,
                int64_t cols, float epsilon, float* mean = nullptr, float* inv_std = nullptr);

// RMSNormalization: y = x / sqrt(mean(x^2) + epsilon) * scale, per row of [rows, cols].
void rms_norm(const float* x, const float* scale, float* y, int64_t rows, int64_t cols,
              float epsilon);

}  // namespace kiln::cpu
