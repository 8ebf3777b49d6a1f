// Cast, CastLike and BitCast.
//
// Cast converts through one of three exact intermediates chosen by the source type: double for
// the float kinds, int64 for signed integers and bool, uint64 for unsigned integers. Strings parse
// into one of them and numbers print like Python's repr (what ONNX's reference produces).
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include "ops/elementwise_common.h"

namespace kiln::ew {
namespace {

using CastTypes = TypeList<KILN_NUMERIC_TYPES, bool, std::string, KILN_FLOAT8_TYPES,
                           KILN_SMALL_INT_TYPES>;

enum class RoundMode { kUp, kDown, kNearest };

struct CastOptions {
  bool saturate = true;
  RoundMode round = RoundMode::kUp;
};

// float8e8m0 holds only an exponent: code c is 2^(c-127), 0xff is NaN.
uint8_t to_e8m0(float f, const CastOptions& o) {
  if (std::isnan(f)) return 0xff;
  if (std::isinf(f)) return o.saturate ? 0xfe : 0xff;
  const uint32_t bits = std::bit_cast<uint32_t>(f) & 0x7fffffffu;  // no sign in e8m0
  uint32_t e = bits >> 23;
  uint32_t m = bits & 0x7fffffu;
  bool exact = m == 0;
  bool upper_half = m >= 0x400000u;  // mantissa fraction >= 0.5
  if (e == 0) {  // subnormal float: m * 2^-149, and 2^-127 is m == 2^22
    if (m <= 0x400000u) return 0;
    exact = false;
    upper_half = m >= 0x600000u;
  }
  if (!exact) {
    const bool up = o.round == RoundMode::kUp || (o.round == RoundMode::kNearest && upper_half);
    if (up) ++e;
  }
  if (e >= 0xff) return o.saturate ? 0xfe : 0xff;
  return static_cast<uint8_t>(e);
}

template <typename D>
D small_float_from(float f, const CastOptions& o) {
  D d;
  constexpr DataType dt = dtype_of<D>;
  if constexpr (dt == DataType::kFloat8E8M0)
    d.bits = to_e8m0(f, o);
  else if constexpr (dt == DataType::kFloat4E2M1)  // no NaN: ONNX's reference writes 0x8 (-0)
    d.bits = std::isnan(f) ? 0x8 : float_to_float8(dt, f);
  else
    d.bits = float_to_float8(dt, f, o.saturate);
  return d;
}

// A sub-byte integer from the low bits of v (wrapping), sign-extended for the signed kinds.
template <typename D>
D small_int_from(int64_t v) {
  constexpr int bits = small_int_traits<D>::bits;
  constexpr uint64_t mask = (uint64_t{1} << bits) - 1;
  int64_t w = static_cast<int64_t>(static_cast<uint64_t>(v) & mask);
  if (small_int_traits<D>::is_signed && (w >> (bits - 1)) & 1) w -= int64_t{1} << bits;
  return D(w);
}

// Conversions to D from the three intermediates.
template <typename D>
D from_double(double v, const CastOptions& o) {
  if constexpr (std::is_same_v<D, bool>) return v != 0;
  else if constexpr (std::is_floating_point_v<D>) return static_cast<D>(v);
  else if constexpr (is_half_v<D>) return D(static_cast<float>(v));
  else if constexpr (is_small_float_v<D>) return small_float_from<D>(static_cast<float>(v), o);
  else if constexpr (is_small_int_v<D>) return small_int_from<D>(float_to_int<int64_t>(v));
  else return float_to_int<D>(v);
}

template <typename D, typename I>  // I: int64_t or uint64_t
D from_integer(I v, const CastOptions& o) {
  if constexpr (std::is_same_v<D, bool>) return v != 0;
  else if constexpr (std::is_floating_point_v<D>) return static_cast<D>(v);
  else if constexpr (is_half_v<D>) return D(static_cast<float>(v));
  else if constexpr (is_small_float_v<D>) return small_float_from<D>(static_cast<float>(v), o);
  else if constexpr (is_small_int_v<D>) return small_int_from<D>(static_cast<int64_t>(v));
  else return static_cast<D>(v);
}

// --- strings -------------------------------------------------------------------------------

// Python's repr of a float given its shortest round-trip digits: positional for exponents in
// [-4, 16), otherwise d.ddde+XX.
std::string repr_from_scientific(const std::string& sci) {
  // sci is "[-]d[.ddd]e[+-]x"
  size_t p = 0;
  std::string out;
  if (sci[p] == '-') {
    out = "-";
    ++p;
  }
  std::string digits(1, sci[p++]);
  if (p < sci.size() && sci[p] == '.') {
    ++p;
    while (p < sci.size() && sci[p] != 'e') digits += sci[p++];
  }
  const int exp = std::stoi(sci.substr(p + 1));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      std::string ip = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
      ip.append(exp + 1 - ip.size(), '0');
      std::string fp = digits.size() > size_t(exp + 1) ? digits.substr(exp + 1) : "0";
      out += ip + "." + fp;
    } else {
      out += "0." + std::string(-exp - 1, '0') + digits;
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  }
  return out;
}

template <typename S>
std::string number_to_string(S s) {
  if constexpr (std::is_same_v<S, bool>) {
    return s ? "True" : "False";
  } else if constexpr (is_small_int_v<S>) {
    return std::to_string(static_cast<int64_t>(s));
  } else if constexpr (std::is_integral_v<S>) {
    return std::to_string(s);
  } else {
    const auto v = static_cast<compute_t<S>>(s);
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    if constexpr (std::is_floating_point_v<S>) {
      auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
      return repr_from_scientific(std::string(buf, r.ptr));
    } else {
      // The fewest digits that read back to the same value of the narrow type.
      for (int prec = 0; prec < 9; ++prec) {
        auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, prec);
        const std::string sci(buf, r.ptr);
        const float back = static_cast<float>(S(std::strtof(sci.c_str(), nullptr)));
        if (back == v || prec == 8) return repr_from_scientific(sci);
      }
      return {};
    }
  }
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// A string parsed as a number: integers keep their exact value, anything else goes through double
// (strtod reads "inf", "+INF", "NaN" ... case-insensitively). True/False read as 1/0.
template <typename D>
D string_to(const KernelContext& ctx, const std::string& str, const CastOptions& o) {
  size_t b = 0, e = str.size();
  while (b < e && std::isspace(static_cast<unsigned char>(str[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(str[e - 1]))) --e;
  std::string_view s(str.data() + b, e - b);
  std::string_view digits = !s.empty() && s[0] == '+' ? s.substr(1) : s;
  int64_t i = 0;
  auto ri = std::from_chars(digits.data(), digits.data() + digits.size(), i);
  if (!digits.empty() && ri.ec == std::errc() && ri.ptr == digits.data() + digits.size())
    return from_integer<D>(i, o);
  uint64_t u = 0;
  auto ru = std::from_chars(digits.data(), digits.data() + digits.size(), u);
  if (!digits.empty() && ru.ec == std::errc() && ru.ptr == digits.data() + digits.size())
    return from_integer<D>(u, o);
  if (iequals(s, "true")) return from_integer<D>(int64_t{1}, o);
  if (iequals(s, "false")) return from_integer<D>(int64_t{0}, o);
  const std::string owned(s);
  char* end = nullptr;
  const double d = std::strtod(owned.c_str(), &end);
  if (owned.empty() || end != owned.c_str() + owned.size())
    ctx.fail_here(fmt::format("cannot cast string '{}' to a number", str));
  return from_double<D>(d, o);
}

// --- the Cast kernel ----------------------------------------------------------------------

template <typename S, typename D>
void cast_loop(const KernelContext& ctx, const Tensor& x, Tensor& y, const CastOptions& o) {
  const S* in = x.data<S>();
  D* out = y.data<D>();
  const int64_t n = x.numel();
  if constexpr (std::is_same_v<S, std::string> && std::is_same_v<D, std::string>) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i];
  } else if constexpr (std::is_same_v<S, std::string>) {
    for (int64_t i = 0; i < n; ++i) out[i] = string_to<D>(ctx, in[i], o);
  } else if constexpr (std::is_same_v<D, std::string>) {
    for (int64_t i = 0; i < n; ++i) out[i] = number_to_string(in[i]);
  } else {
    parallel_range(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const S s = in[i];
        if constexpr (std::is_same_v<S, bool> || is_small_int_v<S> ||
                      (std::is_integral_v<S> && std::is_signed_v<S>))
          out[i] = from_integer<D>(static_cast<int64_t>(s), o);
        else if constexpr (std::is_integral_v<S>)
          out[i] = from_integer<D>(static_cast<uint64_t>(s), o);
        else
          out[i] = from_double<D>(static_cast<double>(static_cast<compute_t<S>>(s)), o);
      }
    });
  }
}

