// kiln quantize: a float model as int8 (dynamic or static, QDQ or QOperator), fp16 or bf16, with
// the quantized model's error against the float model, its size and its latency said up front.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/input_options.h"
#include "cli/json_text.h"
#include "cli/test_data.h"
#include "engine/runner.h"
#include "frontend/runners.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "profile/optimize_report.h"
#include "profile/precision_forecast.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "quant/evaluate.h"
#include "quant/mixed_precision.h"
#include "quant/quantize.h"
#include "quant/report.h"
#include "runtime/input_dims.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;
using quant::FeedSet;

// The quantizer's words (quant/options.h, shared with kiln serve's compile requests) and the rest.
struct QuantizeArgs : quant::QuantizeWords {
  std::string model, out, report;
  std::string calibrate, eval;
  int calibrate_random = 0, eval_random = 2, latency_runs = 5, threads = 0, level = 2;
  double max_loss = -1;
  bool per_channel_flag = false, per_tensor_flag = false, no_progress = false;
  bool allow_newer_opset = false, predict = false;
  uint64_t seed = 0;
  std::vector<std::string> dims;
};

struct Sets {
  std::vector<FeedSet> feeds;
  std::vector<std::string> names;
  bool random = false;
};

Sets folder_sets(const std::string& dir, engine::ModelRunner& runner) {
  Sets s;
  for (InputSet& set : read_input_sets(dir, runner.inputs())) {
    s.names.push_back(set.name);
    s.feeds.push_back(std::move(set.values));
  }
  return s;
}

// n seeded random sets from seed `first`. The first chooses the sizes of open dims (--dim, else
// the smallest that run: runtime/input_dims.h); the others take the same sizes.
Sets random_sets(int n, uint64_t first, const QuantizeArgs& a, engine::ModelRunner& runner) {
  Sets s;
  s.random = true;
  RandomInputOptions opts{.seed = first, .dims = parse_dims(a.dims)};
  for (int i = 0; i < n; ++i) {
    opts.seed = first + static_cast<uint64_t>(i);
    s.feeds.push_back(input_feeds("", runner.inputs(), opts,
                                  [&](const std::vector<RtValue>& f) { runner.run(f); }));
    s.names.push_back(fmt::format("random seed {}", opts.seed));
    for (size_t k = 0; i == 0 && k < runner.inputs().size(); ++k) {
      const auto& shape = runner.inputs()[k]->type.shape;
      if (!shape || !s.feeds[0][k].is_tensor()) continue;
      for (size_t d = 0; d < shape->size() && d < s.feeds[0][k].tensor.dims().size(); ++d) {
        const std::string& sym = (*shape)[d].sym();
        if (!sym.empty() && std::all_of(sym.begin(), sym.end(), [](char c) { return std::isalnum(c) || c == '_'; }))
          opts.dims[sym] = s.feeds[0][k].tensor.dim(d);
      }
    }
  }
  return s;
}

int64_t file_bytes(const fs::path& p) {
  std::error_code ec;
  int64_t n = static_cast<int64_t>(fs::file_size(p, ec));
  const fs::path data = p.string() + ".data";
  if (fs::exists(data, ec)) n += static_cast<int64_t>(fs::file_size(data, ec));
  return n;
}

quant::QuantizeOptions quantize_options(const QuantizeArgs& a) {
  KILN_CHECK(!(a.per_channel_flag && a.per_tensor_flag), ErrorKind::kBadInput,
             "--per-channel and --per-tensor exclude each other");
  quant::QuantizeWords w = a;
  if (a.per_channel_flag || a.per_tensor_flag) w.per_channel = a.per_channel_flag;
  return quant::quantize_options(w, "--", '-');
}

