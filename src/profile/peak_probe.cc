#include "profile/peak_probe.h"

#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "engine/cpu/cpu_features.h"
#include "engine/onednn/gemm_probe.h"
#include "profile/peak_loops.h"
#include "runtime/observer.h"
#include "support/error.h"

namespace kiln {

namespace {

using peak_loops::FmaLoop;
using peak_loops::kChains;
using peak_loops::kChainsAvx2;

// ---- FMA throughput: independent chains of a = a * m + c, enough to fill every FMA pipe.

float sum_lanes(const float* lanes, int n) {
  float total = 0;
  for (int i = 0; i < n; ++i) total += lanes[i];
  return total;
}

__attribute__((target("avx512f"))) float fma_loop_avx512(int64_t iters) {
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(i));
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, c);
  }
  __m512 s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  return sum_lanes(lanes, 16);
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t iters) {
  __m256 acc[kChainsAvx2];
#pragma GCC unroll 12
  for (int i = 0; i < kChainsAvx2; ++i) acc[i] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(i));
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChainsAvx2; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, c);
  }
  alignas(32) float lanes[8];
  __m256 s = acc[0];
#pragma GCC unroll 12
  for (int i = 1; i < kChainsAvx2; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_store_ps(lanes, s);
  return sum_lanes(lanes, 8);
}

float fma_loop_scalar(int64_t iters) {
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = 1.0f + 0.01f * static_cast<float>(i);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (float& a : acc) a = a * 0.999999f + 1e-6f;
  }
  float total = 0;
  for (float a : acc) total += a;
  return total;
}

FmaLoop best_fma_loop() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512", fma_loop_avx512, 2.0 * kChains * 16};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2", fma_loop_avx2, 2.0 * kChainsAvx2 * 8};
  return {"scalar", fma_loop_scalar, 2.0 * kChains};
}

// Runs work(t) on `threads` threads released together; returns the wall seconds until all finish.
double run_together(int threads, const std::function<void(int)>& work) {
  std::atomic<bool> go{false};
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      work(t);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const int64_t start = steady_now_ns();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return static_cast<double>(steady_now_ns() - start) / 1e9;
}

volatile float g_sink;  // keeps the FMA results alive

// Best of several short rounds (on a shared machine the best one saw the cores alone); GFLOP/s.
double measure_fma(const FmaLoop& loop, int threads) {
  const double flops_per_iter = loop.ops_per_iter;
  // Calibrate on this thread: iterations for about 2 ms, from the fastest of three timings (a
  // preempted one would make the rounds too short to time).
  auto fastest = [&](int64_t iters) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const int64_t start = steady_now_ns();
      g_sink = loop.run(iters);
      best = std::min(best, static_cast<double>(steady_now_ns() - start) / 1e9);
    }
    return best;
  };
  int64_t iters = 1 << 12;
  double seconds = 0;
  while ((seconds = fastest(iters)) < 2e-4) iters *= 4;
  iters = static_cast<int64_t>(static_cast<double>(iters) * 0.002 / seconds) + 1;
  double best = 0;
  for (int round = 0; round < 24; ++round) {
    const double s = run_together(threads, [&](int) { g_sink = loop.run(iters); });
    best = std::max(best, flops_per_iter * static_cast<double>(iters) * threads / s / 1e9);
  }
  return best;
}

// ---- Memory bandwidth: streaming copy and triad over arrays well past the last-level cache.

__attribute__((target("avx2"))) void copy_avx2(float* a, const float* b, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(a + i, _mm256_loadu_ps(b + i));
  for (; i < n; ++i) a[i] = b[i];
}

__attribute__((target("avx2,fma"))) void triad_avx2(float* a, const float* b, const float* c,
                                                    float s, size_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(a + i, _mm256_fmadd_ps(vs, _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i)));
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

