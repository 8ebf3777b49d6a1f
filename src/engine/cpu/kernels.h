// The single-threaded kernels one ISA provides, as a table of function pointers. The public
// functions (elementwise.cc, softmax.cc, ...) split the work into chunks for the OpenMP threads and
// call the table of the active ISA; kernels_<isa>.cc fill one table each from kernels_impl.h.
#pragma once

#include <cstdint>

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/elementwise.h"
#include "engine/cpu/quantize.h"
#include "engine/cpu/reduce.h"

namespace kiln::cpu {

struct IsaKernels {
  Isa isa;
  int width;  // float lanes per register

  // y[i] = op(x[i]), i < n; y may be x.
  void (*unary)(UnaryOp op, UnaryParams p, const float* x, float* y, int64_t n);
  // y[i] = a[i] op b[i]; a[i] op s; s op b[i].
  void (*binary_vv)(BinaryOp op, const float* a, const float* b, float* y, int64_t n);
  void (*binary_vs)(BinaryOp op, const float* a, float s, float* y, int64_t n);
  void (*binary_sv)(BinaryOp op, float s, const float* b, float* y, int64_t n);

  // Softmax / LogSoftmax of `rows` rows of `len` contiguous values.
  void (*softmax_rows)(const float* x, float* y, int64_t rows, int64_t len, bool log);
  // The same along the middle axis of [len, stride] (stride > 1), for columns [0, cols).
  void (*softmax_strided)(const float* x, float* y, int64_t len, int64_t stride, int64_t cols,
                          bool log);

  // LayerNormalization (rms: RMSNormalization, no mean, no bias) of `rows` rows of `cols`.
  void (*norm_rows)(const float* x, const float* scale, const float* bias, float* y, int64_t rows,
                    int64_t cols, float epsilon, bool rms, float* mean, float* inv_std);

  // y[r] = reduction of row r of [rows, len] (a mean divides by len).
  void (*reduce_rows)(ReduceOp op, const float* x, float* y, int64_t rows, int64_t len);
  // y[i] = reduction over k of x[k * stride + i], for i < cols (a column block).
  void (*reduce_cols)(ReduceOp op, const float* x, float* y, int64_t len, int64_t stride,
                      int64_t cols);

  // y[r * len + j] = x[r * len + j] * s[index[r]] for r < runs, j < len.
  void (*scale_runs)(const float* x, const float* s, const int32_t* index, float* y, int64_t runs,
                     int64_t len);

  // y[i] = a[i] (1 - w) + b[i] w: linear interpolation between two rows.
  void (*lerp)(const float* a, const float* b, float w, float* y, int64_t n);

  // y[r * ldy + c] = bias[c] + sum over k < depth of x[r * depth + k] * w[k * cols + c], for
  // r < rows, c < cols: rows of pixels (channels-last) times a small matrix (ConvTranspose).
  void (*rows_times_matrix)(const float* x, int64_t rows, int64_t depth, const float* w,
                            int64_t cols, const float* bias, float* y, int64_t ldy);

  // y[r * ldy + c] = bias[c] + sum over k < depth of x[r * depth + k] * w[c * depth + k], for
  // r < rows, c < cols (bias may be null: 0): rows times a matrix given by its rows, [cols,
  // depth] (a Linear layer's weight; cpu.matmul).
  void (*rows_times_rows)(const float* x, int64_t rows, int64_t depth, const float* w,
                          int64_t cols, const float* bias, float* y, int64_t ldy);

  // One output row of a depthwise conv on a block of 16 channels (depthwise_conv.h): for o <
  // out_w, c < 16, y[o * ldy + c] = bias[c] + sum over i < kh, j < kw of
  // rows[i][(o * stride + j) * ldr + c] * w[(i * kw + j) * 16 + c].
  void (*depthwise_row)(const float* const* rows, int64_t ldr, int64_t kh, int64_t kw,
                        int64_t stride, const float* w, const float* bias, float* y, int64_t ldy,
                        int64_t out_w);

