// Splitting a kernel's work over the OpenMP threads (libgomp: the pool oneDNN uses too).
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace kiln::cpu {

// Threads a parallel_for may use: 1 inside a parallel region (no nesting).
inline int worker_threads() {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

// Calls f(begin, end) on disjoint ranges covering [0, n), in parallel when there is enough work:
// each thread gets at least `grain` items. The kernels pick grains worth ~10 us of work: starting
// a parallel region costs ~3 us with libgomp's threads awake (measured on the 2-core AVX-512
// machine), and far more when another process holds the other core. Range boundaries are multiples of `align` (except n),
// so SIMD tails and shared cache lines happen only at the end. f must not throw.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f, int64_t align = 16) {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(worker_threads(), n / std::max<int64_t>(grain, 1));
  if (chunks <= 1) {
    f(int64_t{0}, n);
    return;
  }
  auto bound = [&](int64_t c) { return c == chunks ? n : std::min(n, n * c / chunks / align * align); };
#ifdef _OPENMP
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
#endif
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t b = bound(c), e = bound(c + 1);
    if (b < e) f(b, e);
  }
}

}  // namespace kiln::cpu
