// Elementwise unary ops: math functions, activations, predicates (IsNaN, IsInf), Not, BitwiseNot.
//
// Most ops are one line in the table at the bottom: a name, the first opset, the types, float
// attributes with their defaults and a generic lambda f(x, p) computed in compute_t<T>.
#include <cmath>
#include <numbers>

#include "ops/elementwise_common.h"

namespace kiln::ew {
namespace {

// Float attributes of an op, read once per run; f(x, p) sees them as p.a and p.b.
struct Params {
  float a = 0, b = 0;
};
struct FloatAttr {
  const char* name;
  float dflt;
};

template <typename C>
C sigmoid(C x) {
  if (x >= 0) return C(1) / (C(1) + std::exp(-x));
  const C e = std::exp(x);
  return e / (C(1) + e);
}

template <typename C>
C softplus(C x) {  // log(1 + e^x) without overflow
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

template <typename C>
C abs_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return std::fabs(x);
  else if constexpr (std::is_signed_v<C>) return x < 0 ? wrap_neg(x) : x;
  else return x;
}

template <typename C>
C sign_of(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x)) return x;
  }
  return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
}

// Registers a same-type unary op over `Types`, computing y = T(f(compute_t<T>(x), params)).
template <typename Types, typename F>
OpSchema& unary(OpRegistry& r, const char* name, int since, F f,
                std::initializer_list<FloatAttr> attrs = {}) {
  std::vector<FloatAttr> av(attrs);
  auto& s = r.add("", name).versions(since).inputs(1, 1).outputs(1, 1);
  for (const auto& a : av) s.attr(a.name, AttrKind::kFloat, a.dflt);
  if (since == 1) s.attr("consumed_inputs", AttrKind::kInts);  // opset < 6 form
  s.shape([](InferContext& ctx) { infer_same_as_input(ctx); });
  s.run([av, f](KernelContext& ctx) {
    Params p;
    float* slots[2] = {&p.a, &p.b};
    for (size_t k = 0; k < av.size() && k < 2; ++k)
      *slots[k] = attr_float(ctx.node(), av[k].name);
    const Tensor& x = ctx.input(0);
    Tensor y(x.dtype(), x.dims());
    visit_in(Types{}, ctx.node(), x.dtype(), [&]<typename T>() {
      using C = compute_t<T>;
      map_into<T, T>(x, y, [&](T v) { return static_cast<T>(f(static_cast<C>(v), p)); });
    });
    ctx.set_output(0, std::move(y));
  });
  return s;
}

// Floor, Ceil and Round keep an integer-valued dims value as it is (Cast(int->float) -> Floor ...).
void infer_same_keep_vals(InferContext& ctx) {
  infer_same_as_input(ctx);
  if (auto v = input_vals(ctx, 0)) publish_vals(ctx, 0, *v);
}

