// Vectorized Softmax and LogSoftmax on float32.
#pragma once

#include <cstdint>

namespace kiln::cpu {

// Softmax (or LogSoftmax) of x viewed as [outer, len, inner], along the middle axis: inner == 1 is
// the last axis (opset 13's default), and a flattened trailing block (opset < 13) is inner == 1
// with len = the block's size. y may be x.
void softmax(const float* x, float* y, int64_t outer, int64_t len, int64_t inner);
void log_softmax(const float* x, float* y, int64_t outer, int64_t len, int64_t inner);

}  // namespace kiln::cpu
