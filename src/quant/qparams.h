// Scales and zero points, and the integer tensors made with them: ONNX's QuantizeLinear
// arithmetic (round half to even, saturate) done offline for weights and biases.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/tensor.h"

namespace kiln::quant {

struct Range {
  float min = 0, max = 0;
};

// One scale and zero point per channel (one entry: per tensor). axis: the channel axis, or -1.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int axis = -1;
  DataType type = DataType::kUInt8;
};

// The range widened to hold 0, then scale and zero point as ONNX Runtime computes them:
// symmetric: zero point at the middle, scale = 2 * max|r| / (qmax - qmin) over [-127, 127] for
// int8 (so -scale*127..scale*127), [0, 255] for uint8 with zero point 128; asymmetric: scale =
// (max - min) / (qmax - qmin), zero point = round(qmin - min / scale). A zero range gets scale 1.
void add_params(QuantParams& p, Range r, bool symmetric);
QuantParams params_for(Range r, DataType type, bool symmetric);

// Weight w quantized symmetric to `type`: per tensor (axis -1) or one scale per index of `axis`.
struct QuantizedWeight {
  Tensor values;  // int8 / uint8, w's dims
  QuantParams params;
};
QuantizedWeight quantize_weight(const Tensor& w, DataType type, int axis);

// Bias b (float [C]) as int32 with scale in_scale * w_scale[c] and zero point 0.
Tensor quantize_bias(const Tensor& b, float in_scale, const std::vector<float>& w_scale);

// The scale (float) and zero-point (type) tensors of p: scalars for per tensor, 1-D per channel.
Tensor scale_tensor(const QuantParams& p);
Tensor zero_point_tensor(const QuantParams& p);
Tensor zero_point_tensor(const QuantParams& p, DataType type);

int64_t quantize_value(float x, float scale, int32_t zero_point, DataType type);
float dequantize_value(int64_t q, float scale, int32_t zero_point);

}  // namespace kiln::quant
