// kiln optimize: a smaller, faster, portable ONNX file, the record of every rewrite, and proof by
// running both models that the outputs did not change.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/input_options.h"
#include "cli/json_text.h"
#include "cli/test_data.h"
#include "frontend/runners.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "opt/bisect.h"
#include "opt/record.h"
#include "profile/optimize_report.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

struct OptimizeArgs {
  std::string model, out, passes, report;
  int level = 2;
  int opset = 0;
  int verify = 0;
  bool bisect = false;
  bool list = false;
  bool check_each_pass = false;
  bool external_data = false;
  bool allow_newer_opset = false;
  int64_t fold_max_bytes = int64_t{1} << 30;
  double rtol = 1e-3, atol = 1e-4;
  uint64_t seed = 0;
  std::vector<std::string> dims;
  std::vector<std::string> inputs;  // folders of input_N.pb to verify on
};

Model load_checked(const std::string& path, bool allow_newer_opset) {
  Model m = load_model(path);
  for (const std::string& w : check_model(m, {.allow_newer_opset = allow_newer_opset}))
    std::cerr << "kiln: warning: " << w << "\n";
  infer_shapes(m);
  return m;
}

// Bytes of the saved model and the external data files beside it.
int64_t saved_bytes(const fs::path& path) {
  std::error_code ec;
  int64_t total = static_cast<int64_t>(fs::file_size(path, ec));
  const fs::path data = path.string() + ".data";
  if (fs::exists(data, ec)) total += static_cast<int64_t>(fs::file_size(data, ec));
  return total;
}

std::string human_bytes(int64_t b) {
  if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GB", b / 1073741824.0);
  if (b >= (int64_t{1} << 20)) return fmt::format("{:.1f} MB", b / 1048576.0);
  if (b >= 1024) return fmt::format("{:.1f} KB", b / 1024.0);
  return fmt::format("{} B", b);
}

void print_table(const opt::ModelStats& a, const opt::ModelStats& b) {
  std::cout << fmt::format("{:<28}{:>12}{:>12}\n", "", "before", "after");
  std::cout << fmt::format("{:<28}{:>12}{:>12}\n", "nodes", a.nodes, b.nodes);
  std::map<std::string, std::pair<int64_t, int64_t>> ops;
  for (const auto& [op, n] : a.ops) ops[op].first = n;
  for (const auto& [op, n] : b.ops) ops[op].second = n;
  for (const auto& [op, n] : ops) {
    const std::string mark = n.first == n.second ? "" : (n.second < n.first ? "  -" : "  +");
    std::cout << fmt::format("  {:<26}{:>12}{:>12}{}\n", op, n.first, n.second, mark);
  }
  std::cout << fmt::format("{:<28}{:>12}{:>12}\n", "initializers", a.initializers, b.initializers);
  std::cout << fmt::format("{:<28}{:>12}{:>12}\n", "initializer bytes",
                           human_bytes(a.initializer_bytes), human_bytes(b.initializer_bytes));
  std::cout << fmt::format("{:<28}{:>12}{:>12}\n", "file size", human_bytes(a.file_bytes),
                           human_bytes(b.file_bytes));
}


