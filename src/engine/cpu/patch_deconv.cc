#include "engine/cpu/patch_deconv.h"

#include <algorithm>
#include <cstring>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {

AlignedFloats pack_patch_deconv_weights(const float* w, int64_t channels, int64_t out_channels,
                                             int64_t kh, int64_t kw) {
  AlignedFloats packed(static_cast<size_t>(kh * channels * kw * out_channels));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t m = 0; m < out_channels; ++m)
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b)
          packed[((a * channels + c) * kw + b) * out_channels + m] =
              w[((c * out_channels + m) * kh + a) * kw + b];
  return packed;
}

void patch_deconv(const PatchDeconvShape& s, const float* x, const float* packed, const float* bias,
                  std::span<const RowOp> epilogue, float* y) {
  const int64_t M = s.out_channels, C = s.channels, cols = s.kw * M;  // an input pixel's part of a row
  const int64_t row_len = s.out_w * M;
  // The bias of each column of an input pixel's patch row: bias[m] repeated kw times.
  std::vector<float> bias_cols(static_cast<size_t>(cols), 0.0f);
  if (bias)
    for (int64_t b = 0; b < s.kw; ++b) std::copy(bias, bias + M, bias_cols.begin() + b * M);
  const std::vector<float> zeros(static_cast<size_t>(std::max(cols, s.w)), 0.0f);  // a zero bias
  const IsaKernels& k = kernels();
  // Fewer columns than a register holds (OC = 1): tiling patches take each pixel's dot products
  // with the kernel row's [cols, C] weights (rows_times_rows); overlapping ones run registers
  // along the pixels instead, over the input row transposed to [C, W], the result [cols, W]
  // added into the row. (Tiling patches went that way too: PP-OCR det's 24 -> 1 head at 320x320,
  // 1.96 -> 1.25 ms at 1 thread, then at this machine's DRAM bandwidth.)
  const bool narrow = cols < k.width;
  AlignedFloats packed_t;  // narrow: per kernel row, [cols, C]
  if (narrow) {
    packed_t.resize(static_cast<size_t>(s.kh * cols * C));
    for (int64_t a = 0; a < s.kh; ++a)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t q = 0; q < cols; ++q)
          packed_t[(a * cols + q) * C + c] = packed[(a * C + c) * cols + q];
  }
  // Tiling patches: input columns cover output columns [-pad_left, w * kw - pad_left); the rest
  // gets the bias.
  const bool tiles = s.tiles();
  const bool whole_rows = tiles && s.pad_left == 0 && s.out_w == s.w * s.kw;
  const int64_t covered = std::clamp<int64_t>(s.w * s.kw - s.pad_left, 0, s.out_w);
  const int64_t work_per_row = std::max<int64_t>(1, s.w * C * cols * (tiles ? 1 : s.kh / s.stride_h + 1));
  parallel_for(s.batch * s.out_h, std::max<int64_t>(1, (64 << 10) / work_per_row), [&](int64_t first, int64_t last) {
    std::vector<float> scratch(whole_rows ? 0 : static_cast<size_t>(s.w * cols));
    // narrow overlapping patches: input rows transposed to [C, W], the last few (each input row
    // serves several output rows), and one product [cols, W]
    constexpr int kRowsKept = 4;
    const bool transposed_rows = narrow && !tiles;
    std::vector<float> x_t(transposed_rows ? static_cast<size_t>(kRowsKept * C * s.w) : 0);
    std::vector<float> z(transposed_rows ? static_cast<size_t>(cols * s.w) : 0);
    int64_t x_t_rows[kRowsKept] = {-1, -1, -1, -1};
    int next_kept = 0;
    // z = input row `row` (of all images) times the weights of kernel row a, transposed: [cols, W]
    auto narrow_product = [&](int64_t row, int64_t a) {
      int slot = 0;
      while (slot < kRowsKept && x_t_rows[slot] != row) ++slot;
      if (slot == kRowsKept) {
        slot = next_kept;
        next_kept = (next_kept + 1) % kRowsKept;
        k.transpose_4b(x + row * s.w * C, C, x_t.data() + slot * C * s.w, s.w, s.w, C);
        x_t_rows[slot] = row;
      }
      k.rows_times_matrix(packed_t.data() + a * cols * C, cols, C, x_t.data() + slot * C * s.w, s.w,
                          zeros.data(), z.data(), s.w);
    };
    // dst [w, cols] = row_bias + input row `row` times the weights of kernel row a
    auto patch_row = [&](int64_t row, int64_t a, float* dst, const float* row_bias) {
      if (!narrow) {
        k.rows_times_matrix(x + row * s.w * C, s.w, C, packed + a * C * cols, cols, row_bias, dst, cols);
        return;
      }
      // each of the row's pixels times the kernel row's [cols, C] weights: dot products along C
      k.rows_times_rows(x + row * s.w * C, s.w, C, packed_t.data() + a * cols * C, cols, row_bias, dst, cols);
    };
    for (int64_t r = first; r < last; ++r) {
      const int64_t n = r / s.out_h, oy = r % s.out_h;
      float* out = y + r * row_len;
      if (!tiles) {
        // The bias, then every (input row i, kernel row a) with i * stride + a * dilation at this
        // row: its patch row added at output columns j * stride + b * dilation - pad_left.
        for (int64_t at = 0; at < row_len; at += M) std::copy(bias_cols.begin(), bias_cols.begin() + M, out + at);
        for (int64_t a = 0; a < s.kh; ++a) {
          const int64_t t = oy + s.pad_top - a * s.dilation_h;
          if (t < 0 || t % s.stride_h != 0 || t / s.stride_h >= s.h) continue;
          if (narrow) {  // z[b * M + m][j] goes to output column j * stride + b * dilation
            narrow_product(n * s.h + t / s.stride_h, a);
            for (int64_t b = 0; b < s.kw; ++b)
              for (int64_t j = 0; j < s.w; ++j) {
                const int64_t ox = j * s.stride_w + b * s.dilation_w - s.pad_left;
                if (ox < 0 || ox >= s.out_w) continue;
                for (int64_t m = 0; m < M; ++m) out[ox * M + m] += z[(b * M + m) * s.w + j];
              }
            continue;
          }
          patch_row(n * s.h + t / s.stride_h, a, scratch.data(), zeros.data());
          for (int64_t j = 0; j < s.w; ++j)
            for (int64_t b = 0; b < s.kw; ++b) {
              const int64_t ox = j * s.stride_w + b * s.dilation_w - s.pad_left;
              if (ox < 0 || ox >= s.out_w) continue;
              const float* zp = scratch.data() + j * cols + b * M;
              float* op = out + ox * M;
              if (M >= 16) k.binary_vv(BinaryOp::kAdd, op, zp, op, M);
              else for (int64_t m = 0; m < M; ++m) op[m] += zp[m];
            }
        }
      } else {
        const int64_t src = oy + s.pad_top, i = src / s.kh, a = src % s.kh;
        int64_t done = 0;  // output values written from the input
        if (i < s.h) {
          if (whole_rows) {
            patch_row(n * s.h + i, a, out, bias_cols.data());
            done = row_len;
          } else {
            patch_row(n * s.h + i, a, scratch.data(), bias_cols.data());
            if (covered > 0) std::memcpy(out, scratch.data() + s.pad_left * M, covered * M * sizeof(float));
            done = covered * M;
          }
        }
        for (int64_t at = done; at < row_len; at += M) std::copy(bias_cols.begin(), bias_cols.begin() + M, out + at);
      }
      apply_row_ops(epilogue, out, row_len);
    }
  }, 1);
}

}  // namespace kiln::cpu
