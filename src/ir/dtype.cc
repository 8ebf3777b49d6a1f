#include "ir/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace kiln {

bool is_valid_dtype(int32_t v) { return v > 0 && v < kDataTypeCount; }

std::string_view dtype_name(DataType t) {
  static constexpr std::array<std::string_view, kDataTypeCount> names = {
      "undefined",    "float",          "uint8",      "int8",          "uint16",
      "int16",        "int32",          "int64",      "string",        "bool",
      "float16",      "double",         "uint32",     "uint64",        "complex64",
      "complex128",   "bfloat16",       "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
      "float8e5m2fnuz", "uint4",        "int4",       "float4e2m1",    "float8e8m0",
      "uint2",        "int2"};
  auto i = static_cast<int32_t>(t);
  return i >= 0 && i < kDataTypeCount ? names[i] : "invalid";
}

size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kInt32: case DataType::kUInt32: return 4;
    case DataType::kDouble: case DataType::kInt64: case DataType::kUInt64:
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kFloat16: case DataType::kBFloat16: case DataType::kInt16:
    case DataType::kUInt16: return 2;
    case DataType::kString: case DataType::kUndefined: return 0;
    default: return 1;
  }
}

int dtype_file_bits(DataType t) {
  switch (t) {
    case DataType::kInt4: case DataType::kUInt4: case DataType::kFloat4E2M1: return 4;
    case DataType::kInt2: case DataType::kUInt2: return 2;
    default: return static_cast<int>(dtype_size(t) * 8);
  }
}

bool is_float(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kDouble: case DataType::kFloat16: case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN: case DataType::kFloat8E4M3FNUZ: case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: case DataType::kFloat4E2M1: case DataType::kFloat8E8M0:
      return true;
    default: return false;
  }
}

bool is_integer(DataType t) {
  switch (t) {
    case DataType::kUInt8: case DataType::kInt8: case DataType::kUInt16: case DataType::kInt16:
    case DataType::kInt32: case DataType::kInt64: case DataType::kUInt32: case DataType::kUInt64:
    case DataType::kUInt4: case DataType::kInt4: case DataType::kUInt2: case DataType::kInt2:
      return true;
    default: return false;
  }
}

bool is_signed(DataType t) {
  switch (t) {
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
    case DataType::kInt4: case DataType::kInt2: return true;
    default: return is_float(t);
  }
}