Tensor cast_tensor(const KernelContext& ctx, const Tensor& x, DataType to, const CastOptions& o) {
  if (x.dtype() == to) return x.clone();
  Tensor y(to, x.dims());
  visit_in(CastTypes{}, ctx.node(), x.dtype(), [&]<typename S>() {
    visit_in(CastTypes{}, ctx.node(), to, [&]<typename D>() { cast_loop<S, D>(ctx, x, y, o); });
  });
  return y;
}

CastOptions cast_options(const Node& n) {
  CastOptions o;
  o.saturate = attr_int(n, "saturate", 1) != 0;
  const std::string mode = attr_string(n, "round_mode", "up");
  if (mode == "up") o.round = RoundMode::kUp;
  else if (mode == "down") o.round = RoundMode::kDown;
  else if (mode == "nearest") o.round = RoundMode::kNearest;
  else
    fail(ErrorKind::kBadModel, "{}round_mode must be up, down or nearest, got '{}'", n.where(),
         mode);
  return o;
}

// The `to` attribute: an int (opset >= 6) or a type name such as "FLOAT" (opset < 6).
DataType cast_target(const Node& n) {
  const Attribute* a = n.attr("to");
  if (!a) fail(ErrorKind::kBadModel, "{}attribute 'to' is required", n.where());
  if (a->kind == AttrKind::kString) {
    for (int32_t t = 1; t < kDataTypeCount; ++t)
      if (iequals(a->s, dtype_name(static_cast<DataType>(t)))) return static_cast<DataType>(t);
    fail(ErrorKind::kBadModel, "{}unknown type '{}' in 'to'", n.where(), a->s);
  }
  if (!is_valid_dtype(static_cast<int32_t>(a->i)))
    fail(ErrorKind::kBadModel, "{}'to' is not a valid type ({})", n.where(), a->i);
  return static_cast<DataType>(a->i);
}

