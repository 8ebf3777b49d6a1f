// Transpose, Concat, Split, Slice and Gather against the reference kernels, byte for byte, for
// element sizes 1, 2, 4 and 8.
#include "engine/cpu/layout.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/cpu/reference_op.h"
#include "engine/cpu/test_support.h"
#include "support/error.h"

namespace kiln::cpu {
namespace {

// A tensor of `dtype` with random bytes (every dtype tested here is a plain number type).
Tensor random_bytes(DataType dtype, std::vector<int64_t> dims, std::mt19937& rng) {
  Tensor t(dtype, std::move(dims));
  auto* p = static_cast<unsigned char*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<unsigned char>(rng());
  return t;
}

::testing::AssertionResult same_bytes(const Tensor& got, const Tensor& want) {
  if (got.dims() != want.dims())
    return ::testing::AssertionFailure()
           << "dims " << dims_to_string(got.dims()) << ", want " << dims_to_string(want.dims());
  if (std::memcmp(got.raw(), want.raw(), want.nbytes()) != 0)
    return ::testing::AssertionFailure() << "bytes differ";
  return ::testing::AssertionSuccess();
}

const DataType kTypes[] = {DataType::kUInt8, DataType::kInt16, DataType::kFloat, DataType::kInt64};

class CpuLayout : public IsaTest {};

TEST_P(CpuLayout, TransposeMatchesTheReference) {
  struct Case {
    std::vector<int64_t> dims, perm;
  };
  const Case cases[] = {
      {{17, 33}, {1, 0}},                 // 2-D, odd sizes
      {{64, 100}, {1, 0}},
      {{300, 513}, {1, 0}},               // several cache blocks, threaded
      {{2, 3, 5, 7}, {0, 2, 3, 1}},       // NCHW -> NHWC
      {{2, 5, 7, 3}, {0, 3, 1, 2}},       // NHWC -> NCHW
      {{1, 64, 56, 56}, {0, 2, 3, 1}},
      {{2, 3, 4, 5}, {3, 1, 0, 2}},       // general
      {{2, 3, 4, 5}, {1, 0, 2, 3}},       // last axes stay: rows move whole
      {{4, 3, 2}, {1, 0, 2}},
      {{3, 4, 5}, {2, 1, 0}},
      {{2, 3, 4}, {0, 1, 2}},             // identity
      {{1, 5, 1, 7}, {3, 2, 1, 0}},       // axes of size 1
      {{0, 3}, {1, 0}},                   // zero-size
      {{5}, {0}},
      {{}, {}},
      {{8, 12, 64}, {1, 0, 2}},           // BERT's heads split: [seq, heads, dim] -> [heads, seq, dim]
      {{1, 12, 128, 64}, {0, 1, 3, 2}},   // K^T per head
  };
  std::mt19937 rng(1);
  for (const Case& c : cases) {
    for (DataType dt : kTypes) {
      SCOPED_TRACE(dims_to_string(c.dims) + " perm " + dims_to_string(c.perm) + " " +
                   std::string(dtype_name(dt)));
      const Tensor x = random_bytes(dt, c.dims, rng);
      const Tensor want = ReferenceOp("Transpose").attr("perm", c.perm).run1({x});
      Tensor y(dt, want.dims());
      transpose(x.raw(), c.dims, c.perm, y.raw(), dtype_size(dt));
      EXPECT_TRUE(same_bytes(y, want));
    }
  }
}

TEST_P(CpuLayout, TransposeRandomShapesAndPermutations) {
  std::mt19937 rng(5);
  for (int t = 0; t < 200; ++t) {
    const std::vector<int64_t> dims = random_dims(rng, 5, 9);
    std::vector<int64_t> perm(dims.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::shuffle(perm.begin(), perm.end(), rng);
    const DataType dt = kTypes[rng() % 4];
    SCOPED_TRACE(dims_to_string(dims) + " perm " + dims_to_string(perm) + " " +
                 std::string(dtype_name(dt)));
    const Tensor x = random_bytes(dt, dims, rng);
    const Tensor want = ReferenceOp("Transpose").attr("perm", perm).run1({x});
    Tensor y(dt, want.dims());
    transpose(x.raw(), dims, perm, y.raw(), dtype_size(dt));
    ASSERT_TRUE(same_bytes(y, want));
  }
}

TEST_P(CpuLayout, TransposeRejectsABadPermutation) {
  const float x[6] = {};
  float y[6];
  const std::vector<int64_t> dims = {2, 3};
  EXPECT_THROW(transpose(x, dims, std::vector<int64_t>{0, 0}, y, 4), Error);
  EXPECT_THROW(transpose(x, dims, std::vector<int64_t>{1}, y, 4), Error);
}

TEST_P(CpuLayout, ConcatAndSplitMatchTheReference) {
  struct Case {
    std::vector<std::vector<int64_t>> parts;
    int64_t axis;
  };
  const Case cases[] = {
      {{{2, 3, 4}, {2, 5, 4}, {2, 0, 4}}, 1},
      {{{1, 7}, {3, 7}}, 0},
      {{{4, 1}, {4, 2}, {4, 3}}, 1},
      {{{2, 2, 17}, {2, 2, 15}}, 2},
      {{{1, 128, 768}, {1, 128, 768}}, 1},  // large, threaded
      {{{0, 5}, {0, 5}}, 1},
  };
  std::mt19937 rng(2);
  for (const Case& c : cases) {
    for (DataType dt : kTypes) {
      SCOPED_TRACE("axis " + std::to_string(c.axis) + " " + std::string(dtype_name(dt)));
      std::vector<Tensor> xs;
      std::vector<const void*> ptrs;
      std::vector<int64_t> lens;
      for (const auto& d : c.parts) {
        xs.push_back(random_bytes(dt, d, rng));
        ptrs.push_back(xs.back().raw());
        lens.push_back(d[c.axis]);
      }
      int64_t outer = 1, inner = 1;
      const auto& d0 = c.parts[0];
      for (int64_t d = 0; d < c.axis; ++d) outer *= d0[d];
      for (size_t d = c.axis + 1; d < d0.size(); ++d) inner *= d0[d];
      const Tensor want = ReferenceOp("Concat").attr("axis", c.axis).run1(xs);
      Tensor y(dt, want.dims());
      concat(ptrs, lens, outer, inner, y.raw(), dtype_size(dt));
      EXPECT_TRUE(same_bytes(y, want));
      // Split gives the parts back, as the reference Split does.
      const std::vector<Tensor> want_parts = ReferenceOp("Split", 18)
                                                 .attr("axis", c.axis)
                                                 .run({want, Tensor::from_int64s(lens)},
                                                      static_cast<int>(lens.size()));
      std::vector<Tensor> parts;
      std::vector<void*> out_ptrs;
      for (const auto& d : c.parts) {
        parts.emplace_back(dt, d);
        out_ptrs.push_back(parts.back().raw());
      }
      split(y.raw(), out_ptrs, lens, outer, inner, dtype_size(dt));
      for (size_t k = 0; k < parts.size(); ++k) {
        EXPECT_TRUE(same_bytes(parts[k], want_parts[k])) << "part " << k;
        EXPECT_TRUE(same_bytes(parts[k], xs[k])) << "part " << k;
      }
    }
  }
}

// Channel concats of channels-last and channel-blocked pieces into either layout, against
// element-by-element indexing; a piece already where it belongs in a blocked result stays.
TEST_P(CpuLayout, ChannelConcatOfMixedLayouts) {
  struct Piece {
    int64_t channels, block;
  };
  const std::vector<Piece> pieces = {{16, 0}, {32, 16}, {48, 0}, {16, 16}};
  const int64_t batch = 2, pixels = 7, total = 112;
  // the float at channel c, pixel q, image b of a [batch, channels, pixels] tensor in a layout
  const auto at = [&](int64_t channels, int64_t block, int64_t b, int64_t c, int64_t q) {
    return block == 0 ? (b * pixels + q) * channels + c
                      : ((b * channels + c / block * block) * pixels + q * block + c % block);
  };
  std::mt19937 rng(3);
  std::vector<std::vector<float>> data;
  std::vector<ChannelPiece> cp;
  for (const Piece& p : pieces) {
    data.emplace_back(batch * p.channels * pixels);
    for (float& v : data.back()) v = static_cast<float>(rng() % 1000);
    cp.push_back({data.back().data(), p.channels, p.block});
  }
  for (int64_t block : {int64_t{0}, int64_t{16}}) {
    SCOPED_TRACE("block " + std::to_string(block));
    std::vector<float> y(batch * total * pixels, -1.f);
    concat_channels(cp, batch, pixels, block, y.data());
    int64_t c0 = 0;
    for (size_t k = 0; k < pieces.size(); ++k) {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t c = 0; c < pieces[k].channels; ++c)
          for (int64_t q = 0; q < pixels; ++q)
            ASSERT_EQ(y[at(total, block, b, c0 + c, q)], data[k][at(pieces[k].channels, pieces[k].block, b, c, q)])
                << "piece " << k << " image " << b << " channel " << c << " pixel " << q;
      c0 += pieces[k].channels;
    }
  }
  // one image, the second piece inside the result: the others are copied around it
  std::vector<float> y(total * pixels, -1.f);
  std::copy(data[1].begin(), data[1].begin() + 32 * pixels, y.begin() + 16 * pixels);
  std::vector<ChannelPiece> placed = cp;
  placed[1].data = y.data() + 16 * pixels;
  concat_channels(placed, 1, pixels, 16, y.data());
  for (int64_t c = 0; c < 32; ++c)
    for (int64_t q = 0; q < pixels; ++q)
      EXPECT_EQ(y[at(total, 16, 0, 16 + c, q)], data[1][at(32, 16, 0, c, q)]);
  EXPECT_EQ(y[at(total, 16, 0, 0, 3)], data[0][at(16, 0, 0, 0, 3)]);
}

TEST_P(CpuLayout, SliceMatchesTheReference) {
  struct Case {
    std::vector<int64_t> dims, starts, ends, steps;
  };
  // starts are in range here (the kernel takes resolved starts); ends may be anything ONNX allows.
  const Case cases[] = {
      {{5, 7, 9}, {1, 6, 0}, {4, -8, 9}, {1, -2, 3}},
      {{10, 20}, {2, 0}, {8, 20}, {1, 1}},        // rows: one contiguous run per row block
      {{10, 20}, {0, 3}, {10, 17}, {1, 1}},
      {{4, 6, 8}, {0, 0, 1}, {4, 6, 8}, {1, 1, 2}},
      {{4, 6, 8}, {3, 5, 7}, {-100, -100, -100}, {-1, -1, -1}},  // reversed
      {{4, 6, 8}, {1, 0, 0}, {3, 6, 8}, {1, 1, 1}},   // trailing axes whole
      {{1, 128, 768}, {0, 0, 0}, {1, 1, 768}, {1, 1, 1}},  // BERT's [CLS] token
      {{6}, {5}, {0}, {-2}},
      {{3, 4}, {1, 1}, {1, 3}, {1, 1}},  // empty result
  };
  std::mt19937 rng(3);
  for (const Case& c : cases) {
    for (DataType dt : kTypes) {
      SCOPED_TRACE(dims_to_string(c.dims) + " starts " + dims_to_string(c.starts) + " steps " +
                   dims_to_string(c.steps) + " " + std::string(dtype_name(dt)));
      const Tensor x = random_bytes(dt, c.dims, rng);
      std::vector<int64_t> axes(c.dims.size());
      for (size_t d = 0; d < axes.size(); ++d) axes[d] = static_cast<int64_t>(d);
      const Tensor want = ReferenceOp("Slice").run1(
          {x, Tensor::from_int64s(c.starts), Tensor::from_int64s(c.ends),
           Tensor::from_int64s(axes), Tensor::from_int64s(c.steps)});
      Tensor y(dt, want.dims());
      slice(x.raw(), c.dims, c.starts, c.steps, y.raw(), want.dims(), dtype_size(dt));
      EXPECT_TRUE(same_bytes(y, want));
    }
  }
}

TEST_P(CpuLayout, SliceRandomStartsEndsAndSteps) {
  std::mt19937 rng(6);
  for (int t = 0; t < 300; ++t) {
    std::vector<int64_t> dims = random_dims(rng, 4, 9);
    if (dims.empty()) dims.push_back(5);
    std::vector<int64_t> starts, ends, steps, axes;
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t n = dims[d];
      int64_t step = 1 + static_cast<int64_t>(rng() % 3);
      if (rng() % 3 == 0) step = -step;
      if (rng() % 3 == 0) step = 1;  // whole trailing axes now and then
      starts.push_back(n > 0 ? static_cast<int64_t>(rng() % n) : 0);
      if (step == 1 && rng() % 2) starts.back() = 0;
      ends.push_back(static_cast<int64_t>(rng() % (2 * n + 5)) - n - 2);
      if (rng() % 3 == 0) ends.back() = step > 0 ? n : -n - 1;
      steps.push_back(step);
      axes.push_back(static_cast<int64_t>(d));
    }
    const DataType dt = kTypes[rng() % 4];
    SCOPED_TRACE(dims_to_string(dims) + " starts " + dims_to_string(starts) + " ends " +
                 dims_to_string(ends) + " steps " + dims_to_string(steps));
    const Tensor x = random_bytes(dt, dims, rng);
    const Tensor want = ReferenceOp("Slice").run1(
        {x, Tensor::from_int64s(starts), Tensor::from_int64s(ends), Tensor::from_int64s(axes),
         Tensor::from_int64s(steps)});
    Tensor y(dt, want.dims());
    slice(x.raw(), dims, starts, steps, y.raw(), want.dims(), dtype_size(dt));
    ASSERT_TRUE(same_bytes(y, want));
  }
}

TEST_P(CpuLayout, GatherMatchesTheReference) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis;
    std::vector<int64_t> indices;
  };
  const Case cases[] = {
      {{1000, 64}, 0, {0, 999, -1, 5, 5, -1000}},  // embedding lookup, negative indices
      {{3, 10, 4}, 1, {9, 0, -3}},
      {{4, 7}, 1, {6}},
      {{5, 3}, 0, {}},
      {{30522, 24}, 0, {101, 2023, 2003, 102, 30521, 0, 0, 0}},  // a BERT-sized vocabulary
  };
  std::mt19937 rng(4);
  for (const Case& c : cases) {
    for (DataType dt : kTypes) {
      SCOPED_TRACE(dims_to_string(c.dims) + " axis " + std::to_string(c.axis) + " " +
                   std::string(dtype_name(dt)));
      const Tensor x = random_bytes(dt, c.dims, rng);
      const Tensor idx = Tensor::from_int64s(c.indices);
      const Tensor want = ReferenceOp("Gather").attr("axis", c.axis).run1({x, idx});
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < c.axis; ++d) outer *= c.dims[d];
      for (size_t d = c.axis + 1; d < c.dims.size(); ++d) inner *= c.dims[d];
      const int64_t n = c.dims[c.axis], count = static_cast<int64_t>(c.indices.size());
      Tensor y(dt, want.dims());
      gather(x.raw(), outer, n, inner, c.indices.data(), count, y.raw(), dtype_size(dt));
      EXPECT_TRUE(same_bytes(y, want));
      std::vector<int32_t> idx32(c.indices.begin(), c.indices.end());
      Tensor y32(dt, want.dims());
      gather(x.raw(), outer, n, inner, idx32.data(), count, y32.raw(), dtype_size(dt));
      EXPECT_TRUE(same_bytes(y32, want));
    }
  }
}

