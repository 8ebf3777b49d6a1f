// The LSTM and GRU gate kernels against the ONNX formulas in double, on every ISA: unit counts
// around the registers (partial last ones), with and without peepholes, both GRU forms, and gate
// sums far out in the tails of sigmoid and tanh.
#include <utility>

#include "engine/cpu/kernels.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

class CpuRecurrent : public IsaTest {};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

std::vector<float> random_floats(int64_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = u(rng);
  return v;
}

constexpr int64_t kUnits[] = {1, 3, 8, 15, 16, 17, 33, 256};

// Strides above n (gate g of gx at g * st, of gh at g * sh): part of a wider cell's units, or
// products laid out by runs of units.
TEST_P(CpuRecurrent, LstmCellMatchesTheFormula) {
  std::mt19937 rng(11);
  for (int64_t n : kUnits)
    for (const auto& [st, sh] : {std::pair{n, n}, std::pair{n + 5, n + 2}})
      for (bool peep : {false, true})
        for (float scale : {1.0f, 30.0f}) {
          SCOPED_TRACE("units " + std::to_string(n) + " strides " + std::to_string(st) + ", " +
                       std::to_string(sh) + (peep ? " peepholes" : "") + " scale " + std::to_string(scale));
          const auto gx = random_floats(4 * st, rng, scale), gh = random_floats(4 * sh, rng, scale);
          const auto p = random_floats(3 * st, rng, 1.0f);
          std::vector<float> c = random_floats(n, rng, 2.0f), h(n, 42.0f);
          std::vector<float> want_c(n), want_h(n);
          for (int64_t k = 0; k < n; ++k) {
            auto a = [&](int g) { return double(gx[g * st + k]) + gh[g * sh + k]; };
            const double c0 = c[k];
            const double i = sigmoid(a(0) + (peep ? p[k] * c0 : 0.0));
            const double f = sigmoid(a(2) + (peep ? p[2 * st + k] * c0 : 0.0));
            const double c1 = f * c0 + i * std::tanh(a(3));
            want_c[k] = static_cast<float>(c1);
            want_h[k] = static_cast<float>(sigmoid(a(1) + (peep ? p[st + k] * c1 : 0.0)) * std::tanh(c1));
          }
          kernels().lstm_cell(gx.data(), gh.data(), peep ? p.data() : nullptr, c.data(), h.data(), n, st, sh);
          EXPECT_TRUE(floats_near(c.data(), want_c.data(), n, 8, 1e-6f));
          EXPECT_TRUE(floats_near(h.data(), want_h.data(), n, 8, 1e-6f));
        }
}

TEST_P(CpuRecurrent, GruCellMatchesTheFormulaInBothForms) {
  std::mt19937 rng(12);
  for (int64_t n : kUnits)
    for (const auto& [st, sh] : {std::pair{n, n}, std::pair{n + 5, n + 2}})
      for (bool linear_before_reset : {false, true})
        for (float scale : {1.0f, 30.0f}) {
          SCOPED_TRACE("units " + std::to_string(n) + " strides " + std::to_string(st) + ", " +
                       std::to_string(sh) + (linear_before_reset ? " lbr" : "") + " scale " +
                       std::to_string(scale));
          const auto gx = random_floats(3 * st, rng, scale), gh = random_floats(3 * sh, rng, scale);
          const auto rbh = random_floats(n, rng, 1.0f);
          std::vector<float> h = random_floats(n, rng, 1.0f), want(n);
          for (int64_t k = 0; k < n; ++k) {
            const double z = sigmoid(double(gx[k]) + gh[k]);
            const double r = sigmoid(double(gx[st + k]) + gh[sh + k]);
            const double a = linear_before_reset ? r * (double(gh[2 * sh + k]) + rbh[k]) : gh[2 * sh + k];
            const double cand = std::tanh(gx[2 * st + k] + a);
            want[k] = static_cast<float>((1 - z) * cand + z * h[k]);
          }
          kernels().gru_cell(gx.data(), gh.data(), linear_before_reset ? rbh.data() : nullptr, h.data(), n, st, sh);
          EXPECT_TRUE(floats_near(h.data(), want.data(), n, 8, 1e-6f));
        }
}

TEST_P(CpuRecurrent, GruResetGateScalesTheState) {
  std::mt19937 rng(13);
  for (int64_t n : kUnits) {
    SCOPED_TRACE("units " + std::to_string(n));
    const auto gx = random_floats(n, rng, 8.0f), gh = random_floats(n, rng, 8.0f);
    const auto h = random_floats(n, rng, 1.0f);
    std::vector<float> rh(n + 1, 42.0f), want(n + 1, 42.0f);  // one past the end stays
    for (int64_t k = 0; k < n; ++k) want[k] = static_cast<float>(sigmoid(double(gx[k]) + gh[k]) * h[k]);
    kernels().gru_reset(gx.data(), gh.data(), h.data(), rh.data(), n);
    EXPECT_TRUE(floats_near(rh.data(), want.data(), n + 1, 4, 1e-7f));
  }
}

KILN_INSTANTIATE_FOR_ISAS(CpuRecurrent);

}  // namespace
}  // namespace kiln::cpu