// --predict: what the mode should buy on this CPU, from a profile of the float model and the
// measured peaks (profile/precision_forecast.h), before anything is calibrated or written.
int run_predict(const QuantizeArgs& a) {
  std::optional<ReducedPrecision> precision;
  if (a.mode == "static") precision = ReducedPrecision::kInt8Static;
  if (a.mode == "dynamic") precision = ReducedPrecision::kInt8Dynamic;
  if (a.mode == "bf16") precision = ReducedPrecision::kBf16;
  KILN_CHECK(precision, ErrorKind::kBadInput,
             "--predict with --mode {}: kiln predicts int8 (static, dynamic) and bf16; fp16 models "
             "compute in float32 on the CPU", a.mode);
  const MeasuredProfile measured =
      measure_profile({.model = a.model, .threads = a.threads, .level = a.level, .seed = a.seed,
                       .dims = a.dims, .allow_newer_opset = a.allow_newer_opset});
  const ProfileReport& r = measured.report;
  std::cout << forecast_text(
      forecast_precision(r.data, r.summary, r.peak, *precision, measured_gemm_gain(*precision, r.peak.threads)));
  return 0;
}

int run_quantize(const QuantizeArgs& a) {
  using clock = std::chrono::steady_clock;
  KILN_CHECK(!a.model.empty(), ErrorKind::kBadInput, "no model given");
  if (a.predict) return run_predict(a);
  KILN_CHECK(!a.out.empty(), ErrorKind::kBadInput, "no output given (-o OUT)");
  const quant::QuantizeOptions opts = quantize_options(a);
  KILN_CHECK(!a.bf16_whole_graph || opts.mode == quant::Mode::kBFloat16, ErrorKind::kBadInput,
             "--bf16-whole-graph needs --mode bf16");
  KILN_CHECK(a.keep_io_types || opts.mode != quant::Mode::kBFloat16 || a.bf16_whole_graph,
             ErrorKind::kBadInput,
             "--mode bf16 --no-keep-io-types needs --bf16-whole-graph (bf16 weights keep every op, "
             "input and output float32)");
  KILN_CHECK(a.percentile > 0 && a.percentile <= 100, ErrorKind::kBadInput,
             "--percentile {}: expected a value in (0, 100]", a.percentile);
  KILN_CHECK(a.calibrate.empty() || a.calibrate_random == 0, ErrorKind::kBadInput,
             "--calibrate and --calibrate-random exclude each other");
  KILN_CHECK(opts.mode != quant::Mode::kStatic || !a.calibrate.empty() || a.calibrate_random > 0,
             ErrorKind::kBadInput,
             "static mode needs calibration sets: --calibrate DIR or --calibrate-random N");
  if (opts.mode == quant::Mode::kStatic && opts.weight_type == DataType::kUInt8)
    std::cerr << "kiln: warning: --weight-type uint8: weights are quantized symmetric around 128\n";

  const auto t0 = clock::now();
  Model m = load_model(a.model);
  for (const std::string& w : check_model(m, {.allow_newer_opset = a.allow_newer_opset}))
    std::cerr << "kiln: warning: " << w << "\n";
  infer_shapes(m);
  quant::check_quantizable(m, opts, a.model);  // bad filters, nothing to quantize: before any run
  // The models run as `kiln run` and `kiln bench` run them (-O 2 by default).
  const engine::EngineOptions eopts{.threads = a.threads, .optimize_level = a.level,
                                    .allow_newer_opset = a.allow_newer_opset};
  const auto open_fast = [eopts](const std::string& path) {
    return std::make_unique<quant::PerShapeRunner>(
        [path, eopts] { return frontend::open_model(path, engine::EngineKind::kFast, eopts); });
  };
  auto float_runner = open_fast(a.model);

  Sets calibration;
  if (!a.calibrate.empty()) calibration = folder_sets(a.calibrate, *float_runner);
  else if (a.calibrate_random > 0) calibration = random_sets(a.calibrate_random, a.seed, a, *float_runner);
  if (calibration.random && opts.mode == quant::Mode::kStatic)
    std::cerr << fmt::format("calibrating on {} random input sets (seed {}): the ranges, and the "
                             "accuracy figures below, then mean little for real inputs\n",
                             calibration.feeds.size(), a.seed);

  // Random calibration is measured on other random sets (the seeds after it), folders on themselves.
  const uint64_t eval_seed = a.seed + static_cast<uint64_t>(a.calibrate_random);
  const bool own_sets = !calibration.feeds.empty() && !calibration.random;
  const Sets eval = !a.eval.empty() ? folder_sets(a.eval, *float_runner)
                    : own_sets      ? calibration
                                    : random_sets(a.eval_random, eval_seed, a, *float_runner);

  const quant::CalibrationOptions copts{.method = opts.method, .percentile = a.percentile,
                                        .threads = a.threads, .progress = !a.no_progress};
  quant::QuantizeReport report{.model = a.model, .output = a.out, .options = opts};
  report.max_loss = a.max_loss;
  const bool mixed = a.max_loss >= 0;
  KILN_CHECK(!mixed || opts.mode == quant::Mode::kDynamic || opts.mode == quant::Mode::kStatic,
             ErrorKind::kBadInput, "--max-loss needs --mode dynamic or static");
  std::optional<Model> pristine;
  if (mixed) pristine = quant::clone_model(m);
  report.result = quant::quantize(m, opts, calibration.feeds, calibration.names, copts, a.model);
  if (mixed) {
    report.mixed = quant::search_mixed_precision(*pristine, opts, report.result.ranges,
                                                 report.result.decisions, *float_runner,
                                                 eval.feeds, a.max_loss, !a.no_progress);
    if (!report.mixed->kept_float.empty()) {
      // The model again, with the nodes the search kept float excluded.
      quant::QuantizeOptions kept = opts;
      for (const std::string& n : report.mixed->kept_float) kept.exclude_nodes.push_back(n);
      m = quant::clone_model(*pristine);
      quant::QuantizeResult r = quant::quantize_with_ranges(m, kept, report.result.ranges, a.model);
      r.calibration_sets = report.result.calibration_sets;
      for (quant::NodeDecision& d : r.decisions)
        for (const auto& [node, damage] : report.mixed->damage)
          if (d.node == node && (d.precision == "float" || d.precision == "bf16") &&
              std::find(opts.exclude_nodes.begin(), opts.exclude_nodes.end(), node) == opts.exclude_nodes.end())
            d.reason = fmt::format("kept {} by --max-loss: quantized alone it costs {:.3g} of cosine",
                                   d.precision, damage);
      report.result = std::move(r);
    }
  }
  save_model(m, a.out);  // written whole or not at all (a temporary file and a rename)
  report.quantize_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  m = Model{};
  pristine.reset();
  report.bytes_before = file_bytes(a.model);
  report.bytes_after = file_bytes(a.out);

  // The measurements: both models on the evaluation sets, on kiln's fast engine.
  auto quant_runner = open_fast(a.out);
  report.eval_sets = static_cast<int>(eval.feeds.size());
  report.random_inputs = eval.random;
  report.eval_source = !a.eval.empty() ? "sets of " + a.eval
                       : eval.random   ? fmt::format("random input sets (seeds from {})", eval_seed)
                                       : "calibration sets";
  if (!eval.feeds.empty()) {
    report.errors = quant::compare_models(*float_runner, *quant_runner, eval.feeds);
    if (a.latency_runs > 0) {
      report.latency_runs = a.latency_runs;
      report.threads = a.threads;
      const auto [before, after] =
          quant::median_latencies_ms(*float_runner, *quant_runner, eval.feeds[0], a.latency_runs);
      report.latency_before_ms = before;
      report.latency_after_ms = after;
    }
  }
  std::cout << quant::summary_text(report);
  std::cout << fmt::format("wrote {}\n", a.out);
  if (!a.report.empty()) {
    // An .html name gets the page; any other, the JSON record tools read.
    write_file_atomically(a.report, is_html_path(a.report)
                                        ? quant::report_html(report)
                                        : json_text(quant::report_json(report), 2) + "\n");
    std::cout << fmt::format("report: {}\n", a.report);
  }
  return 0;
}

}  // namespace

