// ConvTranspose 2-D, channels-last, as patches: each input pixel writes a kh x kw patch of the
// output, so the part of an output row that input row i gives through kernel row a is the input
// row times a small matrix, [W, C] x [C, kw * M]. When the kernel equals the strides (a detector's
// or a segmentation head's 2x upsampling) the patches tile the output and that product is the
// output row itself, written in place; otherwise (overlapping or dilated patches) the products of
// every (i, a) landing on the row are added into it. Pads crop, output_padding adds bias only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/cpu/aligned.h"
#include "engine/cpu/elementwise.h"

namespace kiln::cpu {

struct PatchDeconvShape {
  int64_t batch = 1, h = 1, w = 1, channels = 1;  // input [N, H, W, C], channels-last
  int64_t out_channels = 1, kh = 1, kw = 1;        // M; the kernel
  int64_t out_h = 1, out_w = 1, pad_top = 0, pad_left = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  // Whether the patches tile the output: kernel = strides, no dilation.
  bool tiles() const { return kh == stride_h && kw == stride_w && dilation_h == 1 && dilation_w == 1; }
};

// ONNX's weights [C, M, kh, kw] as the kernel reads them: [kh][C][kw * M].
AlignedFloats pack_patch_deconv_weights(const float* w, int64_t channels, int64_t out_channels,
                                             int64_t kh, int64_t kw);

// y [N, out_h, out_w, M] (channels-last) from x [N, H, W, C]; `bias` has M values (or null),
// `packed` comes from pack_patch_deconv_weights; `epilogue` runs on each finished output row.
// Rows run on the OpenMP threads.
void patch_deconv(const PatchDeconvShape& s, const float* x, const float* packed, const float* bias,
                  std::span<const RowOp> epilogue, float* y);

}  // namespace kiln::cpu
