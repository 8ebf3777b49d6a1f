// ConvTranspose 2-D whose kernel equals its stride (a detector's or a segmentation head's 2x
// upsampling): each input pixel writes its own kh x kw patch of the output, so an output row is
// one input row times a small matrix, [W, C] x [C, kw * M], written straight into a channels-last
// row. Pads crop, output_padding adds rows and columns of bias only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/cpu/elementwise.h"

namespace kiln::cpu {

struct PatchDeconvShape {
  int64_t batch = 1, h = 1, w = 1, channels = 1;  // input [N, H, W, C], channels-last
  int64_t out_channels = 1, kh = 1, kw = 1;        // M; kernel = strides
  int64_t out_h = 1, out_w = 1, pad_top = 0, pad_left = 0;
};

// What runs on each finished output row, in order: an activation, or y = alpha * y + beta.
struct RowOp {
  bool affine = false;
  UnaryOp op = UnaryOp::kIdentity;
  UnaryParams p;  // affine: alpha, beta
};

// ONNX's weights [C, M, kh, kw] as the kernel reads them: [kh][C][kw * M].
std::vector<float> pack_patch_deconv_weights(const float* w, int64_t channels, int64_t out_channels,
                                             int64_t kh, int64_t kw);

// y [N, out_h, out_w, M] (channels-last) from x [N, H, W, C]; `bias` has M values (or null),
// `packed` comes from pack_patch_deconv_weights. Rows run on the OpenMP threads.
void patch_deconv(const PatchDeconvShape& s, const float* x, const float* packed, const float* bias,
                  std::span<const RowOp> epilogue, float* y);

}  // namespace kiln::cpu