int run_optimize(const OptimizeArgs& a) {
  using clock = std::chrono::steady_clock;
  if (a.list) {
    for (const auto& p : opt::list_passes())
      std::cout << fmt::format("{:<22}{}\n", p.name, p.summary);
    return 0;
  }
  KILN_CHECK(!a.model.empty(), ErrorKind::kBadInput, "no model given");
  KILN_CHECK(!a.out.empty(), ErrorKind::kBadInput, "no output given (-o OUT)");

  opt::PipelineOptions opts;
  opts.pass.fold_max_bytes = a.fold_max_bytes;
  opts.pass.target_opset = a.opset;
  opts.check_each_pass = a.check_each_pass;
  std::vector<std::string> passes =
      a.passes.empty() ? opt::level_pipeline(a.level) : opt::parse_pipeline(a.passes);
  if (a.opset > 0 && std::find(passes.begin(), passes.end(), "raise-opset") == passes.end())
    passes.insert(passes.begin(), "raise-opset");

  const auto t0 = clock::now();
  Model m = load_checked(a.model, a.allow_newer_opset);
  const double load_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  opt::ModelStats before = opt::model_stats(m);
  before.file_bytes = saved_bytes(a.model);

  const opt::OptimizeResult result = opt::optimize(m, passes, opts);
  SaveOptions save;
  save.external_data = a.external_data;
  const SavedModel saved = save_model(m, a.out, save);
  opt::ModelStats after = opt::model_stats(m);
  after.file_bytes = saved_bytes(a.out);
  m = Model{};  // unmaps the input's weights before --verify maps both files (a 2 GB model: 2 GB)

  print_table(before, after);
  std::cout << fmt::format("{:<28}load {:.0f} ms, optimize {:.0f} ms ({} rounds, {} rewrites)\n",
                           "time", load_ms, result.ms, result.rounds, result.rewrites.size());
  for (const auto& p : result.passes)
    if (p.rewrites > 0)
      std::cout << fmt::format("  {:<26}{:>6} rewrites {:>8.1f} ms\n", p.name, p.rewrites, p.ms);
  if (!result.near_misses.empty())
    std::cout << fmt::format("{} near misses (see --report)\n", result.near_misses.size());
  std::cout << fmt::format("wrote {}\n", a.out);
  if (saved.external_data_forced)
    std::cout << fmt::format("  weights above 2 GB (protobuf's limit for one file): written to {} as "
                             "external data (--external-data asks for this always)\n",
                             saved.data_path.string());

  OptimizeReport report{.model = a.model,
                        .output = a.out,
                        .pipeline = passes,
                        .load_ms = load_ms,
                        .before = before,
                        .after = after,
                        .result = result};
  int status = 0;
  if (a.verify > 0 || a.bisect || !a.inputs.empty()) {
    opt::VerifyOptions vopts;
    vopts.samples = a.inputs.empty() ? std::max(a.verify, 1) : a.verify;
    vopts.inputs.seed = a.seed;
    vopts.inputs.dims = parse_dims(a.dims);
    vopts.tolerance = {a.rtol, a.atol};
    auto original = frontend::load_session(a.model, {.allow_newer_opset = a.allow_newer_opset});
    auto optimized = frontend::load_session(a.out, {.allow_newer_opset = a.allow_newer_opset});
    check_dim_names(original->inputs(), vopts.inputs.dims);
    for (const std::string& dir : a.inputs)
      vopts.given.push_back(read_values(dir, "input", original->inputs()));
    const opt::Reference ref = opt::make_reference(*original, vopts);
    const opt::VerifyReport vr = opt::check_against(*optimized, ref, vopts);
    report.verify = OptimizeVerification{
        .samples = static_cast<int>(ref.feeds.size()), .rtol = a.rtol, .atol = a.atol, .report = vr};
    std::cout << fmt::format("verify ({} input sets, rtol {}, atol {}):\n", ref.feeds.size(),
                             a.rtol, a.atol);
    if (!ref.chosen_dims.empty())
      std::cout << fmt::format("  dims chosen for the random sets: {} ({}){}\n", ref.chosen_dims,
                               ref.chosen_hint,
                               ref.chosen_because.empty() ? "" : "; with all 1: " + ref.chosen_because);
    for (const auto& o : vr.outputs)
      std::cout << fmt::format("  {:<26} max abs {:.3g}  max rel {:.3g}  {}\n", o.name,
                               o.max_abs_error, o.max_rel_error, o.ok ? "ok" : "DIFFERS: " + o.reason);
    if (!vr.ok) {
      status = 1;
      if (a.bisect) {
        const auto br = opt::bisect([&] { return load_checked(a.model, a.allow_newer_opset); }, passes, opts, ref, vopts);
        report.verify->bisect = br;
        if (br.first_bad)
          std::cout << fmt::format("bisect: rewrite {} of {} breaks the outputs: pass '{}': {} "
                                   "(removed: {})\n  {}\n",
                                   *br.first_bad, br.total, br.rewrite->pass, br.rewrite->what,
                                   fmt::join(br.rewrite->removed, ", "), br.failure);
        else
          std::cout << "bisect: no single rewrite found (the unoptimized model already differs)\n";
      }
    }
  }
  if (!a.report.empty()) {
    // An .html name gets the page with charts; any other, the JSON record tools read.
    write_file_atomically(a.report, is_html_path(a.report)
                                        ? optimize_html(report)
                                        : json_text(optimize_json(report), 2) + "\n");
    std::cout << fmt::format("report: {}\n", a.report);
  }
  return status;
}

}  // namespace

Action add_optimize(CLI::App& app) {
  auto a = std::make_shared<OptimizeArgs>();
  app.add_option("model", a->model, "ONNX model file");
  app.add_option("-o,--output", a->out, "Where to write the optimized model");
  app.add_option("-O", a->level, "Optimization level 0-3 (default 2; 3 also raises the opset)")
      ->check(CLI::Range(0, 3));
  app.add_option("--passes", a->passes, "Comma-separated passes instead of a level");
  app.add_option("--report", a->report,
                 "Write the rewrite record here: an HTML page with charts when FILE ends in .html, "
                 "else JSON");
  app.add_option("--verify", a->verify, "Run both models on N seeded random input sets");
  app.add_option("--inputs", a->inputs,
                 "Also verify on this folder's input_N.pb files (repeatable; alone: only on them)");
  add_allow_newer_opset(app, a->allow_newer_opset);
  app.add_flag("--bisect", a->bisect, "When verification fails, find the rewrite that broke it");
  app.add_option("--dim", a->dims, "Value of a symbolic dim for --verify, NAME=VALUE (default: the smallest size that runs)");
  app.add_option("--seed", a->seed, "First random seed for --verify");
  app.add_option("--rtol", a->rtol, "Relative tolerance for --verify (default 1e-3)");
  app.add_option("--atol", a->atol, "Absolute tolerance for --verify (default 1e-4)");
  app.add_option("--opset", a->opset, "Raise the ai.onnx opset to N first (when safe)");
  app.add_option("--fold-max-bytes", a->fold_max_bytes,
                 "Largest constant folding may create beyond its inputs' size (default 1 GB)");
  app.add_flag("--external-data", a->external_data, "Write weights to OUT.data");
  app.add_flag("--check-each-pass", a->check_each_pass, "Check the model after every pass");
  app.add_flag("--list-passes", a->list, "List the passes and exit");
  return [a] { return run_optimize(*a); };
}

}  // namespace kiln::cli
