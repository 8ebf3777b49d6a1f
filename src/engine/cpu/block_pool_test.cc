// block_pool against the pools computed plainly, on every ISA: blocks of 8 and 16 channels (and
// a channel count that leaves the last block part padding), kernels, strides, pads, ceil_mode's
// overhang, count_include_pad, one thread and the machine's.
#include "engine/cpu/block_pool.h"

#include <omp.h>

#include <cmath>
#include <random>

#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

class BlockPoolTest : public IsaTest {};

// x[n][cb][i][j][c] of channel cb * block + c.
float at(const BlockPoolShape& s, const std::vector<float>& x, int64_t n, int64_t ch, int64_t i, int64_t j) {
  return x[static_cast<size_t>((((n * s.blocks() + ch / s.block) * s.h + i) * s.w + j) * s.block + ch % s.block)];
}

TEST_P(BlockPoolTest, MatchesThePlainPool) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-5.f, 5.f);
  struct Geometry {
    int64_t kh, kw, sh, sw, pt, pl, out_h, out_w;  // out: of an 11 x 12 input
  };
  const Geometry geometries[] = {
      {3, 3, 2, 2, 0, 0, 5, 5},  // Inception's MaxPool
      {3, 3, 1, 1, 1, 1, 11, 12},  // its AveragePool (pads 1)
      {3, 3, 2, 2, 0, 0, 6, 6},  // ceil_mode: the last windows hang over the end
      {2, 3, 2, 2, 1, 1, 6, 6},
  };
  for (int64_t block : {int64_t{8}, int64_t{16}})
    for (int64_t channels : {block, int64_t{20}})
      for (const Geometry& g : geometries)
        for (int kind = 0; kind < 3; ++kind)  // max, mean of the taps, mean of the window
          for (int threads : {1, 2}) {
            BlockPoolShape s{.batch = 2, .channels = channels, .block = block, .h = 11, .w = 12,
                             .out_h = g.out_h, .out_w = g.out_w, .kh = g.kh, .kw = g.kw,
                             .stride_h = g.sh, .stride_w = g.sw, .pad_top = g.pt, .pad_left = g.pl,
                             .max = kind == 0, .include_pad = kind == 2};
            if (s.include_pad && (g.out_h - 1) * g.sh + g.kh > s.h + 2 * g.pt) continue;  // not taken
            SCOPED_TRACE(testing::Message() << "block " << block << " channels " << channels << " k " << g.kh
                                            << "x" << g.kw << " s " << g.sh << " out " << g.out_h << "x"
                                            << g.out_w << " kind " << kind << " threads " << threads);
            std::vector<float> x(static_cast<size_t>(s.batch * s.blocks() * s.h * s.w * block));
            for (float& v : x) v = u(rng);
            std::vector<float> y(static_cast<size_t>(s.batch * s.blocks() * s.out_h * s.out_w * block), 99.f);
            const int before = omp_get_max_threads();
            omp_set_num_threads(threads);
            block_pool(s, x.data(), y.data());
            omp_set_num_threads(before);
            for (int64_t n = 0; n < s.batch; ++n)
              for (int64_t ch = 0; ch < channels; ++ch)
                for (int64_t oh = 0; oh < s.out_h; ++oh)
                  for (int64_t ow = 0; ow < s.out_w; ++ow) {
                    double m = -INFINITY, sum = 0;
                    int taps = 0;
                    for (int64_t a = 0; a < s.kh; ++a)
                      for (int64_t b = 0; b < s.kw; ++b) {
                        const int64_t i = oh * s.stride_h - s.pad_top + a, j = ow * s.stride_w - s.pad_left + b;
                        if (i < 0 || i >= s.h || j < 0 || j >= s.w) continue;
                        const float v = at(s, x, n, ch, i, j);
                        m = std::max<double>(m, v);
                        sum += v;
                        ++taps;
                      }
                    const double want = s.max ? m : sum / (s.include_pad ? s.kh * s.kw : taps);
                    const BlockPoolShape o{.channels = channels, .block = block, .h = s.out_h, .w = s.out_w};
                    const float got = at(BlockPoolShape{o}, y, n, ch, oh, ow);
                    ASSERT_NEAR(got, want, 1e-5) << "at " << n << ", " << ch << ", " << oh << ", " << ow;
                  }
          }
}

KILN_INSTANTIATE_FOR_ISAS(BlockPoolTest);

}  // namespace
}  // namespace kiln::cpu
