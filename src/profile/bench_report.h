// What `kiln bench` measures: a model run again and again with each run timed, optionally beside a
// baseline (the same model before the optimizer, or another model) timed the same way; and the
// self-contained HTML page of it (latency distribution, histogram, runs in order, nodes by op).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/compiled_model.h"
#include "engine/runner.h"
#include "ir/rt_value.h"
#include "opt/record.h"

namespace kiln {

// Percentiles by nearest rank, as kiln bench has always printed them.
struct LatencySummary {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0, max = 0;
  double throughput_per_s = 0;  // 1000 / mean
};
LatencySummary latency_summary(const std::vector<double>& ms);

struct BenchCounts {
  int iterations = 50;  // timed runs
  int warmup = 5;       // untimed runs first, the first of them timed on its own
};

// One model as benchmarked.
struct BenchRun {
  std::string label;         // how the report names it: "-O 2", "-O 0", "resnet50.onnx"
  std::string model;         // its path
  int optimize_level = 0;    // the optimizer's -O before the engine
  double load_ms = 0;        // session creation: load, optimize, compile
  double first_run_ms = 0;   // the first run (plan made for the input shapes)
  std::vector<double> ms;    // each timed run, in order
  std::optional<engine::PlanSummary> plan;  // the fast engine's plan for the feeds
  int64_t runs_on_one_thread = 0;  // timed runs the engine put on one thread, the cores
                                   // oversubscribed (engine/thread_backoff.h)
  opt::ModelStats graph;     // the model as the engine got it (after -O)
};

// A model opened for benchmarking: its runner, feeds, and where its numbers go.
struct BenchSubject {
  engine::ModelRunner* runner = nullptr;
  const std::vector<RtValue>* feeds = nullptr;
  BenchRun* out = nullptr;
};

// Times the subjects per `counts` into their BenchRun (first_run_ms, ms, plan, graph): each one's
// first run and warmup, then the timed runs taking turns (A B A B ...), so a change in the
// machine's load during the benchmark falls on every subject alike.
void time_runs(const std::vector<BenchSubject>& subjects, const BenchCounts& counts);

struct BenchReport {
  std::string engine;   // "fast", "reference"
  int threads = 0;      // 0: the default (every core)
  BenchCounts counts;
  double peak_rss_mb = 0;
  std::vector<BenchRun> runs;  // the model, after its baseline when there is one
};

std::string bench_html(const BenchReport& r);

}  // namespace kiln
