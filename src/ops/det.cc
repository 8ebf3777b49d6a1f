// nn family: Det, the determinant of the last two dims, reference kernel and inference.
#include <algorithm>
#include <cmath>
#include <map>

#include "support/checked_math.h"

#include "ops/nn_common.h"

namespace kiln {
namespace {

// ---------------------------------------------------------------------------------------------
// Det.

void run_det(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2 || x.dim(x.rank() - 1) != x.dim(x.rank() - 2))
    ctx.fail_here(fmt::format("input of shape {} is not a (batch of) square matrices",
                              dims_to_string(x.dims())));
  const int64_t m = x.dim(x.rank() - 1);
  std::vector<int64_t> od(x.dims().begin(), x.dims().end() - 2);
  visit<KILN_FLOAT_TYPES>(n, x.dtype(), [&]<typename T>() {
    const auto xv = nn::load_as<double>(n, x);
    Tensor y(x.dtype(), od);
    T* yp = y.data<T>();
    const int64_t nb = y.numel();
    for (int64_t b = 0; b < nb; ++b) {
      std::vector<double> a(xv.begin() + b * m * m, xv.begin() + (b + 1) * m * m);
      double det = 1.0;
      for (int64_t c = 0; c < m; ++c) {
        int64_t piv = c;
        for (int64_t r = c + 1; r < m; ++r)
          if (std::fabs(a[r * m + c]) > std::fabs(a[piv * m + c])) piv = r;
        if (a[piv * m + c] == 0.0) {
          det = 0.0;
          break;
        }
        if (piv != c) {
          for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[piv * m + k]);
          det = -det;
        }
        const double p = a[c * m + c];
        det *= p;
        for (int64_t r = c + 1; r < m; ++r) {
          const double f = a[r * m + c] / p;
          if (f == 0.0) continue;
          for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
        }
      }
      yp[b] = nn::from_num<T>(static_cast<compute_t<T>>(det));
    }
    ctx.set_output(0, std::move(y));
  });
}

}  // namespace

void register_nn_det_ops(OpRegistry& r) {
  r.add("", "Det")
      .versions(11)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape([](InferContext& ctx) {
        const auto& s = ctx.input_shape(0);
        if (!s) {
          ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
          return;
        }
        if (s->size() < 2) ctx.fail_here(fmt::format("input has rank {}, expected >= 2", s->size()));
        ctx.set_output(0, ctx.input_dtype(0), Shape(s->begin(), s->end() - 2));
      })
      .run(run_det);
}

}  // namespace kiln