// Cast keeps small integer values (dims) flowing: to integer and float types unchanged.
void propagate_cast_vals(InferContext& ctx, DataType to) {
  auto v = input_vals(ctx, 0);
  if (!v) return;
  if (to == DataType::kBool) {
    for (DimVal& d : *v) d = d.v ? DimVal::known(*d.v != 0) : DimVal{};
  } else if (!is_integer(to) && !is_float(to)) {
    return;
  }
  publish_vals(ctx, 0, *v);
}

// --- BitCast ---------------------------------------------------------------------------------

void bitcast_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DataType to = cast_target(ctx.node());
  const DataType from = x.dtype();
  if (from == DataType::kString || to == DataType::kString)
    ctx.fail_here("BitCast does not take strings");
  if (dtype_file_bits(from) != dtype_file_bits(to))
    ctx.fail_here(fmt::format("{} and {} differ in bit width", dtype_name(from), dtype_name(to)));
  Tensor y(to, x.dims());
  const int bits = dtype_file_bits(to);
  const auto* in = static_cast<const uint8_t*>(x.raw());
  if (bits < 8) {  // sub-byte kinds: one byte each in memory, signed ones sign-extended
    auto* out = static_cast<uint8_t*>(y.raw());
    const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
    const bool sign_extend = to == DataType::kInt4 || to == DataType::kInt2;
    for (int64_t i = 0; i < x.numel(); ++i) {
      uint8_t v = in[i] & mask;
      if (sign_extend && (v >> (bits - 1)) & 1) v |= static_cast<uint8_t>(~mask);
      out[i] = v;
    }
  } else if (to == DataType::kBool) {
    bool* out = y.data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] != 0;
  } else if (x.nbytes() > 0) {
    std::memcpy(y.raw(), x.raw(), x.nbytes());
  }
  ctx.set_output(0, std::move(y));
}

}  // namespace

void register_ew_cast(OpRegistry& r) {
  r.add("", "Cast")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("to", AttrKind::kInt, true)
      .attr("saturate", AttrKind::kInt)
      .attr("round_mode", AttrKind::kString)
      .shape([](InferContext& ctx) {
        const DataType to = cast_target(ctx.node());
        ctx.set_output(0, to, ctx.input_shape(0));
        propagate_cast_vals(ctx, to);
      })
      .run([](KernelContext& ctx) {
        const CastOptions o = cast_options(ctx.node());
        ctx.set_output(0, cast_tensor(ctx, ctx.input(0), cast_target(ctx.node()), o));
      });

  r.add("", "CastLike")
      .versions(15)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("saturate", AttrKind::kInt)
      .attr("round_mode", AttrKind::kString)
      .shape([](InferContext& ctx) {
        const DataType to = ctx.input_dtype(1);
        ctx.set_output(0, to, ctx.input_shape(0));
        propagate_cast_vals(ctx, to);
      })
      .run([](KernelContext& ctx) {
        const CastOptions o = cast_options(ctx.node());
        ctx.set_output(0, cast_tensor(ctx, ctx.input(0), ctx.input(1).dtype(), o));
      });

  r.add("", "BitCast")
      .versions(26)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("to", AttrKind::kInt, true)
      .shape([](InferContext& ctx) {
        const DataType to = cast_target(ctx.node());
        const DataType from = ctx.input_dtype(0);
        if (from != DataType::kUndefined &&
            (from == DataType::kString || to == DataType::kString ||
             dtype_file_bits(from) != dtype_file_bits(to)))
          ctx.fail_here(fmt::format("cannot bitcast {} to {}: bit widths differ",
                                    dtype_name(from), dtype_name(to)));
        ctx.set_output(0, to, ctx.input_shape(0));
      })
      .run(bitcast_kernel);
}

}  // namespace kiln::ew
