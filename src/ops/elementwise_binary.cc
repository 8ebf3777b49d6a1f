// Elementwise ops of two or more inputs: arithmetic, Pow, Mod, shifts, logic and bitwise ops,
// comparisons, PRelu, Where, the variadic Max/Min/Sum/Mean, and Clip.
#include <cmath>
#include <cstring>

#include "ops/elementwise_common.h"

namespace kiln::ew {
namespace {

// ---------------------------------------------------------------------------------------------
// Schemas and shape inference.

struct BinaryForm {
  bool legacy_broadcast = false;  // opset < 7 had `broadcast` and `axis` attributes
  bool consumed_inputs = false;   // opset < 6 had `consumed_inputs`
};

OpSchema& binary_schema(OpRegistry& r, const char* name, int since, BinaryForm form = {}) {
  auto& s = r.add("", name).versions(since).inputs(2, 2).outputs(1, 1);
  if (form.legacy_broadcast) s.attr("broadcast", AttrKind::kInt).attr("axis", AttrKind::kInt);
  if (form.consumed_inputs) s.attr("consumed_inputs", AttrKind::kInts);
  return s;
}

void check_same_type(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    ctx.fail_here(fmt::format("input types differ ({} and {})", dtype_name(a.dtype()),
                              dtype_name(b.dtype())));
}

// Arithmetic on dims values. Div truncates like integer Div; symbolic dims are never negative.
DimVal dim_add(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return DimVal::known(*a.v + *b.v);
  return DimVal::of(a.dim + b.dim);
}
DimVal dim_sub(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return DimVal::known(*a.v - *b.v);
  return DimVal::of(a.dim - b.dim);
}
DimVal dim_mul(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return DimVal::known(*a.v * *b.v);
  return DimVal::of(a.dim * b.dim);
}
DimVal dim_div(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return *b.v == 0 ? DimVal{} : DimVal::known(*a.v / *b.v);
  if (b.v && *b.v <= 0) return {};
  return DimVal::of(Dim::floor_div(a.dim, b.dim));
}
// Exact division only (Div of floats holding dims: a non-integer quotient is not a dim).
DimVal dim_div_exact(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return *b.v != 0 && *a.v % *b.v == 0 ? DimVal::known(*a.v / *b.v) : DimVal{};
  if (b.v && *b.v == 1) return a;
  if (a.dim.is_symbolic() && a.dim.same_as(b.dim)) return DimVal::known(1);
  return {};
}

// Comparisons of dims values: -1 for unknown, else 0/1.
int dim_cmp_eq(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return *a.v == *b.v;
  if (a.dim.is_symbolic() && a.dim.same_as(b.dim)) return 1;
  // a symbol is a size, never negative
  if ((a.dim.is_symbolic() && b.v && *b.v < 0) || (b.dim.is_symbolic() && a.v && *a.v < 0))
    return 0;
  return -1;
}
int dim_cmp_lt(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return *a.v < *b.v;
  if (a.dim.is_symbolic() && a.dim.same_as(b.dim)) return 0;
  if (a.dim.is_symbolic() && b.v && *b.v <= 0) return 0;
  if (b.dim.is_symbolic() && a.v && *a.v < 0) return 1;
  return -1;
}
DimVal from_cmp(int c) { return c < 0 ? DimVal{} : DimVal::known(c); }

template <typename F>
InferFn infer_arith(F dim_op) {
  return [dim_op](InferContext& ctx) {
    infer_binary(ctx);
    if (ctx.opset() >= 7 || !attr_int_opt(ctx.node(), "axis")) propagate_binary_vals(ctx, dim_op);
  };
}

template <typename F>
InferFn infer_compare(F dim_op) {
  return [dim_op](InferContext& ctx) {
    infer_binary(ctx, DataType::kBool);
    if (ctx.opset() >= 7 || !attr_int_opt(ctx.node(), "axis")) propagate_binary_vals(ctx, dim_op);
  };
}

// ---------------------------------------------------------------------------------------------
// Kernels.

// Same-typed inputs, output of that type: y = T(f(C(a), C(b))) with C = compute_t<T>.
template <typename Types, typename F>
KernelFn same_type_kernel(F f) {
  return [f](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor b = binary_input_b(ctx);
    check_same_type(ctx, a, b);
    Tensor y(a.dtype(), broadcast_dims(ctx.node(), a.dims(), b.dims()));
    visit_in(Types{}, ctx.node(), a.dtype(), [&]<typename T>() {
      using C = compute_t<T>;
      broadcast_into<T, T, T>(a, b, y, [&](T u, T v) {
        return static_cast<T>(f(static_cast<C>(u), static_cast<C>(v)));
      });
    });
    ctx.set_output(0, std::move(y));
  };
}

// Same-typed inputs, bool output: y = f(C(a), C(b)); strings compare as they are.
template <typename Types, typename F>
KernelFn compare_kernel(F f) {
  return [f](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor b = binary_input_b(ctx);
    check_same_type(ctx, a, b);
    Tensor y(DataType::kBool, broadcast_dims(ctx.node(), a.dims(), b.dims()));
    visit_in(Types{}, ctx.node(), a.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, std::string>) {
        broadcast_into<bool, T, T>(a, b, y, [&](const T& u, const T& v) { return f(u, v); });
      } else {
        using C = compute_t<T>;
        broadcast_into<bool, T, T>(a, b, y, [&](T u, T v) {
          return f(static_cast<C>(u), static_cast<C>(v));
        });
      }
    });
    ctx.set_output(0, std::move(y));
  };
}

