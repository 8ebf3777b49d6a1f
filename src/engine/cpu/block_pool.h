// 2-D MaxPool and AveragePool on channel-blocked float tensors ([N, C/b, H, W, b], oneDNN's
// nChw16c and nChw8c, what kiln's convs write): one output row per task, each output pixel the
// max or the mean of its window's taps read a register of channels at a time (IsaKernels'
// pool_row). oneDNN 2.6's AVX2 pooling of nChw8c took 1.4 ms for Inception v3's first MaxPool
// (64 x 147 x 147, 3x3 stride 2; 0.4 ms in ONNX Runtime) where this takes a fifth of it.
#pragma once

#include <cstdint>

namespace kiln::cpu {

struct BlockPoolShape {
  int64_t batch = 1, channels = 1, block = 16;  // block: 8 or 16 channels
  int64_t h = 1, w = 1, out_h = 1, out_w = 1;
  int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  bool max = true;
  // AveragePool's count_include_pad: every window is then divided by kh * kw (the step takes
  // only windows that end within the pads), else by its taps inside the input.
  bool include_pad = false;
  int64_t blocks() const { return (channels + block - 1) / block; }
};

// y = the pool of x, both [N, C/b, H, W, b] (the padded channels' lanes too), on the threads.
void block_pool(const BlockPoolShape& s, const float* x, float* y);

}  // namespace kiln::cpu
