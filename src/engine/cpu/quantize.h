// Linear quantization kernels on dense arrays, computed as the ONNX ops define them, so that the
// results equal the reference kernels' (src/ops/nn_quant.cc) bit for bit:
// QuantizeLinear q = saturate(round_half_even(x / scale) + zero_point) (NaN gives the zero
// point), DequantizeLinear x = (q - zero_point) * scale in float.
#pragma once

#include <cstdint>

#include "ir/dtype.h"

namespace kiln::cpu {

// One tensor's parameters: the scale, the zero point and the quantized type (kInt8 or kUInt8).
struct QuantScale {
  float scale = 1;
  int32_t zero_point = 0;
  DataType type = DataType::kUInt8;
};

// n floats x into quantized values q (of p.type).
void quantize(const float* x, int64_t n, const QuantScale& p, void* q);
// n quantized values q (of p.type) into floats x.
void dequantize(const void* q, int64_t n, const QuantScale& p, float* x);
// y = Quantize(max(Dequantize(a) + Dequantize(b), 0) when relu, else the sum), n elements each:
// the residual Add between quantized convs, as the QDQ form computes it.
void quantized_add(const void* a, const QuantScale& pa, const void* b, const QuantScale& pb,
                   bool relu, int64_t n, const QuantScale& py, void* y);

// DynamicQuantizeLinear: the uint8 scale and zero point of x's range (0 included; NaN skipped)
// and q = Quantize(x), as the op defines them.
void dynamic_quantize(const float* x, int64_t n, uint8_t* q, float* scale, uint8_t* zero_point);

}  // namespace kiln::cpu
