// exp, erf, tanh, sigmoid and swish (SiLU) on a Vec of float lanes, for one ISA: included by
// kernels_impl.h (inside the ISA's `#pragma GCC target` region, with KILN_CPU_ISA naming its
// namespace). No include guard: once per ISA. Max error 1 ulp (sigmoid and SiLU 2; erf 2 without
// FMA) against the C library in double over the whole float range (math_test.cc). NaN stays NaN:
// the variable is always max/min's second operand.

namespace kiln::cpu::KILN_CPU_ISA {
namespace {

// Horner's rule: c[K] + x (c[K + 1] + x (... c[N - 1])), unrolled at compile time (a loop over
// the coefficients costs more than the arithmetic on one lane).
template <size_t N, size_t K = 0>
inline Vec poly(Vec x, const float (&c)[N]) {
  if constexpr (K + 1 == N) return Vec::all(c[K]);
  else return fma(poly<N, K + 1>(x, c), x, Vec::all(c[K]));
}

// e^r for |r| <= ln2 / 2: its Taylor polynomial of degree 7 (truncation below 0.1 ulp).
constexpr float kExp[] = {1.0f,       1.0f,       0.5f,        1.0f / 6,
                          1.0f / 24,  1.0f / 120, 1.0f / 720,  1.0f / 5040};
// e^-r for |r| <= ln2 / 2, one multiply-add cheaper: a degree-6 near-minimax polynomial
// (relative error 1.7e-8) with its odd coefficients negated.
constexpr float kExpNegated[] = {1.0f,           -1.0f,           4.999999404e-1f,
                                 -1.666643173e-1f, 4.166800156e-2f, -8.374156430e-3f,
                                 1.384365140e-3f};
constexpr float kLn2Hi = 0.693145751953125f;  // ln 2 in two parts: n kLn2Hi is exact for |n| < 2^9
constexpr float kLn2Lo = 1.428606765330187045e-6f;
constexpr float kLog2E = 1.44269504088896341f;

// e^x: x = n ln2 + r with |r| <= ln2 / 2 (Cody-Waite), e^r by kExp, then scaled by 2^n. Inputs
// are clamped to [-104, 88.8] first: beyond them e^x rounds to 0 or overflows to inf anyway.
inline Vec exp(Vec x) {
  x = min(Vec::all(88.8f), max(Vec::all(-104.0f), x));
  const Vec n = round_nearest(x * Vec::all(kLog2E));
  Vec r = fma(n, Vec::all(-kLn2Hi), x);
  r = fma(n, Vec::all(-kLn2Lo), r);
  return ldexp(poly(r, kExp), n);
}

// e^x, or 0 where e^x is below FLT_MIN (x < -87): for sums and normalizations such as softmax's,
// where the denormals exp() returns there change nothing a float can show once divided by the
// sum (at least 1) and cost a microcode assist each (a masked BERT attention row: 4.4x slower).
// exp() runs on max(-87, x), so that no lane makes a denormal on the way (NaN stays NaN).
inline Vec exp_or_zero(Vec x) {
  const Vec lo = Vec::all(-87.0f);
  return select(lt(x, lo), Vec::zero(), exp(max(lo, x)));
}

// erf(x): for |x| < 1, x (c0 + x^2 Q(x^2)) (a degree-6 near-minimax fit of erf(x)/x, relative
// error 1.2e-9, whose leading coefficient 2/sqrt(pi) is carried in two floats); for
// 1 <= |x| < 4, 1 - e^(g(|x|) - x^2) where g(a) = log(erfc(a)) + a^2 (degree 8, absolute error
// 1.2e-8, so erfc's relative error stays near 1e-8); from 4 on erf rounds to 1.
inline Vec erf(Vec x) {
  static constexpr float kC0Hi = 1.12837922573089599609375f;  // c0 = kC0Hi + kC0Lo (~2/sqrt(pi))
  static constexpr float kC0Lo = -6.0004206511e-8f;
  static constexpr float kSmall[] = {-0.3761262582409297f,    0.1128358514702226f,
                                     -0.026853811868656208f,  0.005188327559024139f,
                                     -0.000801019251119986f,  7.853857671928643e-05f};
  static constexpr float kLarge[] = {0.0002910253640773146f,  -1.1301197152367524f,
                                     0.36798655612739933f,    -0.10990972674608916f,
                                     0.02632752195724455f,    -0.004727687983014251f,
                                     0.0005902031752830356f,  -4.5298091339074364e-05f,
                                     1.5998191065236256e-06f};
  const Vec one = Vec::all(1.0f);
  const Vec a = abs(x);
  auto small = [&] {
    const Vec s = x * x;
    const Vec y = fma(x, Vec::all(kC0Hi), x * fma(s, poly(s, kSmall), Vec::all(kC0Lo)));
    return copysign(y, x);  // keeps -0
  };
  auto large = [&] {
    const Vec b = min(Vec::all(4.0f), a);
    return copysign(one - exp(poly(b, kLarge) - b * b), x);
  };
  const auto is_large = le(one, a);  // false for NaN: the small branch keeps it
  if (!any(is_large)) return small();
  if (all(is_large)) return large();
  return select(is_large, large(), small());
}

// tanh(x): for |x| < 0.625, x + x^3 P(x^2) (P: degree 5, relative error 1.6e-10); above,
// 1 - 2 / (e^(2|x|) + 1) with x's sign (e^(2|x|) = inf gives 1).
inline Vec tanh(Vec x) {
  static constexpr float kSmall[] = {-0.33333330802643585f, 0.13333206005453052f,
                                     -0.05394676273633016f, 0.021700701613946903f,
                                     -0.00817739459476573f, 0.0021429587516925653f};
  const Vec one = Vec::all(1.0f);
  const Vec a = abs(x);
  auto small = [&] {
    const Vec s = x * x;
    return copysign(fma(x * s, poly(s, kSmall), x), x);  // keeps -0
  };
  auto large = [&] { return copysign(one - Vec::all(2.0f) / (exp(a + a) + one), x); };
  const auto is_small = lt(a, Vec::all(0.625f));
  if (all(is_small)) return small();
  if (!any(is_small)) return large();
  return select(is_small, small(), large());
}

// e^-t for t >= -80 (where it cannot overflow) in fewer operations than exp(-t): from t without
// negating it (-t = n ln2 + r' with n = round(-t log2 e), e^r' = P(-r') by kExpNegated), clamped
// only where it rounds to 0. NaN stays NaN.
inline Vec exp_neg(Vec t) {
  const Vec m = min(Vec::all(104.0f), t);
  const Vec n = round_nearest(m * Vec::all(-kLog2E));
  Vec r = fma(n, Vec::all(kLn2Hi), m);  // r = t + n ln2 = -r'
  r = fma(n, Vec::all(kLn2Lo), r);
  return ldexp(poly(r, kExpNegated), n);
}

// Below this, e^-x overflows and 1 / (1 + e^-x) loses the tiny result: a register with a lane
// there (rare in a network) takes the slower form that keeps it.
constexpr float kLogisticTail = -80.0f;

// 1 / (1 + e^-x) as e / (1 + e) with e = e^x for negative x (no overflow, no cancellation).
inline Vec sigmoid_with_tails(Vec x) {
  const Vec one = Vec::all(1.0f);
  const Vec e = exp(neg(abs(x)));
  return select(lt(x, Vec::zero()), e, one) / (one + e);
}

inline Vec sigmoid(Vec x) {
  if (any(lt(x, Vec::all(kLogisticTail)))) return sigmoid_with_tails(x);
  const Vec one = Vec::all(1.0f);
  return one / (one + exp_neg(x));
}

// x sigmoid(alpha x) (SiLU when alpha is 1), as x / (1 + e^-t) with t = alpha x.
inline Vec swish(Vec x, Vec alpha) {
  const Vec t = alpha * x;
  if (any(lt(t, Vec::all(kLogisticTail)))) return x * sigmoid_with_tails(t);
  return x / (Vec::all(1.0f) + exp_neg(t));
}

}  // namespace
}  // namespace kiln::cpu::KILN_CPU_ISA
