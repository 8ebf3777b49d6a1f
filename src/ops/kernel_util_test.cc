// The element type kinds of kernel_util.h: each kiln scalar type in exactly one kind.
#include "ops/kernel_util.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln {
namespace {

// The sub-byte integers convert to int64 and so implicitly to float: a classification by
// convertibility called them float-like and made is_small_int_v false for every type.
static_assert(std::is_convertible_v<Int4, float>);
static_assert(!is_float_like_v<Int4> && !is_float_like_v<UInt4> && !is_float_like_v<Int2> &&
              !is_float_like_v<UInt2>);
static_assert(is_small_int_v<Int4> && is_small_int_v<UInt4> && is_small_int_v<Int2> &&
              is_small_int_v<UInt2>);
static_assert(small_int_traits<Int4>::bits == 4 && small_int_traits<Int4>::is_signed);
static_assert(small_int_traits<UInt2>::bits == 2 && !small_int_traits<UInt2>::is_signed);
static_assert(std::is_same_v<compute_t<Int4>, int64_t> && std::is_same_v<compute_t<UInt2>, int64_t>);

static_assert(is_float_like_v<float> && is_float_like_v<double> && is_float_like_v<Half> &&
              is_float_like_v<BFloat16> && is_float_like_v<Float8E4M3FN> &&
              is_float_like_v<Float8E8M0> && is_float_like_v<Float4E2M1>);
static_assert(is_half_v<Half> && is_half_v<BFloat16> && !is_half_v<float>);
static_assert(is_small_float_v<Float8E5M2FNUZ> && !is_small_float_v<Half>);
static_assert(std::is_same_v<compute_t<Half>, float> && std::is_same_v<compute_t<Float8E5M2>, float>);
static_assert(std::is_same_v<compute_t<double>, double> && std::is_same_v<compute_t<float>, float>);

static_assert(!is_float_like_v<int64_t> && !is_small_int_v<int64_t> && !is_small_int_v<uint8_t>);
static_assert(!is_float_like_v<bool> && !is_small_int_v<bool>);
static_assert(!is_float_like_v<std::string> && !is_small_int_v<std::string>);
static_assert(!is_float_like_v<std::complex<float>> && is_complex_v<std::complex<double>>);
static_assert(std::is_same_v<compute_t<int32_t>, int32_t>);

// Every type kiln holds tensors of is in at most one of the kinds.
template <typename... Ts>
constexpr bool kinds_are_disjoint() {
  return ((int{is_float_like_v<Ts>} + int{is_small_int_v<Ts>} + int{is_complex_v<Ts>} <= 1) && ...);
}
static_assert(kinds_are_disjoint<KILN_ALL_TYPES>());

TEST(KernelUtil, SubByteIntsComputeAsInt64) {
  const Int4 x(-7);
  EXPECT_EQ(static_cast<compute_t<Int4>>(x), -7);
  const UInt4 y(15);
  EXPECT_EQ(static_cast<compute_t<UInt4>>(y) + 1, 16);  // no float rounding, no wrap in storage
}

}  // namespace
}  // namespace kiln
