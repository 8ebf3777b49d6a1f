// kiln bench: session creation time, latency percentiles, throughput and peak memory of a model;
// with --compare or --baseline, the same for a baseline, the two taking turns; --html draws them.
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "artifact/load/artifact.h"
#include "backend/engine_placement.h"
#include "cli/bench_stream.h"
#include "cli/commands.h"
#include "cli/input_options.h"
#include "cli/json_text.h"
#include "cli/model_opener.h"
#include "engine/runner.h"
#include "profile/bench_report.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln::cli {

namespace {

struct BenchOptions {
  std::string model, inputs, engine = "fast", html, baseline, precision = "fp32", vary, tune;
  uint64_t seed = 0;
  int threads = 0, iterations = 50, warmup = 5, level = 2, check = 0, max_plans = 16;
  bool json = false, compare = false, allow_newer_opset = false;
  std::vector<std::string> dims;
  BackendFlags placement;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

struct OpenModel {
  std::unique_ptr<engine::ModelRunner> runner;
  std::vector<RtValue> feeds;
};

// Opens b.model at -O b.optimize_level (session creation timed into b.load_ms).
std::unique_ptr<engine::ModelRunner> open_bench_runner(const BenchOptions& o, BenchRun& b) {
  const auto t0 = std::chrono::steady_clock::now();
  auto runner = open_runner(b.model, engine::parse_engine_kind(o.engine),
                            {.threads = o.threads, .optimize_level = b.optimize_level,
                             .max_plans = o.max_plans, .allow_newer_opset = o.allow_newer_opset, .bf16 = o.precision == "bf16",
                             .placement = backend::make_placement(o.placement.backends,
                                                                  o.placement.strict, o.threads),
                             .tune = tune_mode(o.tune)});
  b.load_ms = ms_since(t0);
  return runner;
}

// ... with its feeds.
OpenModel open_for_bench(const BenchOptions& o, const std::map<std::string, int64_t>& dims,
                         BenchRun& b) {
  OpenModel m;
  m.runner = open_bench_runner(o, b);
  m.feeds = input_feeds(o.inputs, m.runner->inputs(), {.dims = dims},
                        [&](const std::vector<RtValue>& feeds) { m.runner->run(feeds); });
  return m;
}

// --vary: the stream (cli/bench_stream.h) instead of one set of feeds.
int bench_vary(const BenchOptions& o, const std::map<std::string, int64_t>& dims) {
  KILN_CHECK(o.inputs.empty() && !o.compare && o.baseline.empty() && o.html.empty(),
             ErrorKind::kBadInput,
             "--vary makes its own random inputs and benches one model: it takes no --inputs, "
             "--compare, --baseline or --html");
  const VaryRange range = parse_vary(o.vary);
  KILN_CHECK(!dims.contains(range.name), ErrorKind::kBadInput,
             "--vary {}: --dim sets '{}' too; give one of them", o.vary, range.name);
  BenchRun b{.model = o.model, .optimize_level = o.level};
  auto runner = open_bench_runner(o, b);
  // --check: the model as given (-O 0) on the reference engine.
  std::unique_ptr<engine::ModelRunner> reference;
  if (o.check > 0)
    reference = open_runner(o.model, engine::EngineKind::kReference,
                            {.threads = o.threads, .allow_newer_opset = o.allow_newer_opset});
  return bench_stream(*runner,
                      {.range = range, .dims = dims, .seed = o.seed, .iterations = o.iterations,
                       .warmup = o.warmup, .json = o.json, .label = o.model, .threads = o.threads,
                       .load_ms = b.load_ms, .check = o.check},
                      reference.get());
}

nlohmann::json run_json(const BenchReport& r, const BenchRun& b) {
  const LatencySummary s = latency_summary(b.ms);
  nlohmann::json j = {
      {"model", b.model}, {"engine", r.engine}, {"threads", r.threads},
      {"iterations", r.counts.iterations}, {"warmup", r.counts.warmup},
      {"optimize_level", b.optimize_level}, {"load_ms", b.load_ms},
      {"first_run_ms", b.first_run_ms}, {"p50_ms", s.p50}, {"p90_ms", s.p90}, {"p99_ms", s.p99},
      {"mean_ms", s.mean}, {"min_ms", s.min}, {"throughput_per_s", s.throughput_per_s},
      {"peak_rss_mb", r.peak_rss_mb}, {"runs_on_one_thread", b.runs_on_one_thread},
      {"gomp_spincount", std::getenv("GOMP_SPINCOUNT") ? std::getenv("GOMP_SPINCOUNT") : ""}};
  if (b.plan) {
    j["steps"] = b.plan->steps;
    j["kernels"] = b.plan->kernels;
    j["arena_mb"] = static_cast<double>(b.plan->arena_bytes) / (1 << 20);
  }
  return j;
}

void print_run(const BenchReport& r, const BenchRun& b) {
  const LatencySummary s = latency_summary(b.ms);
  std::cout << fmt::format(
      "{} ({} engine, {} threads{})\n"
      "  session creation  {:.2f} ms (first run {:.2f} ms)\n"
      "  latency           p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, mean {:.3f} ms, min {:.3f} ms"
      " ({} runs after {} warmup)\n"
      "  throughput        {:.1f} runs/s\n"
      "  peak RSS          {:.1f} MB\n",
      b.model, r.engine, r.threads ? std::to_string(r.threads) : "default",
      r.runs.size() > 1 ? ", " + b.label : "", b.load_ms, b.first_run_ms, s.p50, s.p90, s.p99,
      s.mean, s.min, r.counts.iterations, r.counts.warmup, s.throughput_per_s, r.peak_rss_mb);
  if (b.runs_on_one_thread > 0)
    std::cout << fmt::format("  oversubscribed    {} of the {} runs on one thread: more threads wanted the "
                             "cores than there are (engine/thread_backoff.h)\n",
                             b.runs_on_one_thread, b.ms.size());
  if (b.plan) {
    std::string kernels;
    for (const auto& [k, n] : b.plan->kernels) kernels += fmt::format(" {} {},", k, n);
    if (!kernels.empty()) kernels.pop_back();
    std::cout << fmt::format("  plan              {} steps:{}; activations {:.1f} MB\n",
                             b.plan->steps, kernels,
                             static_cast<double>(b.plan->arena_bytes) / (1 << 20));
  }
}

// Where an artifact's session creation went (src/artifact: read, checks, plans).
nlohmann::json load_json(const artifact::LoadTimes& t) {
  return {{"read_ms", t.read}, {"check_ms", t.check}, {"plans_ms", t.plans}, {"plans", t.plans_made},
          {"packed_entries", t.packed_entries}, {"packed_taken", t.packed_taken},
          {"reordered", t.reordered}};
}

void print_load(const artifact::LoadTimes& t) {
  std::cout << fmt::format(
      "  artifact load     read {:.1f} ms, checks {:.1f} ms, plans {:.1f} ms ({} made ahead; {} of "
      "{} pre-packed weights taken, {} reordered)\n",
      t.read, t.check, t.plans, t.plans_made, t.packed_taken, t.packed_entries, t.reordered);
}

int bench(const BenchOptions& o) {
  BenchReport r{.engine = o.engine, .threads = o.threads,
                .counts = {.iterations = o.iterations, .warmup = o.warmup}};
  // Bad flags fail before any model is loaded.
  engine::parse_engine_kind(o.engine);
  const auto dims = parse_dims(o.dims);
  KILN_CHECK(o.check == 0 || !o.vary.empty(), ErrorKind::kBadInput,
             "--check compares a --vary stream's outputs: give --vary NAME=LO..HI");
  if (!o.vary.empty()) return bench_vary(o, dims);
  KILN_CHECK(!o.compare || o.level > 0, ErrorKind::kBadInput,
             "--compare benches -O 0 against -O N: give -O 1 or more");
  KILN_CHECK(!o.compare || !artifact::is_artifact_file(o.model), ErrorKind::kBadInput,
             "--compare benches an .onnx at two -O levels; '{}' is a compiled artifact: give "
             "--baseline MODEL.onnx to bench it against its .onnx", o.model);
  if (o.compare)
    r.runs.push_back({.label = "-O 0", .model = o.model, .optimize_level = 0});
  else if (!o.baseline.empty())
    r.runs.push_back({.label = "baseline " + std::filesystem::path(o.baseline).filename().string(),
                      .model = o.baseline,
                      .optimize_level = o.level});
  r.runs.push_back({.label = o.compare ? fmt::format("-O {}", o.level)
                                       : std::filesystem::path(o.model).filename().string(),
                    .model = o.model,
                    .optimize_level = o.level});
  // Both models stay open so that their timed runs can take turns.
  std::vector<OpenModel> opened;
  for (BenchRun& b : r.runs) opened.push_back(open_for_bench(o, dims, b));
  std::vector<BenchSubject> subjects;
  for (size_t i = 0; i < r.runs.size(); ++i)
    subjects.push_back({opened[i].runner.get(), &opened[i].feeds, &r.runs[i]});
  time_runs(subjects, r.counts);
  r.peak_rss_mb = peak_rss_mb();
  const BenchRun& model = r.runs.back();
  if (!o.html.empty()) write_file_atomically(o.html, bench_html(r));
  if (o.json) {
    nlohmann::json j = run_json(r, model);
    if (const auto* t = artifact::artifact_load_times(*opened.back().runner)) j["artifact_load"] = load_json(*t);
    if (r.runs.size() > 1) j["baseline"] = run_json(r, r.runs.front());
    std::cout << json_text(j) << "\n";
    return 0;
  }
  for (size_t i = 0; i < r.runs.size(); ++i) {
    print_run(r, r.runs[i]);
    if (const auto* t = artifact::artifact_load_times(*opened[i].runner)) print_load(*t);
  }
  if (r.runs.size() > 1) {
    const BenchRun& base = r.runs.front();
    std::cout << fmt::format("{} / {}: p50 {:.3f}, mean {:.3f}\n", model.label, base.label,
                             latency_summary(model.ms).p50 / latency_summary(base.ms).p50,
                             latency_summary(model.ms).mean / latency_summary(base.ms).mean);
  }
  if (!o.html.empty()) std::cout << fmt::format("html: {}\n", o.html);
  return 0;
}

}  // namespace

Action add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  app.add_option("model", o->model, "ONNX model file or compiled artifact (.kiln)")->required();
  app.add_option("--inputs", o->inputs, "Folder of input_N.pb files (default: seeded random inputs)");
  app.add_option("--threads", o->threads, "Threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("--iterations", o->iterations, "Timed runs (default 50)")->check(CLI::Range(1, 1000000));
  app.add_option("--warmup", o->warmup, "Untimed runs first (default 5)")->check(CLI::Range(0, 1000000));
  app.add_option("--engine", o->engine, "fast (default) or reference");
  app.add_option("-O", o->level, "Optimize the model first as kiln optimize -O N does (default 2; 0: as it is)")
      ->check(CLI::Range(0, 3));
  app.add_option("--dim", o->dims, "Value of a symbolic dim for random inputs, NAME=VALUE (default 1)");
  app.add_option("--vary", o->vary,
                 "A stream: the symbolic dim NAME drawn anew (uniform, seeded) for every run, "
                 "NAME=LO..HI; random inputs of those dims, plans made and reused counted");
  app.add_option("--seed", o->seed, "Seed of --vary's draws and inputs (default 0)");
  app.add_option("--check", o->check,
                 "With --vary: compare the first N runs' outputs with the reference engine's (untimed)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--max-plans", o->max_plans,
                 "Plans the fast engine keeps, one per set of input dims (default 16)")
      ->check(CLI::Range(1, 100000));
  add_allow_newer_opset(app, o->allow_newer_opset);
  add_precision(app, o->precision);
  add_tune(app, o->tune);
  add_backend_flags(app, o->placement);
  app.add_flag("--json", o->json, "Print one JSON object (with a baseline: under \"baseline\")");
  app.add_option("--html", o->html, "Write a self-contained HTML page with the latency charts here");
  auto* compare = app.add_flag("--compare", o->compare,
                               "Bench the model at -O 0 first as the baseline (before and after the optimizer)");
  app.add_option("--baseline", o->baseline,
                 "Bench this other model first as the baseline (same -O, inputs and dims)")
      ->excludes(compare);
  return [o]() { return bench(*o); };
}

}  // namespace kiln::cli
