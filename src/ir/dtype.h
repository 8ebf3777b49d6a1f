// Element types: every ONNX TensorProto data type, their names, sizes and float conversions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// Values equal ONNX's TensorProto.DataType, so they pass through files unchanged.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};
inline constexpr int32_t kDataTypeCount = 27;

bool is_valid_dtype(int32_t v);
std::string_view dtype_name(DataType t);  // ONNX spelling: "float", "int64", "float8e4m3fn" ...

// Bytes one element takes in memory. Sub-byte types (int4, uint4, float4e2m1, int2, uint2) take one
// byte each in memory and are packed only in files. Strings: 0 (held separately).
size_t dtype_size(DataType t);
// Bits one element takes in an ONNX file's raw_data (4 for int4, 2 for int2 ...).
int dtype_file_bits(DataType t);

bool is_float(DataType t);      // any floating type, the 8- and 4-bit ones included
bool is_integer(DataType t);    // signed or unsigned, sub-byte included, bool excluded
bool is_signed(DataType t);
bool is_complex(DataType t);

// Conversions for the types that have no native C++ counterpart.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);  // round to nearest even
// Float8 and float4: saturate selects the saturating conversion of ONNX's Cast (inf -> max finite).
float float8_to_float(DataType t, uint8_t v);
uint8_t float_to_float8(DataType t, float f, bool saturate = true);

}  // namespace kiln