void copy_plain(float* a, const float* b, size_t n) { std::copy(b, b + n, a); }
void triad_plain(float* a, const float* b, const float* c, float s, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// Floats per stream array: four times the last-level cache, 64 to 128 MiB (some VMs report a
// whole socket's or a made-up L3).
size_t stream_floats() {
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const size_t want = l3 > 0 ? 4 * static_cast<size_t>(l3) : 0;
  return std::clamp<size_t>(want, size_t{64} << 20, size_t{128} << 20) / sizeof(float);
}

// An anonymous mapping asking for transparent huge pages: first touching 4 KiB pages costs more
// than the streaming itself on some VMs (10 us a page), and the probe must stay well under 1 s.
class StreamArray {
 public:
  explicit StreamArray(size_t floats) : bytes_(floats * sizeof(float)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    KILN_CHECK(p != MAP_FAILED, ErrorKind::kRuntime, "peak probe: cannot map {} bytes", bytes_);
    madvise(p, bytes_, MADV_HUGEPAGE);  // advice only: fine when refused
    data_ = static_cast<float*>(p);
  }
  ~StreamArray() { munmap(data_, bytes_); }
  StreamArray(const StreamArray&) = delete;
  StreamArray& operator=(const StreamArray&) = delete;
  float* get() const { return data_; }

 private:
  size_t bytes_;
  float* data_;
};

struct Bandwidth {
  double copy_gbps = 0, triad_gbps = 0;
};

Bandwidth measure_bandwidth(int threads) {
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const size_t n = stream_floats();
  StreamArray a(n), b(n), c(n);
  const size_t chunk = (n + threads - 1) / threads;
  auto part = [&](int t) {
    const size_t begin = std::min(n, chunk * t);
    return std::pair{begin, std::min(n, begin + chunk) - begin};
  };
  // First touch by the thread that streams each part.
  run_together(threads, [&](int t) {
    auto [at, len] = part(t);
    std::fill_n(a.get() + at, len, 0.0f);
    std::fill_n(b.get() + at, len, 1.0f);
    std::fill_n(c.get() + at, len, 2.0f);
  });
  const double bytes = static_cast<double>(n * sizeof(float));
  Bandwidth best;
  for (int round = 0; round < 5; ++round) {
    double s = run_together(threads, [&](int t) {
      auto [at, len] = part(t);
      (avx2 ? copy_avx2 : copy_plain)(a.get() + at, b.get() + at, len);
    });
    best.copy_gbps = std::max(best.copy_gbps, 2 * bytes / s / 1e9);
    s = run_together(threads, [&](int t) {
      auto [at, len] = part(t);
      (avx2 ? triad_avx2 : triad_plain)(a.get() + at, b.get() + at, c.get() + at, 0.5f, len);
    });
    best.triad_gbps = std::max(best.triad_gbps, 3 * bytes / s / 1e9);
  }
  g_sink = a.get()[n / 2];
  return best;
}

}  // namespace

MachinePeak measure_peak(int threads) {
  KILN_CHECK(threads >= 1 && threads <= 4096, ErrorKind::kBadInput,
             "peak probe: {} threads; need 1 to 4096", threads);
  const int64_t start = steady_now_ns();
  MachinePeak p;
  p.cpu = cpu::cpu_identity();
  p.threads = threads;
  const FmaLoop loop = best_fma_loop();
  p.isa = loop.isa;
  p.gflops = measure_fma(loop, threads);
  if (const FmaLoop int8 = peak_loops::best_int8_loop(); int8.run) {
    p.int8_isa = int8.isa;
    p.int8_gops = measure_fma(int8, threads);
  } else {
    p.int8_isa = "none";
  }
  if (const FmaLoop bf16 = peak_loops::best_bf16_loop(); bf16.run) {
    p.bf16_native = true;
    p.bf16_isa = bf16.isa;
    p.bf16_gflops = measure_fma(bf16, threads);
  }
  using engine::GemmPrecision;
  p.gemm_f32_gops = engine::measure_gemm_ops(GemmPrecision::kF32, 256, 1024, 1024, threads) / 1e9;
  p.gemm_int8_gops = engine::measure_gemm_ops(GemmPrecision::kInt8, 256, 1024, 1024, threads) / 1e9;
  p.gemm_bf16_gops = engine::measure_gemm_ops(GemmPrecision::kBf16, 256, 1024, 1024, threads) / 1e9;
  const Bandwidth bw = measure_bandwidth(threads);
  p.copy_gbps = bw.copy_gbps;
  p.triad_gbps = bw.triad_gbps;
  p.probe_seconds = static_cast<double>(steady_now_ns() - start) / 1e9;
  return p;
}

}  // namespace kiln
