#include "ops/window_geometry.h"

#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace kiln {
namespace {

using op_test::OpNode;

TEST(WindowGeometry, FitAgreesWithTheThrowingForm) {
  OpNode conv("Conv", 2);
  conv.attr_is("strides", {2, 1}).attr_is("pads", {1, 0, 1, 2}).attr_is("dilations", {1, 2});
  const std::vector<int64_t> in = {9, 7}, kernel = {3, 3};
  const auto fit = nn::fit_window(*conv.n, in, kernel);
  ASSERT_TRUE(fit);
  nn::Window w = *nn::read_window(*conv.n, 2, kernel);
  EXPECT_EQ(fit->out, (std::vector<int64_t>{nn::window_out(*conv.n, w, 0, 9, ErrorKind::kBadModel),
                                             nn::window_out(*conv.n, w, 1, 7, ErrorKind::kBadModel)}));
  EXPECT_EQ(fit->out, (std::vector<int64_t>{5, 5}));  // (9+1+1-3)/2+1, (7+0+2-5)/1+1
  EXPECT_EQ(fit->window.pe, (std::vector<int64_t>{1, 2}));
}

TEST(WindowGeometry, SamePadsAreResolved) {
  OpNode pool("MaxPool", 1);
  pool.attr_is("kernel_shape", {3}).attr_is("strides", {2}).attr_s("auto_pad", "SAME_UPPER");
  const auto fit = nn::fit_window(*pool.n, {8}, std::nullopt, true);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->out, (std::vector<int64_t>{4}));
  EXPECT_EQ(fit->window.pb[0] + fit->window.pe[0], 1);
}

TEST(WindowGeometry, WhatTheThrowingFormRefusesFitsNothing) {
  OpNode bad_pads("Conv", 2);
  bad_pads.attr_is("pads", {1, 1, 1});  // 3 values for 2 spatial dims
  EXPECT_FALSE(nn::fit_window(*bad_pads.n, {5, 5}, std::vector<int64_t>{3, 3}));
  EXPECT_THROW(nn::read_window(*bad_pads.n, 2, std::vector<int64_t>{3, 3}), Error);

  OpNode too_small("Conv", 2);  // a 7-wide window on 5 inputs
  EXPECT_FALSE(nn::fit_window(*too_small.n, {5}, std::vector<int64_t>{7}));
  nn::Window w = *nn::read_window(*too_small.n, 1, std::vector<int64_t>{7});
  EXPECT_THROW(nn::window_out(*too_small.n, w, 0, 5, ErrorKind::kBadModel), Error);

  OpNode zero_stride("Conv", 2);
  zero_stride.attr_is("strides", {0});
  EXPECT_FALSE(nn::fit_window(*zero_stride.n, {5}, std::vector<int64_t>{3}));

  OpNode no_kernel("MaxPool", 1);  // no kernel_shape and no weight: not known
  EXPECT_FALSE(nn::fit_window(*no_kernel.n, {5}, std::nullopt, true));
}

}  // namespace
}  // namespace kiln