bool is_complex(DataType t) { return t == DataType::kComplex64 || t == DataType::kComplex128; }

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do { ++e; man <<= 1; } while ((man & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000 | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) return sign | (absx > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (absx >= 0x477ff000) return sign | 0x7c00;  // rounds to >= 65520: overflow
  if (absx < 0x38800000) {                      // subnormal or zero in half
    float a = std::bit_cast<float>(absx);
    // scale so that one half-subnormal ulp (2^-24) becomes 1, then round to nearest even
    float scaled = a * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t mant_odd = (absx >> 13) & 1;
  absx += 0xfff + mant_odd;  // round to nearest even on the 13 dropped bits
  return sign | static_cast<uint16_t>(((absx - 0x38000000) >> 13) & 0x7fff);
}

float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

uint16_t float_to_bfloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

namespace {

// Layout of the small float formats: exponent bits, mantissa bits, bias and their special codes.
struct SmallFloat {
  int exp_bits, man_bits, bias;
  bool has_inf;      // E5M2 only
  bool nan_is_0x80;  // the FNUZ kinds: 0x80 is the single NaN and there is no -0
  bool has_sign;     // E8M0 has none
};

SmallFloat layout(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return {4, 3, 7, false, false, true};
    case DataType::kFloat8E4M3FNUZ: return {4, 3, 8, false, true, true};
    case DataType::kFloat8E5M2: return {5, 2, 15, true, false, true};
    case DataType::kFloat8E5M2FNUZ: return {5, 2, 16, false, true, true};
    case DataType::kFloat4E2M1: return {2, 1, 1, false, false, true};
    default: return {8, 0, 127, false, false, false};  // E8M0
  }
}

float decode(DataType t, uint8_t v) {
  const SmallFloat L = layout(t);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (t == DataType::kFloat8E8M0) return v == 0xff ? nan : std::ldexp(1.0f, int(v) - 127);
  if (L.nan_is_0x80 && v == 0x80) return nan;
  const int total = 1 + L.exp_bits + L.man_bits;
  const bool neg = (v >> (total - 1)) & 1;
  const int e = (v >> L.man_bits) & ((1 << L.exp_bits) - 1);
  const int m = v & ((1 << L.man_bits) - 1);
  const int emax = (1 << L.exp_bits) - 1;
  float r;
  if (t == DataType::kFloat8E4M3FN && e == emax && m == (1 << L.man_bits) - 1) {
    r = nan;
  } else if (L.has_inf && e == emax) {
    r = m == 0 ? std::numeric_limits<float>::infinity() : nan;
  } else if (e == 0) {
    r = std::ldexp(float(m), 1 - L.bias - L.man_bits);
  } else {
    r = std::ldexp(float(m + (1 << L.man_bits)), e - L.bias - L.man_bits);
  }
  return neg ? -r : r;
}

// Positive finite codes of a format with their values, ascending, for nearest-value encoding.
struct Table {
  std::vector<std::pair<float, uint8_t>> positive;
};

Table build_table(DataType t) {
  Table tab;
  const int codes = t == DataType::kFloat4E2M1 ? 8 : (t == DataType::kFloat8E8M0 ? 256 : 128);
  for (int c = 0; c < codes; ++c) {
    float v = decode(t, uint8_t(c));
    if (std::isfinite(v) && v >= 0) tab.positive.push_back({v, uint8_t(c)});
  }
  std::sort(tab.positive.begin(), tab.positive.end());
  return tab;
}

const Table& table(DataType t) {
  static const std::array<Table, kDataTypeCount> tables = [] {
    std::array<Table, kDataTypeCount> all;
    for (DataType k : {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                       DataType::kFloat8E5M2FNUZ, DataType::kFloat4E2M1, DataType::kFloat8E8M0})
      all[static_cast<int>(k)] = build_table(k);
    return all;
  }();
  return tables[static_cast<int>(t)];
}

}  // namespace

float float8_to_float(DataType t, uint8_t v) { return decode(t, v); }

uint8_t float_to_float8(DataType t, float f, bool saturate) {
  const SmallFloat L = layout(t);
  const int total = 1 + L.exp_bits + L.man_bits;
  const uint8_t sign_bit = L.has_sign ? uint8_t(1u << (total - 1)) : 0;
  const uint8_t nan_code = t == DataType::kFloat8E8M0 ? 0xff
                           : L.nan_is_0x80            ? 0x80
                           : L.has_inf                ? 0x7f
                           : t == DataType::kFloat4E2M1 ? 0x7  // no NaN: saturate
                                                      : 0x7f;
  if (std::isnan(f)) return nan_code;
  const bool neg = std::signbit(f) && L.has_sign;
  float a = std::fabs(f);
  const auto& tab = table(t).positive;
  const auto [max_v, max_c] = tab.back();
  auto with_sign = [&](uint8_t c) -> uint8_t {
    if (!neg) return c;
    if (L.nan_is_0x80 && c == 0) return 0;  // no negative zero
    return c | sign_bit;
  };
  if (t == DataType::kFloat8E8M0) {  // exponent only: nearest power of two in log scale
    if (a == 0 || std::isinf(a)) return saturate ? (a == 0 ? 0 : 0xfe) : 0xff;
    int e = std::ilogb(a);
    float frac = a / std::ldexp(1.0f, e);
    if (frac > 1.5f) ++e;
    e = std::clamp(e + 127, 0, 254);
    return uint8_t(e);
  }
  if (std::isinf(a) || a > max_v) {
    const float prev = tab[tab.size() - 2].first;
    const float half_ulp = (max_v - prev) / 2;
    if (!std::isinf(a) && a <= max_v + half_ulp) return with_sign(max_c);
    if (saturate || t == DataType::kFloat4E2M1) return with_sign(max_c);
    return L.has_inf ? with_sign(uint8_t(0x7c)) : nan_code;
  }
  auto it = std::lower_bound(tab.begin(), tab.end(), std::make_pair(a, uint8_t(0)));
  if (it == tab.end()) return with_sign(max_c);
  if (it->first == a || it == tab.begin()) return with_sign(it->second);
  auto lo = std::prev(it);
  const float dlo = a - lo->first, dhi = it->first - a;
  uint8_t c;
  if (dlo < dhi) c = lo->second;
  else if (dhi < dlo) c = it->second;
  else c = (lo->second & 1) == 0 ? lo->second : it->second;  // tie: even code
  return with_sign(c);
}

}  // namespace kiln