TEST_P(CpuLayout, GatherRejectsIndicesOutOfRange) {
  const float x[6] = {};
  float y[4] = {};
  for (int64_t bad : {3, -4}) {
    const int64_t idx[2] = {0, bad};
    try {
      gather(x, 1, 3, 2, idx, 2, y, 4);
      FAIL() << "index " << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    }
  }
}
// The normalizing concat (a BatchNormalization and maybe a Relu applied as the pieces are copied)
// in blocks of 16 and of 8 channels (oneDNN's nChw8c on AVX2; on AVX-512 a block of 8 is part of
// a register): each value is max(0, a[c] x + b[c]) of the piece's (one fused multiply-add on the
// vector ISAs, a multiply and an add on the scalar one: within a rounding of either).
TEST_P(CpuLayout, NormalizingConcatInBlocksOf16And8) {
  const int64_t batch = 2, pixels = 5;
  for (int64_t block : {int64_t{16}, int64_t{8}})
    for (bool relu : {true, false}) {
      SCOPED_TRACE(fmt::format("block {}{}", block, relu ? ", relu" : ""));
      const std::vector<int64_t> channels = {block, 3 * block, 2 * block};
      const int64_t total = 6 * block;
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> u(-2.f, 2.f);
      std::vector<std::vector<float>> data;
      std::vector<const float*> xs;
      for (int64_t c : channels) {
        data.emplace_back(batch * c * pixels);
        for (float& v : data.back()) v = u(rng);
        xs.push_back(data.back().data());
      }
      std::vector<float> a(total), b(total), y(batch * total * pixels, -7.f);
      for (int64_t c = 0; c < total; ++c) a[c] = u(rng), b[c] = u(rng);
      concat_blocks_affine(xs, channels, batch, pixels, block, a.data(), b.data(), relu, y.data());
      int64_t c0 = 0;
      for (size_t k = 0; k < channels.size(); ++k) {
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t c = 0; c < channels[k]; ++c)
            for (int64_t q = 0; q < pixels; ++q) {
              const int64_t C = c0 + c;
              const float x = data[k][((n * channels[k] + c / block * block) * pixels + q * block + c % block)];
              const float want = relu ? std::max(0.f, std::fma(x, a[C], b[C])) : std::fma(x, a[C], b[C]);
              const float tol = 1e-6f * (std::abs(x * a[C]) + std::abs(b[C]));
              ASSERT_NEAR(y[(n * total + C / block * block) * pixels + q * block + C % block], want, tol)
                  << "piece " << k << " image " << n << " channel " << c << " pixel " << q;
            }
        c0 += channels[k];
      }
    }
}


KILN_INSTANTIATE_FOR_ISAS(CpuLayout);

}  // namespace
}  // namespace kiln::cpu
