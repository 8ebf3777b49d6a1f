// cpu::depthwise_conv against plain loops in double, on every ISA: the unrolled kernels (3x3 and
// 5x5, strides 1 and 2, rows of more and fewer outputs than a group) and the generic one, pads on
// either side, channel counts that leave a partial block, both layouts, the split into row bands
// and into channel chunks, a SiLU before and activations after, and the means of the result's
// channels (a GlobalAveragePool) summed alongside.
#include "engine/cpu/depthwise_conv.h"

#include <cmath>

#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

struct Case {
  DepthwiseShape s;
  std::vector<RowOp> prologue, epilogue;
};

// Where logical element (n, c, h, w) of [N, C, H, W] lies in a layout.
int64_t offset(ChannelLayout l, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (l == ChannelLayout::kLast) return ((n * H + h) * W + w) * C + c;
  const int64_t blocks = (C + 15) / 16;
  return (((n * blocks + c / 16) * H + h) * W + w) * 16 + c % 16;
}

double plain_ops(const std::vector<RowOp>& ops, double v) {
  for (const RowOp& op : ops) {
    if (op.affine) v = op.p.alpha * v + op.p.beta;
    else if (op.op == UnaryOp::kSwish) v = v / (1 + std::exp(-op.p.alpha * v));
    else if (op.op == UnaryOp::kRelu) v = std::max(v, 0.0);
    else if (op.op == UnaryOp::kClip) v = std::min<double>(op.p.beta, std::max<double>(op.p.alpha, v));
    else ADD_FAILURE() << "no plain form of " << unary_name(op.op);
  }
  return v;
}

class DepthwiseConvTest : public IsaTest {};