void register_math(OpRegistry& r) {
  unary<NumericTypes>(r, "Abs", 1, [](auto x, const Params&) { return abs_of(x); });
  unary<SignedTypes>(r, "Neg", 1, [](auto x, const Params&) { return wrap_neg(x); });
  unary<FloatTypes>(r, "Reciprocal", 1, [](auto x, const Params&) { return decltype(x)(1) / x; });
  unary<FloatTypes>(r, "Floor", 1, [](auto x, const Params&) { return std::floor(x); })
      .shape(infer_same_keep_vals);
  unary<FloatTypes>(r, "Ceil", 1, [](auto x, const Params&) { return std::ceil(x); })
      .shape(infer_same_keep_vals);
  // Round half to even: nearbyint in the default rounding mode.
  unary<FloatTypes>(r, "Round", 11, [](auto x, const Params&) { return std::nearbyint(x); })
      .shape(infer_same_keep_vals);
  unary<FloatTypes>(r, "Sqrt", 1, [](auto x, const Params&) { return std::sqrt(x); });
  unary<FloatTypes>(r, "Exp", 1, [](auto x, const Params&) { return std::exp(x); });
  unary<FloatTypes>(r, "Log", 1, [](auto x, const Params&) { return std::log(x); });
  unary<FloatTypes>(r, "Sin", 7, [](auto x, const Params&) { return std::sin(x); });
  unary<FloatTypes>(r, "Cos", 7, [](auto x, const Params&) { return std::cos(x); });
  unary<FloatTypes>(r, "Tan", 7, [](auto x, const Params&) { return std::tan(x); });
  unary<FloatTypes>(r, "Asin", 7, [](auto x, const Params&) { return std::asin(x); });
  unary<FloatTypes>(r, "Acos", 7, [](auto x, const Params&) { return std::acos(x); });
  unary<FloatTypes>(r, "Atan", 7, [](auto x, const Params&) { return std::atan(x); });
  unary<FloatTypes>(r, "Sinh", 9, [](auto x, const Params&) { return std::sinh(x); });
  unary<FloatTypes>(r, "Cosh", 9, [](auto x, const Params&) { return std::cosh(x); });
  unary<FloatTypes>(r, "Asinh", 9, [](auto x, const Params&) { return std::asinh(x); });
  unary<FloatTypes>(r, "Acosh", 9, [](auto x, const Params&) { return std::acosh(x); });
  unary<FloatTypes>(r, "Atanh", 9, [](auto x, const Params&) { return std::atanh(x); });
  unary<NumericTypes>(r, "Erf", 9, [](auto x, const Params&) {
    if constexpr (std::is_integral_v<decltype(x)>) return std::erf(double(x));
    else return std::erf(x);
  });
  unary<NumericTypes>(r, "Sign", 9, [](auto x, const Params&) { return sign_of(x); });
}

void register_activations(OpRegistry& r) {
  using std::exp;
  unary<SignedTypes>(r, "Relu", 1, [](auto x, const Params&) {
    return x < decltype(x)(0) ? decltype(x)(0) : x;
  });
  unary<FloatTypes>(r, "LeakyRelu", 1, [](auto x, const Params& p) {
    return x < 0 ? decltype(x)(p.a) * x : x;
  }, {{"alpha", 0.01f}});
  unary<FloatTypes>(r, "Elu", 1, [](auto x, const Params& p) {
    return x < 0 ? decltype(x)(p.a) * std::expm1(x) : x;
  }, {{"alpha", 1.0f}});
  unary<FloatTypes>(r, "Selu", 1, [](auto x, const Params& p) {
    using C = decltype(x);
    return x <= 0 ? C(p.b) * (C(p.a) * exp(x) - C(p.a)) : C(p.b) * x;
  }, {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}});
  unary<FloatTypes>(r, "Celu", 12, [](auto x, const Params& p) {
    using C = decltype(x);
    const C alpha = C(p.a);
    return std::max(C(0), x) + std::min(C(0), alpha * std::expm1(x / alpha));
  }, {{"alpha", 1.0f}});
  unary<FloatTypes>(r, "ThresholdedRelu", 10, [](auto x, const Params& p) {
    return x > decltype(x)(p.a) ? x : decltype(x)(0);
  }, {{"alpha", 1.0f}});
  unary<FloatTypes>(r, "HardSigmoid", 1, [](auto x, const Params& p) {
    using C = decltype(x);
    return std::clamp(C(p.a) * x + C(p.b), C(0), C(1));
  }, {{"alpha", 0.2f}, {"beta", 0.5f}});
  unary<FloatTypes>(r, "HardSwish", 14, [](auto x, const Params&) {
    using C = decltype(x);
    return x * std::clamp(x / C(6) + C(0.5), C(0), C(1));
  });
  unary<FloatTypes>(r, "Sigmoid", 1, [](auto x, const Params&) { return sigmoid(x); });
  unary<FloatTypes>(r, "Tanh", 1, [](auto x, const Params&) { return std::tanh(x); });
  unary<FloatTypes>(r, "Softplus", 1, [](auto x, const Params&) { return softplus(x); });
  unary<FloatTypes>(r, "Softsign", 1, [](auto x, const Params&) {
    return x / (decltype(x)(1) + std::fabs(x));
  });
  unary<FloatTypes>(r, "Mish", 18, [](auto x, const Params&) {
    return x * std::tanh(softplus(x));
  });
  unary<FloatTypes>(r, "Swish", 24, [](auto x, const Params& p) {
    return x * sigmoid(decltype(x)(p.a) * x);
  }, {{"alpha", 1.0f}});
  unary<NumericTypes>(r, "Shrink", 9, [](auto x, const Params& p) {
    // bias and lambd are floats; integer inputs compute in double and convert back.
    using C = std::conditional_t<std::is_integral_v<decltype(x)>, double, decltype(x)>;
    const C v = C(x), lambd = C(p.b), bias = C(p.a);
    return v < -lambd ? v + bias : (v > lambd ? v - bias : C(0));
  }, {{"bias", 0.0f}, {"lambd", 0.5f}});

  // Gelu: `approximate` is a string attribute, so it is registered by hand.
  r.add("", "Gelu")
      .versions(20)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("approximate", AttrKind::kString, "none")
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run([](KernelContext& ctx) {
        const std::string mode = attr_string(ctx.node(), "approximate");
        if (mode != "none" && mode != "tanh")
          ctx.fail_here("approximate must be 'none' or 'tanh', got '" + mode + "'");
        const Tensor& x = ctx.input(0);
        Tensor y(x.dtype(), x.dims());
        visit_in(FloatTypes{}, ctx.node(), x.dtype(), [&]<typename T>() {
          using C = compute_t<T>;
          if (mode == "tanh") {
            const C k = C(std::sqrt(2.0 / std::numbers::pi));
            map_into<T, T>(x, y, [&](T t) {
              const C v = C(t);
              return T(C(0.5) * v * (C(1) + std::tanh(k * (v + C(0.044715) * v * v * v))));
            });
          } else {
            map_into<T, T>(x, y, [&](T t) {
              const C v = C(t);
              return T(C(0.5) * v * (C(1) + std::erf(v * C(std::numbers::sqrt2 / 2))));
            });
          }
        });
        ctx.set_output(0, std::move(y));
      });
}

