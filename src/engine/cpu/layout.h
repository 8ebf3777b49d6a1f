// Data movement for tensors of any element type (given by its size in bytes): Transpose, Concat,
// Split, Slice, Gather. Large copies run on the OpenMP threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::cpu {

// y = x with its axes permuted: y's axis i is x's axis perm[i]. Axes that stay adjacent are
// merged first; 2-D transposes (and batches of them, such as NCHW <-> NHWC) run in cache blocks,
// 16x16 / 8x8 register tiles for 4-byte elements.
void transpose(const void* x, std::span<const int64_t> x_dims, std::span<const int64_t> perm,
               void* y, size_t elem_size);

// Concat along an axis: input k viewed as [outer, lens[k] * inner], y as [outer, sum(lens) * inner].
// A piece found where it belongs in y (placed there by the memory plan) is not copied.
void concat(std::span<const void* const> xs, std::span<const int64_t> lens, int64_t outer,
            int64_t inner, void* y, size_t elem_size);

// Concat along the channels of [batch, channels, pixels] pieces into y, channels-last (block 0:
// [batch, pixels, sum of channels]) or in blocks of `block` channels ([batch, sum / block, pixels,
// block]). Piece k holds `channels` channels, channels-last (block 0: [batch, pixels, channels])
// or in blocks ([batch, channels / block, pixels, block], channels a multiple of the block);
// into a blocked y, every piece's channels are a multiple of y's block and its own block is 0 or
// y's. DenseNet's and SqueezeNet's concats join channels-last pieces with Winograd convs'
// channel-blocked outputs. A blocked piece found where it belongs in y (placed there by the
// memory plan) is not copied.
struct ChannelPiece {
  const float* data;
  int64_t channels;
  int64_t block;  // 0: channels-last
};
void concat_channels(std::span<const ChannelPiece> pieces, int64_t batch, int64_t pixels,
                     int64_t block, float* y);

// The concat of pieces in blocks of `block` channels ([batch, channels / block, pixels, block],
// channels k[i] in piece i, each a multiple of block; 16 or 8, oneDNN's nChw16c on AVX-512 and
// nChw8c on AVX2) into y in the same layout, each value then taken through y = f(a[c] y + b[c])
// for its channel c, f max(0, .) when relu: a BatchNormalization (and a Relu) after the concat,
// applied as the pieces are copied.
void concat_blocks_affine(std::span<const float* const> xs, std::span<const int64_t> channels,
                          int64_t batch, int64_t pixels, int64_t block, const float* a,
                          const float* b, bool relu, float* y);

// y[2 i] = a[i], y[2 i + 1] = b[i] for i < n: two runs zipped (a channel shuffle of two groups).
void zip(const float* a, const float* b, float* y, int64_t n);

// Split, the inverse of concat: output k gets [outer, lens[k] * inner] of x.
void split(const void* x, std::span<void* const> ys, std::span<const int64_t> lens, int64_t outer,
           int64_t inner, size_t elem_size);

// Slice with steps: y[j0, j1, ...] = x[starts[0] + j0 * steps[0], starts[1] + j1 * steps[1], ...]
// for y_dims. starts are in range and steps non-zero (negative walks backwards): the caller
// resolved ONNX's clamping. Contiguous runs are copied whole.
void slice(const void* x, std::span<const int64_t> x_dims, std::span<const int64_t> starts,
           std::span<const int64_t> steps, void* y, std::span<const int64_t> y_dims,
           size_t elem_size);

// Gather along one axis (axis 0 with outer == 1: an embedding lookup): x viewed as
// [outer, n, inner], y as [outer, count, inner]; y[o, j, :] = x[o, indices[j], :]. Negative
// indices count from the end; an index outside [-n, n) fails (kiln::Error, kRuntime) before
// anything is written.
void gather(const void* x, int64_t outer, int64_t n, int64_t inner, const int64_t* indices,
            int64_t count, void* y, size_t elem_size);
void gather(const void* x, int64_t outer, int64_t n, int64_t inner, const int32_t* indices,
            int64_t count, void* y, size_t elem_size);

}  // namespace kiln::cpu