  // One output row of a 2-D MaxPool or AveragePool on a block of `block` channels (oneDNN's
  // nChw16c, nChw8c): for o < out_w, c < block, y[o * block + c] = the max (or the sum times
  // scale[o]) over the nrows rows and the taps j < kw whose column i = o * stride + j - pad_left
  // is in [0, w) of rows[r][i * block + c].
  void (*pool_row)(const float* const* rows, int64_t nrows, int64_t w, int64_t kw, int64_t stride,
                   int64_t pad_left, int64_t block, bool max, const float* scale, float* y,
                   int64_t out_w);

  // y[r * block + c] = f(x[r * block + c] a[c] + b[c]) for r < rows, c < block, f max(0, .) when
  // relu (else none): one block of channels (16 or 8: oneDNN's nChw16c, nChw8c) through a
  // per-channel affine map (a BatchNormalization).
  void (*block_affine)(const float* x, float* y, int64_t rows, int64_t block, const float* a,
                       const float* b, bool relu);

  // 4-byte elements: y[c * ldy + r] = x[r * ldx + c] for r < rows, c < cols.
  void (*transpose_4b)(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows,
                       int64_t cols);

  // One step of LSTM cells for n units (lstm.h): gx and gh the gates' input and recurrent
  // products in ONNX's order i, o, f, c, gate g's n values at gx + g * x_stride and gh + g *
  // h_stride (biases already in gx), peep (i, o, f) at x_stride too, or null; c and h [n] get the
  // new cell and hidden state (c holds the old one). Strides above n: a part of the units of a
  // wider cell, or products laid out by runs of units (recurrent_gemm.h).
  void (*lstm_cell)(const float* gx, const float* gh, const float* peep, float* c, float* h,
                    int64_t n, int64_t x_stride, int64_t h_stride);
  // One step of GRU cells for n units (gru.h): gx and gh in ONNX's order z, r, h, strided as
  // lstm_cell's. gx holds x W^T + Wb plus Rb's z and r parts. With linear_before_reset, rbh [n]
  // is Rb's h part (zeros when there is no bias) and gh's h part h Rh^T; without, rbh is null,
  // Rb's h part is in gx and gh's h part is (r . h) Rh^T (gru_reset made r . h). h [n] gets the
  // new state.
  void (*gru_cell)(const float* gx, const float* gh, const float* rbh, float* h, int64_t n,
                   int64_t x_stride, int64_t h_stride);
  // rh[k] = sigmoid(gx[k] + gh[k]) h[k], k < n: the reset gate applied to the state.
  void (*gru_reset)(const float* gx, const float* gh, const float* h, float* rh, int64_t n);

  // Linear quantization of n elements (quantize.h), bit for bit as the ONNX ops define it:
  // q = saturate(round_half_even(x / scale) + zero_point), NaN giving the zero point; and
  // x = (q - zero_point) * scale.
  void (*quantize)(const float* x, int64_t n, const QuantScale& p, void* q);
  void (*dequantize)(const void* q, int64_t n, const QuantScale& p, float* x);
  // y = Quantize(Dequantize(a) + Dequantize(b)), through max(., 0) first when relu (NaN kept).
  void (*quantized_add)(const void* a, const QuantScale& pa, const void* b, const QuantScale& pb,
                        bool relu, int64_t n, const QuantScale& py, void* y);
  // min(0, x...) and max(0, x...) of n floats, NaN skipped.
  void (*range)(const float* x, int64_t n, float* lo, float* hi);

  // n float16 or bfloat16 values (`from`, bit patterns) as floats, and back (float16.h).
  void (*widen)(DataType from, const uint16_t* x, float* y, int64_t n);
  void (*narrow)(DataType to, const float* x, uint16_t* y, int64_t n);
};

namespace scalar { const IsaKernels& isa_kernels(); }
namespace avx2 { const IsaKernels& isa_kernels(); }
namespace avx512 { const IsaKernels& isa_kernels(); }
namespace neon { const IsaKernels& isa_kernels(); }  // aarch64 builds only

const IsaKernels& isa_kernels(Isa isa);
// The active ISA's table: best_isa()'s, chosen on first use (set_active_isa switches it).
const IsaKernels& kernels();

}  // namespace kiln::cpu
