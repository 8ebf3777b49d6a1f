// kiln profile: runs a model N times node by node and reports where the time went, against the
// machine's measured peaks: a terminal table or JSON, a Chrome trace, an HTML page.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "artifact/load/artifact.h"
#include "backend/engine_placement.h"
#include "cli/commands.h"
#include "cli/input_options.h"
#include "cli/json_text.h"
#include "cli/model_opener.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "opt/pipeline.h"
#include "profile/chrome_trace.h"
#include "profile/precision_forecast.h"
#include "profile/profile_target.h"
#include "profile/report.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln::cli {

namespace {

struct ProfileOptions {
  std::string model, inputs, trace, html, predict, engine = kDefaultProfileEngine;
  int runs = 10, warmup = 1, threads = 0, top = 15, level = 0;
  uint64_t seed = 0;
  std::vector<std::string> dims;
  BackendFlags placement;
  bool json = false, no_cache = false, plan = false, allow_newer_opset = false;
};


}  // namespace

MeasuredProfile measure_profile(const ProfileRequest& q) {
  const int threads = resolve_threads(q.threads);
  ModelRewrite optimize;
  if (q.level > 0) {
    optimize = [level = q.level, newer = q.allow_newer_opset](Model& m) {
      check_model(m, {.allow_newer_opset = newer});  // its warnings: the executor says them
      infer_shapes(m);
      opt::optimize(m, opt::level_pipeline(level));
    };
  }
  std::unique_ptr<ProfileTarget> target;
  if (artifact::is_artifact_file(q.model)) {  // a compiled artifact: opened as it is, no -O
    const int64_t start = steady_now_ns();
    auto runner = open_runner(q.model, engine::parse_engine_kind(q.engine),
                              {.threads = threads, .placement = backend::make_placement(q.backends, q.strict, threads)});
    target = std::make_unique<ProfileTarget>(
        std::move(runner), q.engine,
        std::vector<SessionPhase>{{"session_initialization", {start, steady_now_ns()}}});
  } else {
    target = load_target(q.model, q.engine, threads, optimize, q.allow_newer_opset,
                         backend::make_placement(q.backends, q.strict, threads));
  }
  const auto feeds =
      input_feeds(q.inputs, target->inputs(), {.seed = q.seed, .dims = parse_dims(q.dims)},
                  [&](const std::vector<RtValue>& feeds) { target->run(feeds, nullptr); });
  ProfileReport r;
  r.threads = threads;
  r.peak = machine_peak(threads, !q.no_cache);
  r.data = profile_runs(*target, feeds, {.warmup = q.warmup, .runs = q.runs});
  r.model = summarize_model(target->model(), q.model, target->inputs(), feeds);
  r.summary = summarize(r.data, r.peak.roofline());
  return {std::move(target), std::move(r)};
}

namespace {

int profile(const ProfileOptions& o) {
  const MeasuredProfile measured =
      measure_profile({.model = o.model, .inputs = o.inputs, .engine = o.engine,
                       .backends = o.placement.backends, .strict = o.placement.strict, .threads = o.threads,
                       .level = o.level, .runs = o.runs, .warmup = o.warmup, .seed = o.seed,
                       .dims = o.dims, .no_cache = o.no_cache, .allow_newer_opset = o.allow_newer_opset});
  const ProfileReport& r = measured.report;
  if (!o.trace.empty())
    write_file_atomically(o.trace, json_text(chrome_trace(r.data, getpid(), getpid())) + "\n");
  if (!o.html.empty()) write_file_atomically(o.html, profile_html(r));
  std::optional<PrecisionForecast> forecast;
  if (!o.predict.empty()) {
    const ReducedPrecision p = parse_reduced_precision(o.predict);
    forecast = forecast_precision(r.data, r.summary, r.peak, p, measured_gemm_gain(p, r.peak.threads));
  }
  if (o.json) {
    nlohmann::ordered_json j = profile_json(r);
    if (forecast) j["forecast"] = forecast_json(*forecast);
    std::cout << json_text(j, 2) << "\n";
  } else {
    if (o.plan && measured.target->plan()) std::cout << measured.target->plan()->listing << "\n";
    std::cout << profile_table(r, o.top);
    if (forecast) std::cout << "\n" << forecast_text(*forecast, o.top);
    if (!o.trace.empty()) std::cout << "\ntrace written to " << o.trace << "\n";
    if (!o.html.empty()) std::cout << (o.trace.empty() ? "\n" : "") << "HTML written to " << o.html << "\n";
  }
  return 0;
}

}  // namespace

Action add_profile(CLI::App& app) {
  auto o = std::make_shared<ProfileOptions>();
  app.add_option("model", o->model, "ONNX model file")->required();
  app.add_option("--inputs", o->inputs,
                 "Folder of input_N.pb files (default: seeded random inputs, symbolic dims 1)");
  app.add_option("--runs", o->runs, "Measured runs")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", o->warmup, "Runs before measuring")->check(CLI::Range(0, 100000));
  app.add_option("--trace", o->trace, "Write a Chrome trace (chrome://tracing, Perfetto) here");
  app.add_option("--html", o->html, "Write a self-contained HTML report here");
  add_backend_flags(app, o->placement);
  app.add_flag("--json", o->json, "Print one JSON object instead of the table");
  app.add_option("--threads", o->threads, "Kernel and probe threads (default: all)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--engine", o->engine, "Executor to profile: fast (default) or reference")
      ->check(CLI::IsMember(profile_engines()));
  app.add_option("-O", o->level,
                 "Optimize the model first at this level, as kiln optimize -O does (default 0: "
                 "as loaded)")
      ->check(CLI::Range(0, 3));
  app.add_option("--dim", o->dims, "Value of a symbolic input dim, NAME=VALUE (repeatable)");
  app.add_option("--seed", o->seed, "Seed of the random inputs");
  app.add_option("--top", o->top, "Rows of each terminal table")->check(CLI::Range(1, 100000));
  app.add_flag("--plan", o->plan,
               "Print the fast engine's plan first: each step's kernel, node, and the slots it "
               "reads and writes with their layouts");
  app.add_option("--predict", o->predict,
                 "Also say what reduced precision should buy on this CPU, from this profile and "
                 "the measured peaks: int8 (static), int8-dynamic or bf16")
      ->check(CLI::IsMember({"int8", "int8-dynamic", "bf16"}));
  app.add_flag("--no-cache", o->no_cache, "Measure the machine's peaks again (and re-cache them)");
  add_allow_newer_opset(app, o->allow_newer_opset);
  return [o]() { return profile(*o); };
}

}  // namespace kiln::cli