// Fails when an integer divisor has a zero (every element of b is used when the output is not
// empty, so this is exact).
template <typename T>
void check_no_zero_divisor(const KernelContext& ctx, const Tensor& b, int64_t out_numel) {
  if constexpr (std::is_integral_v<T>) {
    if (out_numel == 0) return;
    const T* p = b.data<T>();
    for (int64_t i = 0; i < b.numel(); ++i)
      if (p[i] == 0) ctx.fail_here("integer division by zero");
  }
}

template <typename C>
C div_value(C a, C b) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>) return b == -1 ? wrap_neg(a) : a / b;
  else return a / b;
}

// Mod: fmod=1 takes the sign of the dividend (C fmod), fmod=0 that of the divisor (Python).
template <typename C>
C mod_value(C a, C b, bool c_style) {
  if constexpr (std::is_floating_point_v<C>) {
    C r = std::fmod(a, b);
    if (!c_style && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else if constexpr (std::is_signed_v<C>) {
    if (b == -1) return 0;
    C r = a % b;
    if (!c_style && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
    return r;
  } else {
    return a % b;
  }
}

KernelFn div_kernel() {
  return [](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor b = binary_input_b(ctx);
    check_same_type(ctx, a, b);
    Tensor y(a.dtype(), broadcast_dims(ctx.node(), a.dims(), b.dims()));
    visit_in(NumericTypes{}, ctx.node(), a.dtype(), [&]<typename T>() {
      using C = compute_t<T>;
      check_no_zero_divisor<T>(ctx, b, y.numel());
      broadcast_into<T, T, T>(a, b, y, [](T u, T v) {
        return static_cast<T>(div_value(static_cast<C>(u), static_cast<C>(v)));
      });
    });
    ctx.set_output(0, std::move(y));
  };
}

KernelFn mod_kernel() {
  return [](KernelContext& ctx) {
    const bool c_style = attr_int(ctx.node(), "fmod", 0) != 0;
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    check_same_type(ctx, a, b);
    Tensor y(a.dtype(), broadcast_dims(ctx.node(), a.dims(), b.dims()));
    visit_in(NumericTypes{}, ctx.node(), a.dtype(), [&]<typename T>() {
      using C = compute_t<T>;
      check_no_zero_divisor<T>(ctx, b, y.numel());
      broadcast_into<T, T, T>(a, b, y, [&](T u, T v) {
        return static_cast<T>(mod_value(static_cast<C>(u), static_cast<C>(v), c_style));
      });
    });
    ctx.set_output(0, std::move(y));
  };
}

// Pow: base type T, exponent type T1 (any numeric), result of type T.
template <typename TA, typename TB>
TA pow_value(TA a, TB b) {
  using CA = compute_t<TA>;
  using CB = compute_t<TB>;
  if constexpr (std::is_integral_v<CA> && std::is_integral_v<CB>) {
    if constexpr (std::is_signed_v<CB>) {
      if (b < 0) {  // 1/a^n truncated to an integer
        if (a == 1) return 1;
        if constexpr (std::is_signed_v<CA>) {
          if (a == -1) return (b % 2 == 0) ? 1 : -1;
        }
        return 0;
      }
    }
    CA result = 1, base = a;
    for (uint64_t e = static_cast<uint64_t>(b); e != 0; e >>= 1) {
      if (e & 1) result = wrap_mul(result, base);
      base = wrap_mul(base, base);
    }
    return result;
  } else if constexpr (std::is_integral_v<CA>) {
    return float_to_int<TA>(std::pow(double(a), double(static_cast<CB>(b))));
  } else {
    using P = std::conditional_t<std::is_same_v<CA, double> || std::is_same_v<CB, double>,
                                 double, CA>;
    return static_cast<TA>(static_cast<CA>(
        std::pow(static_cast<P>(static_cast<CA>(a)), static_cast<P>(static_cast<CB>(b)))));
  }
}

KernelFn pow_kernel() {
  return [](KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor b = binary_input_b(ctx);
    Tensor y(a.dtype(), broadcast_dims(ctx.node(), a.dims(), b.dims()));
    visit_in(NumericTypes{}, ctx.node(), a.dtype(), [&]<typename TA>() {
      visit_in(NumericTypes{}, ctx.node(), b.dtype(), [&]<typename TB>() {
        broadcast_into<TA, TA, TB>(a, b, y, [](TA u, TB v) { return pow_value(u, v); });
      });
    });
    ctx.set_output(0, std::move(y));
  };
}

KernelFn bitshift_kernel() {
  return [](KernelContext& ctx) {
    const std::string dir = attr_string(ctx.node(), "direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      ctx.fail_here("direction must be 'LEFT' or 'RIGHT', got '" + dir + "'");
    const bool left = dir == "LEFT";
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    check_same_type(ctx, a, b);
    Tensor y(a.dtype(), broadcast_dims(ctx.node(), a.dims(), b.dims()));
    visit_in(UIntTypes{}, ctx.node(), a.dtype(), [&]<typename T>() {
      constexpr uint64_t bits = sizeof(T) * 8;
      broadcast_into<T, T, T>(a, b, y, [&](T u, T v) -> T {
        if (uint64_t(v) >= bits) return 0;
        return static_cast<T>(left ? uint64_t(u) << v : uint64_t(u) >> v);
      });
    });
    ctx.set_output(0, std::move(y));
  };
}

// ---------------------------------------------------------------------------------------------
// Where: any element type; copies elements by size so one loop serves all fixed-size types.

template <size_t K>
void where_bytes(const Tensor& c, const Tensor& x, const Tensor& y, Tensor& out) {
  const bool* pc = c.data<bool>();
  const auto* px = static_cast<const unsigned char*>(x.raw());
  const auto* py = static_cast<const unsigned char*>(y.raw());
  auto* po = static_cast<unsigned char*>(out.raw());
  const int64_t n = out.numel();
  if (c.numel() == n && x.numel() == n && y.numel() == n) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(po + i * K, (pc[i] ? px : py) + i * K, K);
    return;
  }
  for_each_broadcast(out.dims(), {c.dims(), x.dims(), y.dims()}, [&](int64_t i, const int64_t* o) {
    std::memcpy(po + i * K, pc[o[0]] ? px + o[1] * K : py + o[2] * K, K);
  });
}

void where_kernel(KernelContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (c.dtype() != DataType::kBool)
    ctx.fail_here(fmt::format("condition must be bool, got {}", dtype_name(c.dtype())));
  check_same_type(ctx, x, y);
  const auto& n = ctx.node();
  Tensor out(x.dtype(), broadcast_dims(n, broadcast_dims(n, c.dims(), x.dims()), y.dims()));
  if (x.dtype() == DataType::kString) {
    const bool* pc = c.data<bool>();
    for_each_broadcast(out.dims(), {c.dims(), x.dims(), y.dims()},
                       [&](int64_t i, const int64_t* o) {
                         out.strings()[i] = pc[o[0]] ? x.strings()[o[1]] : y.strings()[o[2]];
                       });
  } else {
    switch (dtype_size(x.dtype())) {
      case 1: where_bytes<1>(c, x, y, out); break;
      case 2: where_bytes<2>(c, x, y, out); break;
      case 4: where_bytes<4>(c, x, y, out); break;
      case 8: where_bytes<8>(c, x, y, out); break;
      case 16: where_bytes<16>(c, x, y, out); break;
      default: ctx.fail_here(fmt::format("type {} is not supported", dtype_name(x.dtype())));
    }
  }
  ctx.set_output(0, std::move(out));
}

void infer_where(InferContext& ctx) {
  infer_broadcast(ctx, ctx.input_dtype(1));
  auto c = input_vals(ctx, 0), x = input_vals(ctx, 1), y = input_vals(ctx, 2);
  if (!c || !x || !y) return;
  const size_t n = std::max({c->size(), x->size(), y->size()});
  if ((c->size() != n && c->size() != 1) || (x->size() != n && x->size() != 1) ||
      (y->size() != n && y->size() != 1))
    return;
  DimVals out(n);
  for (size_t k = 0; k < n; ++k) {
    const DimVal& ck = (*c)[c->size() == 1 ? 0 : k];
    const DimVal& xk = (*x)[x->size() == 1 ? 0 : k];
    const DimVal& yk = (*y)[y->size() == 1 ? 0 : k];
    if (ck.v) out[k] = *ck.v != 0 ? xk : yk;
    else if (xk.v && yk.v && *xk.v == *yk.v) out[k] = xk;
    else if (xk.dim.is_symbolic() && xk.dim.same_as(yk.dim)) out[k] = xk;
  }
  publish_vals(ctx, 0, out);
}

// ---------------------------------------------------------------------------------------------
// Variadic ops (Max, Min, Sum, Mean): fold the inputs pairwise with broadcasting.

template <typename Types, typename F>
KernelFn variadic_kernel(F f, bool mean) {
  return [f, mean](KernelContext& ctx) {
    const int n = ctx.num_inputs();
    Tensor acc = ctx.input(0);
    const DataType dt = acc.dtype();
    visit_in(Types{}, ctx.node(), dt, [&]<typename T>() {
      using C = compute_t<T>;
      if (n == 1) acc = acc.clone();
      for (int k = 1; k < n; ++k) {
        const Tensor& in = ctx.input(k);
        check_same_type(ctx, acc, in);
        Tensor next(dt, broadcast_dims(ctx.node(), acc.dims(), in.dims()));
        broadcast_into<T, T, T>(acc, in, next, [&](T u, T v) {
          return static_cast<T>(f(static_cast<C>(u), static_cast<C>(v)));
        });
        acc = std::move(next);
      }
      if (mean) {
        const C count = static_cast<C>(n);
        map_into<T, T>(acc, acc, [&](T u) { return static_cast<T>(static_cast<C>(u) / count); });
      }
    });
    ctx.set_output(0, std::move(acc));
  };
}

template <typename C>
C max_value(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? b : a;
}
template <typename C>
C min_value(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

DimVal dim_max(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return DimVal::known(std::max(*a.v, *b.v));
  if (a.dim.is_symbolic() && (a.dim.same_as(b.dim) || (b.v && *b.v <= 0))) return a;
  if (b.dim.is_symbolic() && a.v && *a.v <= 0) return b;
  return {};
}
DimVal dim_min(const DimVal& a, const DimVal& b) {
  if (a.v && b.v) return DimVal::known(std::min(*a.v, *b.v));
  if (a.dim.is_symbolic() && a.dim.same_as(b.dim)) return a;
  if (a.dim.is_symbolic() && b.v && *b.v <= 0) return b;
  if (b.dim.is_symbolic() && a.v && *a.v <= 0) return a;
  return {};
}

template <typename F>
InferFn infer_variadic(F dim_op) {
  return [dim_op](InferContext& ctx) {
    infer_broadcast(ctx);
    std::optional<DimVals> acc = input_vals(ctx, 0);
    for (int k = 1; k < ctx.num_inputs() && acc; ++k) {
      auto v = input_vals(ctx, k);
      acc = v ? combine_vals(*acc, *v, dim_op) : std::nullopt;
    }
    if (acc) publish_vals(ctx, 0, *acc);
  };
}

OpSchema& variadic_schema(OpRegistry& r, const char* name) {
  return r.add("", name).versions(1).inputs(1, -1).outputs(1, 1).attr("consumed_inputs",
                                                                      AttrKind::kInts);
}

// ---------------------------------------------------------------------------------------------
// Clip: optional scalar bounds (inputs 1 and 2) of the input's type.

void clip_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor y(x.dtype(), x.dims());
  visit_in(NumericTypes{}, ctx.node(), x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    auto bound = [&](int i, C dflt) -> C {
      if (!ctx.has_input(i)) return dflt;
      const Tensor& t = ctx.input(i);
      if (t.numel() == 0) return dflt;
      if (t.numel() != 1) ctx.fail_here(fmt::format("bound {} must be a scalar", i));
      if (t.dtype() == x.dtype()) return static_cast<C>(t.data<T>()[0]);
      if (t.dtype() == DataType::kString || is_complex(t.dtype()))
        ctx.fail_here(fmt::format("bound {} has type {}", i, dtype_name(t.dtype())));
      // A bound of another numeric type (a lenient producer): convert its value.
      if constexpr (std::is_integral_v<C>) {
        if (is_integer(t.dtype())) return static_cast<C>(t.get_i64(0));
        return float_to_int<C>(t.get_f64(0));
      } else {
        return static_cast<C>(t.get_f64(0));
      }
    };
    const C lo = bound(1, std::numeric_limits<C>::lowest());
    const C hi = bound(2, std::numeric_limits<C>::max());
    map_into<T, T>(x, y, [&](T t) {
      C v = static_cast<C>(t);
      if (v < lo) v = lo;
      if (v > hi) v = hi;
      return static_cast<T>(v);
    });
  });
  ctx.set_output(0, std::move(y));
}

// ---------------------------------------------------------------------------------------------

void register_arithmetic(OpRegistry& r) {
  const BinaryForm v1{.legacy_broadcast = true, .consumed_inputs = true};
  binary_schema(r, "Add", 1, v1)
      .shape(infer_arith(dim_add))
      .run(same_type_kernel<NumericTypes>([](auto a, auto b) { return wrap_add(a, b); }));
  binary_schema(r, "Sub", 1, v1)
      .shape(infer_arith(dim_sub))
      .run(same_type_kernel<NumericTypes>([](auto a, auto b) { return wrap_sub(a, b); }));
  binary_schema(r, "Mul", 1, v1)
      .shape(infer_arith(dim_mul))
      .run(same_type_kernel<NumericTypes>([](auto a, auto b) { return wrap_mul(a, b); }));
  binary_schema(r, "Div", 1, v1)
      .shape([](InferContext& ctx) {
        infer_binary(ctx);
        if (ctx.opset() < 7 && attr_int_opt(ctx.node(), "axis")) return;
        if (is_integer(ctx.input_dtype(0))) propagate_binary_vals(ctx, dim_div);
        else propagate_binary_vals(ctx, dim_div_exact);
      })
      .run(div_kernel());
  binary_schema(r, "Pow", 1, {.legacy_broadcast = true})
      .shape([](InferContext& ctx) { infer_binary(ctx); })
      .run(pow_kernel());
  binary_schema(r, "Mod", 10)
      .attr("fmod", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_binary(ctx); })
      .run(mod_kernel());
  binary_schema(r, "BitShift", 11)
      .attr("direction", AttrKind::kString, true)
      .shape([](InferContext& ctx) { infer_binary(ctx); })
      .run(bitshift_kernel());
  binary_schema(r, "PRelu", 1, {.consumed_inputs = true})
      .shape([](InferContext& ctx) {
        // Before opset 7 a 1-D slope runs along the channels (dim 1); the output is X's shape.
        if (ctx.opset() < 7) ctx.set_output(0, ctx.input_type(0));
        else infer_binary(ctx);
      })
      .run(same_type_kernel<NumericTypes>([](auto x, auto slope) {
        return x < decltype(x)(0) ? wrap_mul(slope, x) : x;
      }));
}

void register_logic(OpRegistry& r) {
  const BinaryForm v1{.legacy_broadcast = true};
  auto infer_bool = [](InferContext& ctx) { infer_binary(ctx, DataType::kBool); };
  binary_schema(r, "And", 1, v1).shape(infer_bool).run(
      same_type_kernel<BoolTypes>([](bool a, bool b) { return a && b; }));
  binary_schema(r, "Or", 1, v1).shape(infer_bool).run(
      same_type_kernel<BoolTypes>([](bool a, bool b) { return a || b; }));
  binary_schema(r, "Xor", 1, v1).shape(infer_bool).run(
      same_type_kernel<BoolTypes>([](bool a, bool b) { return a != b; }));

  auto infer_same = [](InferContext& ctx) { infer_binary(ctx); };
  binary_schema(r, "BitwiseAnd", 18).shape(infer_same).run(
      same_type_kernel<IntTypes>([](auto a, auto b) { return a & b; }));
  binary_schema(r, "BitwiseOr", 18).shape(infer_same).run(
      same_type_kernel<IntTypes>([](auto a, auto b) { return a | b; }));
  binary_schema(r, "BitwiseXor", 18).shape(infer_same).run(
      same_type_kernel<IntTypes>([](auto a, auto b) { return a ^ b; }));

  using EqualTypes = TypeList<KILN_NUMERIC_TYPES, bool, std::string>;
  auto eq = [](const DimVal& a, const DimVal& b) { return from_cmp(dim_cmp_eq(a, b)); };
  auto lt = [](const DimVal& a, const DimVal& b) { return from_cmp(dim_cmp_lt(a, b)); };
  auto gt = [](const DimVal& a, const DimVal& b) { return from_cmp(dim_cmp_lt(b, a)); };
  binary_schema(r, "Equal", 1, v1)
      .shape(infer_compare(eq))
      .run(compare_kernel<EqualTypes>([](const auto& a, const auto& b) { return a == b; }));
  binary_schema(r, "Less", 1, v1)
      .shape(infer_compare(lt))
      .run(compare_kernel<NumericTypes>([](auto a, auto b) { return a < b; }));
  binary_schema(r, "Greater", 1, v1)
      .shape(infer_compare(gt))
      .run(compare_kernel<NumericTypes>([](auto a, auto b) { return a > b; }));
  binary_schema(r, "LessOrEqual", 12)
      .shape(infer_compare([](const DimVal& a, const DimVal& b) {
        const int c = dim_cmp_lt(b, a);
        return from_cmp(c < 0 ? c : 1 - c);
      }))
      .run(compare_kernel<NumericTypes>([](auto a, auto b) { return a <= b; }));
  binary_schema(r, "GreaterOrEqual", 12)
      .shape(infer_compare([](const DimVal& a, const DimVal& b) {
        const int c = dim_cmp_lt(a, b);
        return from_cmp(c < 0 ? c : 1 - c);
      }))
      .run(compare_kernel<NumericTypes>([](auto a, auto b) { return a >= b; }));
}

void register_selection(OpRegistry& r) {
  r.add("", "Where").versions(9).inputs(3, 3).outputs(1, 1).shape(infer_where).run(where_kernel);

  variadic_schema(r, "Max")
      .shape(infer_variadic(dim_max))
      .run(variadic_kernel<NumericTypes>([](auto a, auto b) { return max_value(a, b); }, false));
  variadic_schema(r, "Min")
      .shape(infer_variadic(dim_min))
      .run(variadic_kernel<NumericTypes>([](auto a, auto b) { return min_value(a, b); }, false));
  variadic_schema(r, "Sum")
      .shape(infer_variadic(dim_add))
      .run(variadic_kernel<NumericTypes>([](auto a, auto b) { return wrap_add(a, b); }, false));
  variadic_schema(r, "Mean")
      .shape([](InferContext& ctx) { infer_broadcast(ctx); })
      .run(variadic_kernel<FloatTypes>([](auto a, auto b) { return a + b; }, true));

  r.add("", "Clip")
      .versions(1)
      .inputs(1, 3)
      .outputs(1, 1)
      .attr("consumed_inputs", AttrKind::kInts)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(clip_kernel);
}

}  // namespace

void register_ew_binary(OpRegistry& r) {
  register_arithmetic(r);
  register_logic(r);
  register_selection(r);
}

}  // namespace kiln::ew
