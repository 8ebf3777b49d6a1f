#include "ir/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace kiln {
namespace {

// Doubles written into (or read out as) integer types saturate: the values come from files, and a
// static_cast out of range is undefined (a fuzz finding: a float attribute of 1e38 moved into an
// int64 input, tests/fuzz/regressions/float-attribute-to-int64-ub.onnx).
TEST(Tensor, DoublesSaturateIntoIntegerTypes) {
  Tensor t(DataType::kInt64, {4});
  t.set_f64(0, 1e38);
  t.set_f64(1, -1e38);
  t.set_f64(2, std::numeric_limits<double>::quiet_NaN());
  t.set_f64(3, -7.9);
  EXPECT_EQ(t.data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(t.data<int64_t>()[1], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(t.data<int64_t>()[2], 0);
  EXPECT_EQ(t.data<int64_t>()[3], -7);  // in range: truncated, as before

  Tensor u(DataType::kUInt8, {2});
  u.set_f64(0, -5);
  u.set_f64(1, 300);
  EXPECT_EQ(u.data<uint8_t>()[0], 0);
  EXPECT_EQ(u.data<uint8_t>()[1], 255);

  // The 4-bit integers too: they convert to float, and an infinite float attribute once went
  // through an unchecked float -> int64 conversion into one (a fuzz finding,
  // tests/fuzz/regressions/inf-attribute-to-int4-ub.onnx; UBSan names it).
  for (DataType small : {DataType::kInt4, DataType::kUInt4}) {
    Tensor q(small, {3});
    q.set_f64(0, std::numeric_limits<double>::infinity());
    q.set_f64(1, -std::numeric_limits<double>::infinity());
    q.set_f64(2, std::numeric_limits<double>::quiet_NaN());
  }

  Tensor f(DataType::kFloat, {1});
  f.set_f64(0, 3e38);
  EXPECT_EQ(f.get_i64(0), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace kiln
