// C++ types for the ONNX element types that have no native one, and the type <-> DataType tables.
#pragma once

#include <complex>
#include <cstdint>
#include <string>

#include "ir/dtype.h"

namespace kiln {

struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(float_to_half(f)) {}
  operator float() const { return half_to_float(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(float_to_bfloat16(f)) {}
  operator float() const { return bfloat16_to_float(bits); }
};

// The 8- and 4-bit float kinds, one byte each in memory. Conversion from float saturates.
template <DataType T>
struct SmallFloat {
  uint8_t bits = 0;
  SmallFloat() = default;
  explicit SmallFloat(float f) : bits(float_to_float8(T, f, true)) {}
  operator float() const { return float8_to_float(T, bits); }
};
using Float8E4M3FN = SmallFloat<DataType::kFloat8E4M3FN>;
using Float8E4M3FNUZ = SmallFloat<DataType::kFloat8E4M3FNUZ>;
using Float8E5M2 = SmallFloat<DataType::kFloat8E5M2>;
using Float8E5M2FNUZ = SmallFloat<DataType::kFloat8E5M2FNUZ>;
using Float4E2M1 = SmallFloat<DataType::kFloat4E2M1>;
using Float8E8M0 = SmallFloat<DataType::kFloat8E8M0>;

// Sub-byte integers, one byte each in memory holding the (sign-extended) value.
template <bool Signed, int Bits>
struct SmallInt {
  using Storage = std::conditional_t<Signed, int8_t, uint8_t>;
  Storage v = 0;
  SmallInt() = default;
  explicit SmallInt(int64_t x) : v(static_cast<Storage>(x)) {}
  operator int64_t() const { return v; }
};
using Int4 = SmallInt<true, 4>;
using UInt4 = SmallInt<false, 4>;
using Int2 = SmallInt<true, 2>;
using UInt2 = SmallInt<false, 2>;

template <typename T> struct DataTypeOf;
#define KILN_DTYPE_OF(T, D) \
  template <> struct DataTypeOf<T> { static constexpr DataType value = DataType::D; };
KILN_DTYPE_OF(float, kFloat)
KILN_DTYPE_OF(double, kDouble)
KILN_DTYPE_OF(uint8_t, kUInt8)
KILN_DTYPE_OF(int8_t, kInt8)
KILN_DTYPE_OF(uint16_t, kUInt16)
KILN_DTYPE_OF(int16_t, kInt16)
KILN_DTYPE_OF(int32_t, kInt32)
KILN_DTYPE_OF(int64_t, kInt64)
KILN_DTYPE_OF(uint32_t, kUInt32)
KILN_DTYPE_OF(uint64_t, kUInt64)
KILN_DTYPE_OF(bool, kBool)
KILN_DTYPE_OF(std::string, kString)
KILN_DTYPE_OF(Half, kFloat16)
KILN_DTYPE_OF(BFloat16, kBFloat16)
KILN_DTYPE_OF(std::complex<float>, kComplex64)
KILN_DTYPE_OF(std::complex<double>, kComplex128)
KILN_DTYPE_OF(Float8E4M3FN, kFloat8E4M3FN)
KILN_DTYPE_OF(Float8E4M3FNUZ, kFloat8E4M3FNUZ)
KILN_DTYPE_OF(Float8E5M2, kFloat8E5M2)
KILN_DTYPE_OF(Float8E5M2FNUZ, kFloat8E5M2FNUZ)
KILN_DTYPE_OF(Float4E2M1, kFloat4E2M1)
KILN_DTYPE_OF(Float8E8M0, kFloat8E8M0)
KILN_DTYPE_OF(Int4, kInt4)
KILN_DTYPE_OF(UInt4, kUInt4)
KILN_DTYPE_OF(Int2, kInt2)
KILN_DTYPE_OF(UInt2, kUInt2)
#undef KILN_DTYPE_OF
template <typename T> inline constexpr DataType dtype_of = DataTypeOf<T>::value;

// Calls fn.template operator()<T>() with the C++ type of dtype. Unknown types: returns false.
// Groups let a kernel say which types it handles; the others give a clear unsupported error.
template <typename Fn>
bool visit_dtype(DataType t, Fn&& fn) {
  switch (t) {
#define KILN_CASE(D, T) case DataType::D: fn.template operator()<T>(); return true;
    KILN_CASE(kFloat, float)
    KILN_CASE(kDouble, double)
    KILN_CASE(kUInt8, uint8_t)
    KILN_CASE(kInt8, int8_t)
    KILN_CASE(kUInt16, uint16_t)
    KILN_CASE(kInt16, int16_t)
    KILN_CASE(kInt32, int32_t)
    KILN_CASE(kInt64, int64_t)
    KILN_CASE(kUInt32, uint32_t)
    KILN_CASE(kUInt64, uint64_t)
    KILN_CASE(kBool, bool)
    KILN_CASE(kString, std::string)
    KILN_CASE(kFloat16, Half)
    KILN_CASE(kBFloat16, BFloat16)
    KILN_CASE(kComplex64, std::complex<float>)
    KILN_CASE(kComplex128, std::complex<double>)
    KILN_CASE(kFloat8E4M3FN, Float8E4M3FN)
    KILN_CASE(kFloat8E4M3FNUZ, Float8E4M3FNUZ)
    KILN_CASE(kFloat8E5M2, Float8E5M2)
    KILN_CASE(kFloat8E5M2FNUZ, Float8E5M2FNUZ)
    KILN_CASE(kFloat4E2M1, Float4E2M1)
    KILN_CASE(kFloat8E8M0, Float8E8M0)
    KILN_CASE(kInt4, Int4)
    KILN_CASE(kUInt4, UInt4)
    KILN_CASE(kInt2, Int2)
    KILN_CASE(kUInt2, UInt2)
#undef KILN_CASE
    default: return false;
  }
}

}  // namespace kiln
