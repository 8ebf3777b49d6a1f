// kiln bench: session creation time, latency percentiles, throughput and peak memory of a model.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/random_inputs.h"
#include "engine/runner.h"
#include "support/error.h"
#include "tools/commands.h"
#include "tools/json_text.h"
#include "tools/test_data.h"

namespace kiln::tools {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The value at fraction q of sorted samples (nearest rank).
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const std::string& s : specs) {
    const size_t eq = s.find('=');
    KILN_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < s.size(), ErrorKind::kBadInput,
               "--dim needs NAME=VALUE, got '{}'", s);
    const std::string v = s.substr(eq + 1);
    KILN_CHECK(v.size() < 12 && std::all_of(v.begin(), v.end(), ::isdigit), ErrorKind::kBadInput,
               "--dim {}: the value must be a non-negative integer", s);
    dims[s.substr(0, eq)] = std::stoll(v);
  }
  return dims;
}

}  // namespace

Action add_bench(CLI::App& app) {
  struct Options {
    std::string model, inputs, engine = "fast";
    int threads = 0, iterations = 50, warmup = 5, level = 2;
    bool json = false;
    std::vector<std::string> dims;
  };
  auto o = std::make_shared<Options>();
  app.add_option("model", o->model, "ONNX model file")->required();
  app.add_option("--inputs", o->inputs, "Folder of input_N.pb files (default: seeded random inputs)");
  app.add_option("--threads", o->threads, "Threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("--iterations", o->iterations, "Timed runs (default 50)")->check(CLI::Range(1, 1000000));
  app.add_option("--warmup", o->warmup, "Untimed runs first (default 5)")->check(CLI::Range(0, 1000000));
  app.add_option("--engine", o->engine, "fast (default) or reference");
  app.add_option("-O", o->level, "Optimize the model first as kiln optimize -O N does (default 2; 0: as it is)")
      ->check(CLI::Range(0, 3));
  app.add_option("--dim", o->dims, "Value of a symbolic dim for random inputs, NAME=VALUE (default 1)");
  app.add_flag("--json", o->json, "Print one JSON object");
  return [o]() {
    const auto kind = engine::parse_engine_kind(o->engine);
    const auto dims = parse_dims(o->dims);
    const auto t0 = std::chrono::steady_clock::now();
    auto runner = engine::open_model(o->model, kind, {.threads = o->threads, .optimize_level = o->level});
    const double load_ms = ms_since(t0);
    const auto feeds = o->inputs.empty() ? engine::random_inputs(runner->inputs(), 0, dims)
                                         : read_values(o->inputs, "input", runner->inputs());
    const auto t1 = std::chrono::steady_clock::now();
    runner->run(feeds);
    const double first_ms = ms_since(t1);
    for (int i = 1; i < o->warmup; ++i) runner->run(feeds);
    std::vector<double> times;
    times.reserve(o->iterations);
    for (int i = 0; i < o->iterations; ++i) {
      const auto t = std::chrono::steady_clock::now();
      runner->run(feeds);
      times.push_back(ms_since(t));
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (double t : times) sum += t;
    const double mean = sum / static_cast<double>(times.size());
    nlohmann::json j = {
        {"model", o->model}, {"engine", o->engine}, {"threads", o->threads},
        {"iterations", o->iterations}, {"warmup", o->warmup}, {"optimize_level", o->level},
        {"load_ms", load_ms},
        {"first_run_ms", first_ms}, {"p50_ms", percentile(sorted, 0.5)},
        {"p90_ms", percentile(sorted, 0.9)}, {"p99_ms", percentile(sorted, 0.99)},
        {"mean_ms", mean}, {"min_ms", sorted.front()}, {"throughput_per_s", 1000.0 / mean},
        {"peak_rss_mb", peak_rss_mb()},
        {"gomp_spincount", std::getenv("GOMP_SPINCOUNT") ? std::getenv("GOMP_SPINCOUNT") : ""}};
    const auto plan = runner->summary(feeds);
    if (plan) {
      j["steps"] = plan->steps;
      j["kernels"] = plan->kernels;
      j["arena_mb"] = static_cast<double>(plan->arena_bytes) / (1 << 20);
    }
    if (o->json) {
      std::cout << json_text(j) << "\n";
      return 0;
    }
    std::cout << fmt::format(
        "{} ({} engine, {} threads)\n"
        "  session creation  {:.2f} ms (first run {:.2f} ms)\n"
        "  latency           p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, mean {:.3f} ms, min {:.3f} ms"
        " ({} runs after {} warmup)\n"
        "  throughput        {:.1f} runs/s\n"
        "  peak RSS          {:.1f} MB\n",
        o->model, o->engine, o->threads ? std::to_string(o->threads) : "default", load_ms, first_ms,
        percentile(sorted, 0.5), percentile(sorted, 0.9), percentile(sorted, 0.99), mean,
        sorted.front(), o->iterations, o->warmup, 1000.0 / mean, peak_rss_mb());
    if (plan) {
      std::string kernels;
      for (const auto& [k, n] : plan->kernels) kernels += fmt::format(" {} {},", k, n);
      kernels.pop_back();
      std::cout << fmt::format("  plan              {} steps:{}; activations {:.1f} MB\n", plan->steps,
                               kernels, static_cast<double>(plan->arena_bytes) / (1 << 20));
    }
    return 0;
  };
}

}  // namespace kiln::tools
