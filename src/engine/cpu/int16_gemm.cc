#include "engine/cpu/int16_gemm.h"

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/int16_gemm_tiles.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {

Int16Weights::Int16Weights(const int8_t* w, int64_t k, int64_t n, bool transposed)
    : k_(k), n_(n), transposed_(transposed), colsum_(static_cast<size_t>(n), 0) {
  data_.assign(static_cast<size_t>(panels() * pairs() * 2 * kPanel), 0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t c = 0; c < n; ++c) {
      const int8_t v = transposed ? w[c * k + kk] : w[kk * n + c];
      data_[at(kk, c)] = v;
      colsum_[static_cast<size_t>(c)] += v;
    }
}

void Int16Weights::unpack(void* plain) const {
  int8_t* w = static_cast<int8_t*>(plain);
  for (int64_t kk = 0; kk < k_; ++kk)
    for (int64_t c = 0; c < n_; ++c) (transposed_ ? w[c * k_ + kk] : w[kk * n_ + c]) = static_cast<int8_t>(data_[at(kk, c)]);
}

bool int16_gemm_supported() {
#if defined(__x86_64__)
  return isa_supported(Isa::kAvx2) && active_isa() != Isa::kScalar;
#else
  return false;
#endif
}

#if defined(__x86_64__)
namespace {

// Rows [first, last) of A widened to int16, `ld` apart, zeros past K.
template <class T>
void widen(const T* a, int64_t k, int64_t first, int64_t last, int16_t* out, int64_t ld) {
  for (int64_t r = first; r < last; ++r) {
    int16_t* o = out + r * ld;
    for (int64_t kk = 0; kk < k; ++kk) o[kk] = a[r * k + kk];
    for (int64_t kk = k; kk < ld; ++kk) o[kk] = 0;
  }
}

// Panels a thread walks at once: their K x 16 int16 stay in its L2 (kept to a third of Zen 3's
// and Ice Lake's 512 KiB / 1.25 MiB, the rest for A's rows) while every block of rows passes.
int64_t panels_per_group(const Int16Weights& b) {
  constexpr int64_t kBytes = 192 << 10;
  return std::max<int64_t>(1, kBytes / (b.pairs() * 4 * Int16Weights::kPanel));
}

}  // namespace
#endif

void int16_gemm(const void* a, bool a_signed, int64_t m, const Int16Weights& b, int16_t* a16,
                const Int16Epilogue& e, int threads) {
#if defined(__x86_64__)
  const int64_t ld = b.pairs() * 2, panels = b.panels(), group = panels_per_group(b);
  threads = static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(threads, worker_threads()), 1, panels));
  auto work = [&](int t) {
    const int64_t r0 = m * t / threads, r1 = m * (t + 1) / threads;
    if (a_signed)
      widen(static_cast<const int8_t*>(a), b.k(), r0, r1, a16, ld);
    else
      widen(static_cast<const uint8_t*>(a), b.k(), r0, r1, a16, ld);
  };
  auto product = [&](int t) {
    const int64_t p0 = panels * t / threads, p1 = panels * (t + 1) / threads;
    for (int64_t p = p0; p < p1; p += group) {
      const int64_t last = std::min(p1, p + group);
      avx2::int16_rows(a16, ld, m, b, p, last, e);
      if (e.ops.empty()) continue;
      const int64_t c0 = p * Int16Weights::kPanel, c1 = std::min(b.n(), last * Int16Weights::kPanel);
      for (int64_t r = 0; r < m; ++r) apply_row_ops(e.ops, e.y + r * e.ldy + c0, c1 - c0);
    }
  };
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
      work(omp_get_thread_num());
#pragma omp barrier
      product(omp_get_thread_num());
    }
    return;
  }
#endif
  threads = 1;
  work(0);
  product(0);
#else
  (void)a, (void)a_signed, (void)m, (void)b, (void)a16, (void)e, (void)threads;
#endif
}

}  // namespace kiln::cpu