void register_predicates(OpRegistry& r) {
  using FloatAnd8 = TypeList<KILN_FLOAT_TYPES, KILN_FLOAT8_TYPES>;
  auto bool_same_shape = [](InferContext& ctx) {
    ctx.set_output(0, DataType::kBool, ctx.input_shape(0));
  };
  r.add("", "IsNaN")
      .versions(9)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape(bool_same_shape)
      .run([](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        Tensor y(DataType::kBool, x.dims());
        visit_in(FloatAnd8{}, ctx.node(), x.dtype(), [&]<typename T>() {
          map_into<bool, T>(x, y, [](T v) { return std::isnan(static_cast<compute_t<T>>(v)); });
        });
        ctx.set_output(0, std::move(y));
      });
  r.add("", "IsInf")
      .versions(10)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("detect_negative", AttrKind::kInt)
      .attr("detect_positive", AttrKind::kInt)
      .shape(bool_same_shape)
      .run([](KernelContext& ctx) {
        const bool neg = attr_int(ctx.node(), "detect_negative", 1) != 0;
        const bool pos = attr_int(ctx.node(), "detect_positive", 1) != 0;
        const Tensor& x = ctx.input(0);
        Tensor y(DataType::kBool, x.dims());
        visit_in(FloatAnd8{}, ctx.node(), x.dtype(), [&]<typename T>() {
          map_into<bool, T>(x, y, [&](T t) {
            const auto v = static_cast<compute_t<T>>(t);
            return std::isinf(v) && (v > 0 ? pos : neg);
          });
        });
        ctx.set_output(0, std::move(y));
      });
  r.add("", "Not")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run([](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.dtype() != DataType::kBool)
          ctx.fail_here(fmt::format("input must be bool, got {}", dtype_name(x.dtype())));
        Tensor y(DataType::kBool, x.dims());
        map_into<bool, bool>(x, y, [](bool v) { return !v; });
        ctx.set_output(0, std::move(y));
      });
  r.add("", "BitwiseNot")
      .versions(18)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run([](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        Tensor y(x.dtype(), x.dims());
        visit_in(IntTypes{}, ctx.node(), x.dtype(), [&]<typename T>() {
          map_into<T, T>(x, y, [](T v) { return static_cast<T>(~v); });
        });
        ctx.set_output(0, std::move(y));
      });
}

}  // namespace

void register_ew_unary(OpRegistry& r) {
  register_math(r);
  register_activations(r);
  register_predicates(r);
}

}  // namespace kiln::ew
