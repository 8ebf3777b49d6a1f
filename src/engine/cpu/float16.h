// float32 to and from float16 and bfloat16 (their bit patterns in uint16_t) over the threads, a
// register at a time: the same bits as ir/dtype.h's half_to_float, float_to_half,
// bfloat16_to_float and float_to_bfloat16 (round to nearest even, overflow to infinity, a NaN
// as those functions make it), which the reference kernels convert with one element at a time.
#pragma once

#include <cstdint>

#include "ir/dtype.h"

namespace kiln::cpu {

// y[i] = x[i] as a float, x of type `from` (kFloat16 or kBFloat16).
void widen(DataType from, const uint16_t* x, float* y, int64_t n);
// y[i] = x[i] in type `to` (kFloat16 or kBFloat16).
void narrow(DataType to, const float* x, uint16_t* y, int64_t n);

}  // namespace kiln::cpu
