#include "profile/bench_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kiln {

namespace {

// The value at fraction q of sorted samples (nearest rank).
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

LatencySummary latency_summary(const std::vector<double>& ms) {
  LatencySummary s;
  if (ms.empty()) return s;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double t : ms) sum += t;
  s.mean = sum / static_cast<double>(ms.size());
  s.p50 = percentile(sorted, 0.5);
  s.p90 = percentile(sorted, 0.9);
  s.p99 = percentile(sorted, 0.99);
  s.min = sorted.front();
  s.max = sorted.back();
  s.throughput_per_s = s.mean > 0 ? 1000.0 / s.mean : 0;
  return s;
}

void time_runs(const std::vector<BenchSubject>& subjects, const BenchCounts& counts) {
  for (const BenchSubject& s : subjects) {
    const auto t1 = std::chrono::steady_clock::now();
    s.runner->run(*s.feeds);
    s.out->first_run_ms = ms_since(t1);
    for (int i = 1; i < counts.warmup; ++i) s.runner->run(*s.feeds);
    s.out->ms.clear();
    s.out->ms.reserve(counts.iterations);
  }
  std::vector<int64_t> on_one_before;
  for (const BenchSubject& s : subjects) {
    const auto stats = s.runner->plan_stats();
    on_one_before.push_back(stats ? stats->runs_on_one_thread : 0);
  }
  for (int i = 0; i < counts.iterations; ++i)
    for (const BenchSubject& s : subjects) {
      const auto t = std::chrono::steady_clock::now();
      s.runner->run(*s.feeds);
      s.out->ms.push_back(ms_since(t));
    }
  for (size_t i = 0; i < subjects.size(); ++i) {
    const auto stats = subjects[i].runner->plan_stats();
    subjects[i].out->runs_on_one_thread = stats ? stats->runs_on_one_thread - on_one_before[i] : 0;
  }
  for (const BenchSubject& s : subjects) {
    s.out->plan = s.runner->summary(*s.feeds);
    s.out->graph = opt::model_stats(s.runner->model());
  }
}

}  // namespace kiln