Action add_quantize(CLI::App& app) {
  auto a = std::make_shared<QuantizeArgs>();
  app.add_option("model", a->model, "ONNX model file (float32)");
  app.add_option("-o,--output", a->out, "Where to write the quantized model");
  app.add_option("--mode", a->mode,
                 "dynamic (int8 weights, activations quantized per run: MatMul/Gemm), static "
                 "(int8 weights and activations, calibrated: CNNs), fp16 or bf16 (weights stored bf16; "
                 "kiln's engine computes their convs and matmuls in bf16 where the CPU has it) "
                 "(default dynamic)");
  app.add_option("--format", a->format,
                 "static mode: qdq (QuantizeLinear/DequantizeLinear around float ops, default) or "
                 "qoperator (QLinearConv, QLinearMatMul)");
  app.add_option("--calibrate", a->calibrate,
                 "Calibration sets: a folder of input_N.pb files or of test_data_set_*/ folders");
  app.add_option("--calibrate-random", a->calibrate_random,
                 "N seeded random calibration sets (when nothing better exists)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--method", a->method, "Calibration: minmax (default), entropy or percentile");
  app.add_option("--percentile", a->percentile, "Percentile kept by --method percentile (default 99.99)");
  app.add_flag("--per-channel", a->per_channel_flag, "One weight scale per output channel for every op");
  app.add_flag("--per-tensor", a->per_tensor_flag, "One weight scale per tensor (default: per channel for Conv)");
  app.add_option("--activation-type", a->activation_type,
                 "static: uint8 (asymmetric, default) or int8 (symmetric)");
  app.add_option("--weight-type", a->weight_type, "int8 (symmetric, default) or uint8");
  app.add_option("--include-ops", a->include_ops, "Quantize only these op types (comma-separated)")
      ->delimiter(',');
  app.add_option("--exclude-ops", a->exclude_ops, "Leave these op types float")->delimiter(',');
  app.add_option("--exclude-nodes", a->exclude_nodes, "Leave these nodes float (by name)")->delimiter(',');
  app.add_flag("--keep-io-types,!--no-keep-io-types", a->keep_io_types,
               "fp16, --bf16-whole-graph: the model's inputs and outputs stay float32 (default on)");
  app.add_flag("--bf16-whole-graph", a->bf16_whole_graph,
               "bf16: every op whose schema takes bfloat16 computes in it, for runtimes with bf16 "
               "kernels (ONNX Runtime's CPU provider has none); default: the weights stored bf16, "
               "each read through a Cast to float32, which every runtime runs");
  app.add_option("--fallback", a->fallback,
                 "int8 modes: nodes --exclude-nodes and --max-loss keep out of int8 stay float "
                 "(default) or get bf16 weights read through Casts (bf16: computed in bf16 by kiln "
                 "where the CPU has it, about int8's speed there)");
  app.add_option("--eval", a->eval,
                 "Measure the error on these input sets (default: the calibration sets, else random)");
  app.add_option("--max-loss", a->max_loss,
                 "Mixed precision: keep the nodes that hurt most float until 1 - cosine of every "
                 "output on the evaluation sets is at most X (e.g. 0.01)")
      ->check(CLI::Range(0.0, 2.0));
  app.add_option("--eval-random", a->eval_random, "Random sets to measure on when there are none (default 2)");
  app.add_option("--latency-runs", a->latency_runs, "Runs per model for the latency median (0: none; default 5)");
  app.add_option("--report", a->report, "Write the report here: an HTML page when FILE ends in .html, else JSON");
  app.add_option("--dim", a->dims, "Value of a symbolic dim for random sets, NAME=VALUE");
  app.add_option("--seed", a->seed, "First random seed (default 0)");
  app.add_option("-O", a->level,
                 "Optimize both models first when measuring them, as kiln run -O N does (default 2)")
      ->check(CLI::Range(0, 3));
  app.add_option("--threads", a->threads, "Threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_flag("--no-progress", a->no_progress, "No progress bar on stderr");
  app.add_flag("--predict", a->predict,
               "Only say what --mode should buy on this CPU (from a profile of the float model and "
               "the measured int8/bf16 peaks, as kiln profile --predict does); writes nothing");
  add_allow_newer_opset(app, a->allow_newer_opset);
  return [a] { return run_quantize(*a); };
}

}  // namespace kiln::cli
