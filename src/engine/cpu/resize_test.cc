// Resize of H and W against the reference Resize (which interpolates in double), every
// coordinate mode and nearest rounding, scales and sizes, up and down.
#include "engine/cpu/resize.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/cpu/layout.h"
#include "engine/cpu/reference_op.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

struct ResizeCase {
  std::vector<int64_t> dims;  // N, C, H, W
  std::string mode, coord, nearest;
  std::vector<float> scales;  // H, W; empty: sizes instead
  std::vector<int64_t> sizes;
};

// Row-major and channels-last. (Linear blends through the active ISA's lerp.)
TEST(CpuResize, MatchesTheReference) {
  const ResizeCase cases[] = {
      {{1, 3, 13, 20}, "nearest", "asymmetric", "floor", {2, 2}, {}},  // YOLO's upsample
      {{2, 3, 17, 15}, "nearest", "half_pixel", "round_prefer_floor", {1.7f, 0.6f}, {}},
      {{1, 2, 9, 11}, "nearest", "half_pixel", "round_prefer_ceil", {}, {20, 5}},
      {{1, 2, 9, 11}, "nearest", "tf_half_pixel_for_nn", "ceil", {3, 1}, {}},
      {{1, 2, 8, 8}, "nearest", "asymmetric", "simple", {0.5f, 2}, {}},
      {{1, 2, 6, 7}, "nearest", "align_corners", "round_prefer_floor", {}, {11, 3}},
      {{1, 3, 13, 20}, "linear", "half_pixel", "", {2, 2}, {}},
      {{2, 3, 17, 15}, "linear", "pytorch_half_pixel", "", {}, {8, 7}},
      {{1, 2, 9, 11}, "linear", "align_corners", "", {}, {20, 31}},
      {{1, 2, 9, 11}, "linear", "asymmetric", "", {1.5f, 0.75f}, {}},
      {{1, 2, 9, 11}, "linear", "half_pixel_symmetric", "", {2.5f, 1}, {}},
      {{1, 1, 1, 5}, "linear", "pytorch_half_pixel", "", {}, {1, 9}},
      {{1, 4, 64, 64}, "linear", "half_pixel", "", {2, 2}, {}},  // threaded
      {{1, 96, 20, 20}, "nearest", "asymmetric", "floor", {2, 2}, {}},  // PP-OCR's FPN, threaded
      {{2, 17, 6, 9}, "nearest", "asymmetric", "floor", {8, 4}, {}},
      {{1, 33, 7, 5}, "linear", "align_corners", "", {}, {15, 9}},
  };
  std::mt19937 rng(1);
  for (const ResizeCase& c : cases) {
    SCOPED_TRACE(dims_to_string(c.dims) + " " + c.mode + " " + c.coord + " " + c.nearest);
    const Tensor x = random_tensor(c.dims, rng);
    ReferenceOp ref("Resize", 19);
    ref.attr("mode", c.mode).attr("coordinate_transformation_mode", c.coord);
    if (!c.nearest.empty()) ref.attr("nearest_mode", c.nearest);
    Tensor scales, sizes;
    ResizeOptions o;
    o.mode = *parse_resize_mode(c.mode);
    o.coord = *parse_resize_coord(c.coord);
    if (!c.nearest.empty()) o.nearest = *parse_nearest_round(c.nearest);
    if (!c.scales.empty()) {
      scales = Tensor(DataType::kFloat, {4});
      const float s[4] = {1, 1, c.scales[0], c.scales[1]};
      std::copy(s, s + 4, scales.data<float>());
      o.scale_h = c.scales[0];
      o.scale_w = c.scales[1];
    } else {
      sizes = Tensor::from_int64s(std::vector<int64_t>{c.dims[0], c.dims[1], c.sizes[0], c.sizes[1]});
      o.scale_h = static_cast<double>(c.sizes[0]) / static_cast<double>(c.dims[2]);
      o.scale_w = static_cast<double>(c.sizes[1]) / static_cast<double>(c.dims[3]);
    }
    const Tensor want = ref.run1({x, Tensor(), scales, sizes});
    // Nearest copies; linear blends in float what the reference blends in double.
    const int64_t ulps = c.mode == "nearest" ? 0 : 4;
    const float tol = c.mode == "nearest" ? 0 : 2e-6f;
    Tensor y(DataType::kFloat, want.dims());
    resize_2d(x.data<float>(), c.dims[0] * c.dims[1], c.dims[2], c.dims[3], y.data<float>(),
              want.dim(2), want.dim(3), o);
    EXPECT_TRUE(tensors_near(y, want, ulps, tol));
    // Channels-last: N planes of [H, W, C].
    const int64_t perm_to_last[] = {0, 2, 3, 1}, perm_back[] = {0, 3, 1, 2};
    Tensor x_last(DataType::kFloat, {c.dims[0], c.dims[2], c.dims[3], c.dims[1]});
    transpose(x.raw(), x.dims(), perm_to_last, x_last.raw(), sizeof(float));
    Tensor y_last(DataType::kFloat, {want.dim(0), want.dim(2), want.dim(3), want.dim(1)});
    resize_2d(x_last.data<float>(), c.dims[0], c.dims[2], c.dims[3], y_last.data<float>(),
              want.dim(2), want.dim(3), o, c.dims[1]);
    Tensor y_back(DataType::kFloat, want.dims());
    transpose(y_last.raw(), y_last.dims(), perm_back, y_back.raw(), sizeof(float));
    EXPECT_TRUE(tensors_near(y_back, want, ulps, tol)) << "channels-last";
  }
}

TEST(CpuResizeOptions, ParsesOnlyWhatItRuns) {
  EXPECT_EQ(parse_resize_mode("bilinear"), ResizeMode::kLinear);
  EXPECT_FALSE(parse_resize_mode("cubic"));
  EXPECT_FALSE(parse_resize_coord("tf_crop_and_resize"));
  EXPECT_EQ(parse_nearest_round("simple"), NearestRound::kSimple);
  EXPECT_FALSE(parse_nearest_round("nearest"));
}

}  // namespace
}  // namespace kiln::cpu
