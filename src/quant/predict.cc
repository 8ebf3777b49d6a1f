#include "quant/predict.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "profile/peak_probe.h"
#include "profile/profile_target.h"
#include "profile/summary.h"
#include "quant/quantize.h"
#include "runtime/observer.h"

namespace kiln::quant {

namespace {

constexpr int kChains = 12;  // independent accumulators: more than the dot product's latency

__attribute__((target("avx512f,avx512bw,avx512vnni"))) int32_t dpbusd_loop(int64_t iters) {
  __m512i acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  }
  __m512i s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  int32_t total = 0;
  for (int32_t v : lanes) total += v;
  return total;
}

volatile int32_t g_sink;

}  // namespace

std::optional<double> measure_int8_gops(int threads) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512vnni")) return std::nullopt;
  threads = std::max(threads, 1);
  constexpr int64_t kIters = 20'000'000;  // ~0.1 s per thread
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {  // the best of three: a busy machine reads low
    std::atomic<bool> go{false};
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        g_sink = dpbusd_loop(kIters);
      });
    while (ready.load() < threads) std::this_thread::yield();
    const int64_t start = steady_now_ns();
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
    const double s = static_cast<double>(steady_now_ns() - start) / 1e9;
    // Each dpbusd: 64 uint8 x int8 products summed into 16 lanes: 64 multiply-adds, 128 ops.
    best = std::max(best, static_cast<double>(kIters) * kChains * 128 * threads / s / 1e9);
  }
  return best;
}

Prediction predict_speedup(const Model& float_model, const std::vector<RtValue>& feeds,
                           const std::vector<NodeDecision>& int8_nodes, int threads) {
  const int n_threads = resolve_threads(threads);
  // Both peaks measured now, so the machine's load falls on both alike.
  const MachinePeak peak = measure_peak(n_threads);
  Prediction p{.cpu = peak.cpu, .fp32_gflops = peak.gflops, .gbps = peak.gbps(),
               .int8_gops = measure_int8_gops(n_threads)};
  ProfileTarget target(clone_model(float_model), "fast", threads);
  const ProfileSummary s = summarize(profile_runs(target, feeds, {.warmup = 1, .runs = 5}), peak.roofline());
  std::set<std::string> quantized;
  for (const NodeDecision& d : int8_nodes)
    if (d.precision == "int8") quantized.insert(d.node);
  p.fp32_ms = s.latency.mean_ms;
  double saved = 0;
  const double int8_rate = p.int8_gops.value_or(p.fp32_gflops);
  for (const WorkStats& n : s.nodes) {
    if (n.depth != 0 || !quantized.contains(n.label)) continue;
    const double fp32_roof = std::max(n.flops / (p.fp32_gflops * 1e6), n.bytes / (p.gbps * 1e6));
    const double int8_roof = std::max(n.flops / (int8_rate * 1e6), n.bytes / 4 / (p.gbps * 1e6));
    const double int8_ms = fp32_roof > 0 ? n.ms * int8_roof / fp32_roof : n.ms;
    p.nodes.push_back({n.label, n.op_type, n.ms, int8_ms, n.compute_bound});
    saved += n.ms - int8_ms;
  }
  p.predicted_ms = std::max(p.fp32_ms - saved, 1e-6);
  std::sort(p.nodes.begin(), p.nodes.end(), [](const NodePrediction& a, const NodePrediction& b) {
    return a.fp32_ms - a.int8_ms > b.fp32_ms - b.int8_ms;
  });
  return p;
}

}  // namespace kiln::quant
