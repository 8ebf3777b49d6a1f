#include "engine/cpu/depthwise_conv.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"
#include "engine/cpu/reduce.h"
#include "support/error.h"

namespace kiln::cpu {

namespace {

constexpr int64_t B = kDepthwiseBlock;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Strides, in floats, of [N, C, H, W] in a layout: to the next pixel, row, block of 16 channels
// and image.
struct Strides {
  int64_t pixel, row, block, image;
};

Strides strides_of(ChannelLayout l, int64_t channels, int64_t h, int64_t w) {
  if (l == ChannelLayout::kLast) return {channels, w * channels, B, h * w * channels};
  return {B, w * B, h * w * B, ceil_div(channels, B) * h * w * B};
}

// This thread's scratch of at least n floats, 64-byte aligned (pixels of whole blocks start on
// cache lines), kept from call to call (no allocation once warm).
float* thread_scratch(size_t n) {
  thread_local std::vector<float> buf;
  if (buf.size() < n + 16) buf.resize(n + 16);
  const auto at = reinterpret_cast<uintptr_t>(buf.data());
  return buf.data() + (64 - at % 64) % 64 / sizeof(float);
}

// Tasks: (image, chunk of channel blocks, band of output rows). Blocked: a chunk is one block
// (its rows are contiguous). Channels-last: all channels (whole rows, contiguous), split into one
// chunk per thread instead of bands when the bands would be short (a band reloads, and
// reactivates, the kh - stride_h input rows it shares with the band above).
struct Split {
  int64_t chunk_blocks, chunks, units, bands, band_rows;
  int64_t ldr;  // floats from one pixel to the next in a ring row: the chunk's channels
};

Split split_of(const DepthwiseConv& c) {
  const DepthwiseShape& s = c.shape;
  const bool blocked = c.layout == ChannelLayout::kBlocked16;
  const int64_t blocks = ceil_div(s.channels, B);
  const int threads = worker_threads();
  Split p{};
  p.chunk_blocks = blocked ? 1 : blocks;
  if (!blocked && s.batch < threads && s.out_h < 2 * s.kh * threads)
    p.chunk_blocks = ceil_div(blocks, std::min<int64_t>(blocks, threads));
  p.chunks = ceil_div(blocks, p.chunk_blocks);
  p.units = s.batch * p.chunks;
  const int64_t wanted = blocked ? 4 * threads : threads;
  p.bands = p.units >= wanted ? 1 : std::min(s.out_h, ceil_div(wanted, p.units));
  p.band_rows = ceil_div(s.out_h, p.bands);
  p.bands = ceil_div(s.out_h, p.band_rows);
  p.ldr = p.chunk_blocks * B;
  return p;
}

}  // namespace

size_t depthwise_partials(const DepthwiseConv& c) {
  const Split p = split_of(c);
  return static_cast<size_t>(p.units * p.bands * p.ldr);
}

void pack_depthwise(DepthwiseConv& c, const float* weights, const float* bias) {
  const DepthwiseShape& s = c.shape;
  const int64_t blocks = ceil_div(s.channels, B), taps = s.kh * s.kw;
  c.weights.assign(static_cast<size_t>(blocks * taps * B), 0.0f);
  c.bias.assign(static_cast<size_t>(blocks * B), 0.0f);
  for (int64_t ch = 0; ch < s.channels; ++ch) {
    for (int64_t t = 0; t < taps; ++t)
      c.weights[static_cast<size_t>(((ch / B) * taps + t) * B + ch % B)] = weights[ch * taps + t];
    if (bias) c.bias[static_cast<size_t>(ch)] = bias[ch];
  }
}

void depthwise_conv(const DepthwiseConv& c, const float* x, float* y, float* means,
                    float* partials) {
  const DepthwiseShape& s = c.shape;
  KILN_ASSERT(s.kh <= kDepthwiseMaxKernel, "a depthwise kernel of more rows than the ring holds");
  const int64_t C = s.channels, blocks = ceil_div(C, B), taps = s.kh * s.kw;
  const bool blocked = c.layout == ChannelLayout::kBlocked16;
  const Strides in = strides_of(c.layout, C, s.h, s.w);
  const Strides out = strides_of(c.layout, C, s.out_h, s.out_w);
  // A ring row: the input columns an output row reads, [-pad_left, pw - pad_left), zero where
  // they fall outside the image; pixels `ldr` floats apart (the channels of the task's chunk).
  const int64_t pw = (s.out_w - 1) * s.stride_w + s.kw;
  const int64_t left = std::min(s.pad_left, pw);
  const int64_t cols = std::clamp<int64_t>(pw - s.pad_left, 0, s.w);  // image columns in the ring
  const Split split = split_of(c);
  const int64_t chunk_blocks = split.chunk_blocks, chunks = split.chunks, units = split.units;
  const int64_t bands = split.bands, band_rows = split.band_rows, ldr = split.ldr;
  const size_t row_floats = static_cast<size_t>(pw * ldr);
  const IsaKernels& k = kernels();
  parallel_for(units * bands, 1, [&](int64_t first, int64_t last) {
    float* ring = thread_scratch((static_cast<size_t>(s.kh) + 1) * row_floats +
                                 static_cast<size_t>((s.out_w + 1) * ldr));
    float* zero_row = ring + static_cast<size_t>(s.kh) * row_floats;
    float* result = zero_row + row_floats;  // an output row, when it cannot go straight to y
    float* row_sum = result + s.out_w * ldr;  // means: the channels' sums over an output row
    std::fill(zero_row, zero_row + row_floats, 0.0f);
    std::array<const float*, kDepthwiseMaxKernel> rows{}, block_rows{};
    std::array<int64_t, kDepthwiseMaxKernel> held{};  // the input row each ring slot holds
    int64_t ring_of = -1;                              // the unit the ring holds rows of
    for (int64_t t = first; t < last; ++t) {
      const int64_t unit = t / bands, band = t % bands, n = unit / chunks, q = unit % chunks;
      const int64_t b0 = q * chunk_blocks, nb = std::min(blocks, b0 + chunk_blocks) - b0;
      const int64_t c0 = b0 * B, width = std::min(C, c0 + nb * B) - c0;  // the chunk's channels
      // Channels-last rows of the chunk's width, whole rows when it is all of them.
      const bool straight = blocked || width % B == 0;
      const bool whole = !blocked && width == C;
      if (unit != ring_of) {
        ring_of = unit;
        std::fill(held.begin(), held.begin() + s.kh, INT64_MIN);
        for (int64_t i = 0; i < s.kh; ++i) {
          float* r = ring + static_cast<size_t>(i) * row_floats;
          std::fill(r, r + left * ldr, 0.0f);
          std::fill(r + (left + cols) * ldr, r + pw * ldr, 0.0f);
        }
      }
      const float* x_unit = x + n * in.image + (blocked ? b0 * in.block : c0);
      float* y_unit = y + n * out.image + (blocked ? b0 * out.block : c0);
      auto load = [&](int64_t ih, float* r) {
        const float* src = x_unit + ih * in.row;
        float* dst = r + left * ldr;
        if (blocked || (whole && straight)) {  // contiguous: activated as it is copied
          apply_row_ops(c.prologue, src, dst, cols * ldr);
          return;
        }
        for (int64_t iw = 0; iw < cols; ++iw) {
          std::copy_n(src + iw * in.pixel, width, dst + iw * ldr);
          std::fill(dst + iw * ldr + width, dst + (iw + 1) * ldr, 0.0f);
        }
        apply_row_ops(c.prologue, dst, cols * ldr);
      };
      float* sums = means ? partials + t * ldr : nullptr;  // this task's, over its rows
      if (sums) std::fill(sums, sums + width, 0.0f);
      const int64_t oh_end = std::min(s.out_h, (band + 1) * band_rows);
      for (int64_t oh = band * band_rows; oh < oh_end; ++oh) {
        for (int64_t i = 0; i < s.kh; ++i) {
          const int64_t ih = oh * s.stride_h - s.pad_top + i;
          if (ih < 0 || ih >= s.h) {
            rows[static_cast<size_t>(i)] = zero_row;
            continue;
          }
          const int64_t slot = ih % s.kh;
          float* r = ring + static_cast<size_t>(slot) * row_floats;
          if (held[static_cast<size_t>(slot)] != ih) {
            load(ih, r);
            held[static_cast<size_t>(slot)] = ih;
          }
          rows[static_cast<size_t>(i)] = r;
        }
        // The output row: straight into y (pixels `ldy` apart), or into `result` then copied.
        float* dst = straight ? y_unit + oh * out.row : result;
        const int64_t ldy = straight ? out.pixel : ldr;
        for (int64_t j = 0; j < nb; ++j) {
          for (size_t i = 0; i < static_cast<size_t>(s.kh); ++i) block_rows[i] = rows[i] + j * B;
          k.depthwise_row(block_rows.data(), ldr, s.kh, s.kw, s.stride_w,
                          c.weights.data() + (b0 + j) * taps * B, c.bias.data() + (b0 + j) * B,
                          dst + j * B, ldy, s.out_w);
        }
        if (blocked || whole || !straight) {
          apply_row_ops(c.epilogue, dst, s.out_w * ldy);  // contiguous
        } else {
          for (int64_t ow = 0; ow < s.out_w; ++ow) apply_row_ops(c.epilogue, dst + ow * ldy, width);
        }
        if (sums) {
          k.reduce_cols(ReduceOp::kSum, dst, row_sum, s.out_w, ldy, width);
          k.binary_vv(BinaryOp::kAdd, sums, row_sum, sums, width);
        }
        if (!straight) {
          float* to = y_unit + oh * out.row;
          for (int64_t ow = 0; ow < s.out_w; ++ow)
            std::copy_n(result + ow * ldr, width, to + ow * out.pixel);
        }
      }
    }
  }, 1);
  if (!means) return;
  const float scale = 1.0f / static_cast<float>(s.out_h * s.out_w);
  for (int64_t unit = 0; unit < units; ++unit) {
    const int64_t n = unit / chunks, c0 = unit % chunks * ldr, width = std::min(ldr, C - c0);
    float* m = means + n * C + c0;
    std::copy_n(partials + unit * bands * ldr, width, m);
    for (int64_t band = 1; band < bands; ++band)
      k.binary_vv(BinaryOp::kAdd, m, partials + (unit * bands + band) * ldr, m, width);
    k.binary_vs(BinaryOp::kMul, m, scale, m, width);
  }
}

}  // namespace kiln::cpu