TEST_P(DepthwiseConvTest, MatchesPlainLoops) {
  const RowOp silu{.op = UnaryOp::kSwish, .p = {.alpha = 1.0f}};
  const RowOp relu{.op = UnaryOp::kRelu};
  const RowOp clip{.op = UnaryOp::kClip, .p = {.alpha = -0.5f, .beta = 0.5f}};
  const RowOp affine{.affine = true, .p = {.alpha = 2.0f, .beta = -0.25f}};
  // {batch, C, H, W, out_h, out_w, kh, kw, stride_h, stride_w, pad_top, pad_left}
  const std::vector<Case> cases = {
      {{1, 16, 9, 11, 9, 11, 3, 3, 1, 1, 1, 1}, {}, {}},
      {{1, 32, 30, 21, 30, 21, 3, 3, 1, 1, 1, 1}, {silu}, {silu}},     // bands, a row of 8s + 5
      {{2, 20, 8, 7, 4, 3, 3, 3, 2, 2, 1, 0}, {silu}, {relu}},         // partial block, images
      {{1, 48, 14, 14, 14, 14, 5, 5, 1, 1, 2, 2}, {silu}, {clip}},     // chunks of 32 and 16
      {{1, 32, 15, 13, 8, 7, 5, 5, 2, 2, 2, 2}, {}, {affine, relu}},
      {{1, 16, 18, 19, 9, 10, 5, 5, 2, 2, 2, 2}, {silu}, {}},          // 5x5 groups of 8 (AVX2), stride 2
      {{1, 16, 7, 7, 3, 3, 5, 5, 1, 1, 0, 0}, {}, {relu}},             // 5x5, 3 outputs a row
      {{1, 40, 6, 6, 6, 6, 3, 3, 1, 1, 1, 1}, {silu}, {}},             // a chunk of 8 channels
      {{1, 64, 4, 30, 4, 30, 3, 3, 1, 1, 1, 1}, {}, {relu}},
      {{1, 32, 7, 3, 7, 3, 3, 3, 1, 1, 1, 1}, {silu}, {}},             // 3 outputs a row
      {{1, 16, 5, 5, 1, 1, 5, 5, 1, 1, 0, 0}, {}, {}},                 // 1 output
      {{1, 3, 6, 6, 6, 5, 2, 3, 1, 1, 1, 0}, {silu}, {}},              // generic kernel
      {{1, 17, 5, 5, 2, 2, 7, 7, 3, 3, 3, 3}, {}, {relu}},             // 7x7, stride 3
      {{1, 16, 6, 6, 6, 6, 1, 1, 1, 1, 0, 0}, {silu}, {}},             // 1x1
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3, 3);
  for (size_t i = 0; i < cases.size(); ++i) {
    const DepthwiseShape& s = cases[i].s;
    std::vector<float> w(s.channels * s.kh * s.kw), bias(s.channels);
    for (float& v : w) v = u(rng);
    for (float& v : bias) v = u(rng);
    for (ChannelLayout layout : {ChannelLayout::kLast, ChannelLayout::kBlocked16}) {
      if (layout == ChannelLayout::kBlocked16 && s.channels % 16 != 0) continue;
      SCOPED_TRACE("case " + std::to_string(i) + (layout == ChannelLayout::kLast ? ", channels-last" : ", blocked"));
      DepthwiseConv c{.shape = s, .layout = layout, .prologue = cases[i].prologue, .epilogue = cases[i].epilogue};
      pack_depthwise(c, w.data(), bias.data());
      const int64_t C = s.channels;
      std::vector<float> x(s.batch * C * s.h * s.w);
      for (float& v : x) v = u(rng);
      const size_t out_size = static_cast<size_t>(s.batch * C * s.out_h * s.out_w);
      std::vector<float> y(out_size, 42.0f), want(out_size);
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t ch = 0; ch < C; ++ch)
          for (int64_t oh = 0; oh < s.out_h; ++oh)
            for (int64_t ow = 0; ow < s.out_w; ++ow) {
              double acc = bias[ch];
              for (int64_t a = 0; a < s.kh; ++a)
                for (int64_t b = 0; b < s.kw; ++b) {
                  const int64_t ih = oh * s.stride_h - s.pad_top + a, iw = ow * s.stride_w - s.pad_left + b;
                  if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                  const double v = plain_ops(c.prologue, x[offset(layout, C, s.h, s.w, n, ch, ih, iw)]);
                  acc += v * w[(ch * s.kh + a) * s.kw + b];
                }
              want[offset(layout, C, s.out_h, s.out_w, n, ch, oh, ow)] = static_cast<float>(plain_ops(c.epilogue, acc));
            }
      // The channels' means over the pixels, as a GlobalAveragePool of y.
      std::vector<float> means(s.batch * C, 42.0f), want_means(s.batch * C);
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t ch = 0; ch < C; ++ch) {
          double sum = 0;
          for (int64_t oh = 0; oh < s.out_h; ++oh)
            for (int64_t ow = 0; ow < s.out_w; ++ow) sum += want[offset(layout, C, s.out_h, s.out_w, n, ch, oh, ow)];
          want_means[n * C + ch] = static_cast<float>(sum / static_cast<double>(s.out_h * s.out_w));
        }
      std::vector<float> partials(depthwise_partials(c), 42.0f);
      depthwise_conv(c, x.data(), y.data(), means.data(), partials.data());
      EXPECT_TRUE(floats_near(y.data(), want.data(), static_cast<int64_t>(out_size), 64, 2e-5f));
      EXPECT_TRUE(floats_near(means.data(), want_means.data(), s.batch * C, 64, 2e-5f));
      std::fill(y.begin(), y.end(), 42.0f);  // without the means, the same result
      depthwise_conv(c, x.data(), y.data());
      EXPECT_TRUE(floats_near(y.data(), want.data(), static_cast<int64_t>(out_size), 64, 2e-5f));
    }
  }
}

KILN_INSTANTIATE_FOR_ISAS(DepthwiseConvTest);

}  // namespace
}  // namespace kiln::cpu
