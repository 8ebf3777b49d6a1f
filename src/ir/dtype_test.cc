#include "ir/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

TEST(DType, HalfRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.1f}) {
    EXPECT_EQ(half_to_float(float_to_half(f)), half_to_float(float_to_half(half_to_float(float_to_half(f)))));
  }
  EXPECT_EQ(half_to_float(float_to_half(1.0f)), 1.0f);
  EXPECT_EQ(half_to_float(float_to_half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(70000.0f))));
  EXPECT_EQ(half_to_float(float_to_half(5.9604645e-08f)), 5.9604645e-08f);  // smallest subnormal
  EXPECT_NEAR(half_to_float(float_to_half(0.1f)), 0.1f, 1e-4);
}

TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.0f)), 1.0f);
  EXPECT_EQ(float_to_bfloat16(1.00390625f), 0x3f80);  // exactly halfway: to even
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(NAN))));
}

TEST(DType, Float8E4M3FN) {
  EXPECT_EQ(float8_to_float(DataType::kFloat8E4M3FN, 0x7e), 448.0f);
  EXPECT_TRUE(std::isnan(float8_to_float(DataType::kFloat8E4M3FN, 0x7f)));
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FN, 1000.0f, true), 0x7e);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FN, 1000.0f, false), 0x7f);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FN, -1.0f), 0xb8);
  for (int c = 0; c < 0x7f; ++c)  // every finite code round-trips
    EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FN, float8_to_float(DataType::kFloat8E4M3FN, c)), c);
}

TEST(DType, Float8E5M2AndFnuz) {
  EXPECT_EQ(float8_to_float(DataType::kFloat8E5M2, 0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(float8_to_float(DataType::kFloat8E5M2, 0x7c)));
  EXPECT_TRUE(std::isnan(float8_to_float(DataType::kFloat8E4M3FNUZ, 0x80)));
  EXPECT_EQ(float8_to_float(DataType::kFloat8E4M3FNUZ, 0x7f), 240.0f);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FNUZ, -0.0f), 0);
}

TEST(DType, Float4E2M1) {
  const float values[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(float8_to_float(DataType::kFloat4E2M1, c), values[c]);
    EXPECT_EQ(float8_to_float(DataType::kFloat4E2M1, c | 8), -values[c]);
  }
  EXPECT_EQ(float_to_float8(DataType::kFloat4E2M1, 100.0f), 7);
  EXPECT_EQ(float_to_float8(DataType::kFloat4E2M1, 2.5f), 4);  // tie to even code (2.0)
}

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(dtype_name(DataType::kFloat8E4M3FN), "float8e4m3fn");
  EXPECT_EQ(dtype_size(DataType::kInt4), 1u);
  EXPECT_EQ(dtype_file_bits(DataType::kInt4), 4);
  EXPECT_FALSE(is_valid_dtype(0));
  EXPECT_FALSE(is_valid_dtype(99));
}

}  // namespace
}  // namespace kiln
