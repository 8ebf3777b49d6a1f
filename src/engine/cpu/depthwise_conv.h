// Depthwise Conv 2-D (one filter per channel, group = channels), channels-last or in blocks of
// 16 channels (oneDNN's nChw16c), with an activation of the input fused before it and the bias
// and activations after it fused into each output row.
//
// Work runs per block of 16 channels and band of output rows. The input rows a band needs are
// copied into a ring of kh rows of that block, [padded width][16] with the pads zero, where the
// input activation (the SiLU an expansion conv would otherwise apply as it writes) runs once per
// input row while the row is in L1; each output row is then kh x kw fused multiply-adds per 16
// outputs from that ring (cpu::IsaKernels::depthwise_row), its epilogue applied before it is
// stored. The pads are zeros of the conv's input: the input activation does not touch them.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/cpu/aligned.h"
#include "engine/cpu/elementwise.h"

namespace kiln::cpu {

constexpr int64_t kDepthwiseBlock = 16;      // channels per block of the packed weights and the ring
constexpr int64_t kDepthwiseMaxKernel = 32;  // rows of the kernel at most

struct DepthwiseShape {
  int64_t batch = 1, channels = 1, h = 1, w = 1;  // the input, [N, C, H, W] logically
  int64_t out_h = 1, out_w = 1, kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;  // pads at the end just crop
};

// How [N, C, H, W] lies in memory: channels-last (NHWC), or blocks of 16 channels, each an
// [H, W, 16] plane (nChw16c; channels a multiple of 16).
enum class ChannelLayout { kLast, kBlocked16 };

struct DepthwiseConv {
  DepthwiseShape shape;
  ChannelLayout layout = ChannelLayout::kLast;
  AlignedFloats weights;         // [blocks][kh][kw][16], zeros past the channels
  AlignedFloats bias;            // [blocks][16]
  std::vector<RowOp> prologue;   // on each input value before the conv
  std::vector<RowOp> epilogue;   // on each output value after the bias
};

// The packed form of ONNX's weights [C, 1, kh, kw] and bias [C] (null: zeros), into c.
void pack_depthwise(DepthwiseConv& c, const float* weights, const float* bias);

// y = epilogue(conv(prologue(x)) + bias), both in c.layout. With `means`, also the mean of y's
// channels over its pixels, [N, C] (a GlobalAveragePool of y, summed while each row is in cache),
// through `partials`, depthwise_partials(c) floats. Runs on the OpenMP threads (their number
// when called decides the partials' size).
void depthwise_conv(const DepthwiseConv& c, const float* x, float* y, float* means = nullptr,
                    float* partials = nullptr);
size_t depthwise_partials(const DepthwiseConv& c);

}  // namespace kiln::cpu
