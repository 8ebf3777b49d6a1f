#include "cli/bench_stream.h"

#include <chrono>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/json_text.h"
#include "profile/bench_report.h"
#include "runtime/compare.h"
#include "runtime/random_inputs.h"

namespace kiln::cli {

namespace {

struct StreamRun {
  int64_t value = 0;  // the drawn dim
  double ms = 0;
  bool planned = false;  // this run made a plan
};

int64_t plans_made(const engine::ModelRunner& r) {
  const auto s = r.plan_stats();
  return s ? s->made : 0;
}

std::vector<double> times_of(const std::vector<StreamRun>& runs, int planned) {
  std::vector<double> ms;
  for (const StreamRun& r : runs)
    if (planned < 0 || r.planned == (planned == 1)) ms.push_back(r.ms);
  return ms;
}

nlohmann::json summary_json(const std::vector<double>& ms) {
  const LatencySummary s = latency_summary(ms);
  return {{"runs", ms.size()}, {"p50_ms", s.p50}, {"p90_ms", s.p90}, {"p99_ms", s.p99},
          {"max_ms", s.max}, {"mean_ms", s.mean}, {"min_ms", s.min}};
}

std::string summary_text(const std::vector<double>& ms) {
  const LatencySummary s = latency_summary(ms);
  return fmt::format("p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms, mean {:.3f} ms",
                     s.p50, s.p90, s.p99, s.max, s.mean);
}

// The first output of `actual` that differs from `expected`'s, said; empty when all agree.
std::string first_difference(const engine::ModelRunner& runner, const std::vector<RtValue>& actual,
                             const std::vector<RtValue>& expected) {
  for (size_t k = 0; k < actual.size() && k < expected.size(); ++k) {
    const Comparison c = compare_values(actual[k], expected[k], Tolerance{.rtol = 1e-3, .atol = 1e-4, .atol_scales = true});
    if (!c.equal) return fmt::format("output '{}': {}", runner.outputs()[k]->name, c.reason);
  }
  return actual.size() == expected.size() ? "" : "a different number of outputs";
}

}  // namespace

int bench_stream(engine::ModelRunner& runner, const StreamOptions& o,
                 engine::ModelRunner* reference) {
  check_vary_dim(runner.inputs(), o.range);
  const size_t total = static_cast<size_t>(o.warmup) + static_cast<size_t>(o.iterations);
  const std::vector<int64_t> values = draw_stream(o.range, o.seed, total);
  std::vector<StreamRun> runs;
  runs.reserve(static_cast<size_t>(o.iterations));
  engine::PlanCacheStats before;
  int checked = 0;
  for (size_t i = 0; i < total; ++i) {
    // Each run's feeds are made before its timer starts: random values of this run's dims.
    RandomInputOptions random{.seed = o.seed + i, .dims = o.dims, .masks_of_ones = true};
    random.dims[o.range.name] = values[i];
    const std::vector<RtValue> feeds = random_inputs(runner.inputs(), random);
    if (i == static_cast<size_t>(o.warmup)) before = runner.plan_stats().value_or(before);
    const int64_t made = plans_made(runner);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<RtValue> outs = runner.run(feeds);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (reference && i < static_cast<size_t>(o.check)) {
      const std::string diff = first_difference(runner, outs, reference->run(feeds));
      if (!diff.empty()) {
        std::cerr << fmt::format("--check: run {} ({}={}): {}\n", i, o.range.name, values[i], diff);
        return 1;
      }
      ++checked;
    }
    if (i >= static_cast<size_t>(o.warmup))
      runs.push_back({.value = values[i], .ms = ms, .planned = plans_made(runner) > made});
  }
  const bool planned_engine = runner.plan_stats().has_value();  // not the reference engine
  const engine::PlanCacheStats after = runner.plan_stats().value_or(engine::PlanCacheStats{});
  const int64_t made = after.made - before.made, reused = after.reused - before.reused;
  const double planning_ms = after.planning_ms - before.planning_ms,
               facts_ms = after.facts_ms - before.facts_ms,
               lowering_ms = after.lowering_ms - before.lowering_ms,
               memory_ms = after.memory_ms - before.memory_ms;
  const std::vector<double> all = times_of(runs, -1), planned = times_of(runs, 1),
                            reusing = times_of(runs, 0);
  if (o.json) {
    nlohmann::json j = summary_json(all);
    j["model"] = o.label;
    j["vary"] = fmt::format("{}={}..{}", o.range.name, o.range.lo, o.range.hi);
    j["seed"] = o.seed;
    j["threads"] = o.threads;
    j["warmup"] = o.warmup;
    j["load_ms"] = o.load_ms;
    j["checked_runs"] = checked;
    j["plans"] = nullptr;
    if (planned_engine)
      j["plans"] = {{"made", made}, {"reused", reused}, {"evicted", after.evicted - before.evicted},
                  {"kept", after.kept}, {"planning_ms", planning_ms}, {"facts_ms", facts_ms},
                  {"lowering_ms", lowering_ms}, {"memory_ms", memory_ms},
                  {"run_memory_bytes", after.run_memory_bytes},
                  {"runs_on_one_thread", after.runs_on_one_thread - before.runs_on_one_thread}};
    j["new_plan_runs"] = summary_json(planned);
    j["reused_plan_runs"] = summary_json(reusing);
    nlohmann::json stream = nlohmann::json::array();
    for (const StreamRun& r : runs) stream.push_back({r.value, r.ms, r.planned});
    j["stream"] = stream;  // [value, ms, made a plan] per timed run, in order
    std::cout << json_text(j) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "{} ({} threads), {} drawn anew per run from {}..{} (seed {})\n"
      "  session creation  {:.2f} ms\n"
      "  latency           {} ({} runs after {} warmup)\n",
      o.label, o.threads ? std::to_string(o.threads) : "default", o.range.name, o.range.lo,
      o.range.hi, o.seed, o.load_ms, summary_text(all), o.iterations, o.warmup);
  if (planned_engine)
    std::cout << fmt::format(
        "  plans             {} made, {} reused, {} evicted ({} kept); {:.1f} ms making them "
        "(facts {:.1f}, lowering {:.1f}, memory {:.1f}); all run in {:.1f} MB\n",
        made, reused, after.evicted - before.evicted, after.kept, planning_ms, facts_ms,
        lowering_ms, memory_ms, after.run_memory_bytes / 1e6);
  if (planned_engine && after.runs_on_one_thread > before.runs_on_one_thread)
    std::cout << fmt::format("  oversubscribed    {} runs on one thread: more threads wanted the cores "
                             "than there are (engine/thread_backoff.h)\n",
                             after.runs_on_one_thread - before.runs_on_one_thread);
  if (checked)
    std::cout << fmt::format("  checked           the outputs of the first {} runs agree with the "
                             "reference engine's\n", checked);
  if (planned_engine && !planned.empty())
    std::cout << fmt::format("  runs making a plan   {} ({})\n", summary_text(planned), planned.size());
  if (planned_engine && !reusing.empty())
    std::cout << fmt::format("  runs reusing a plan  {} ({})\n", summary_text(reusing), reusing.size());
  return 0;
}

}  // namespace kiln::cli
