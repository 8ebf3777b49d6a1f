// kiln analyze: op support and placement per target (src/backend/analysis.h).
#include <iostream>

#include "backend/analysis.h"
#include "backend/registry.h"
#include "cli/commands.h"
#include "cli/input_options.h"
#include "cli/json_text.h"
#include "engine/graph_facts.h"
#include "onnx/import.h"
#include "ops/infer.h"
#include "opt/pipeline.h"
#include "runtime/input_dims.h"
#include "runtime/session.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "target/target.h"

namespace kiln::cli {

namespace {

struct AnalyzeArgs {
  std::string model, targets = "native", backends, html;
  std::vector<std::string> dims;
  int level = 2, threads = 0;
  bool json = false, strict = false, allow_newer_opset = false;
};

std::vector<std::string> split_list(const std::string& s, const char* what) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= s.size();) {
    const size_t end = std::min(s.find(',', start), s.size());
    if (end == start) fail(ErrorKind::kBadInput, "{} '{}': an empty name", what, s);
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int run_analyze(const AnalyzeArgs& a) {
  const std::vector<std::string> targets = split_list(a.targets, "--targets");
  for (const std::string& t : targets) find_target(t);  // a bad name fails before the load
  const std::vector<std::string> backends =
      a.backends.empty() ? std::vector<std::string>{} : backend::parse_backend_list(a.backends);
  Model model = load_model(a.model);
  prepare_model(model, {.allow_newer_opset = a.allow_newer_opset});
  if (a.level > 0) {
    opt::optimize(model, opt::level_pipeline(a.level));
    infer_shapes(model);
  }
  // What a run with random inputs would see: symbolic dims 1 unless --dim sets them.
  std::vector<const Value*> inputs;
  for (const Value* v : model.graph->inputs)
    if (!v->is_constant()) inputs.push_back(v);
  const RandomInputOptions dims{.dims = parse_dims(a.dims)};
  check_dim_names(inputs, dims.dims);
  std::vector<std::vector<int64_t>> sig;
  for (const Value* v : inputs) sig.push_back(concrete_dims(*v, dims));
  engine::GraphFacts facts(model, sig);
  const backend::Analysis analysis =
      backend::analyze(facts, a.model, {.targets = targets, .backends = backends, .threads = a.threads});
  if (a.json) std::cout << json_text(backend::analysis_json(analysis), 2) << "\n";
  else std::cout << backend::analysis_text(analysis);
  if (!a.html.empty()) write_file_atomically(a.html, backend::analysis_html(analysis));
  if (a.strict) {
    if (!analysis.missing_backends.empty())
      fail(ErrorKind::kBadInput, "--strict: backend {}", analysis.missing_backends.front());
    for (const backend::TargetAnalysis& t : analysis.targets) backend::enforce_strict(t.plan);
  }
  return 0;
}

}  // namespace

Action add_analyze(CLI::App& app) {
  auto a = std::make_shared<AnalyzeArgs>();
  app.add_option("model", a->model, "ONNX model file")->required();
  app.add_option("--targets", a->targets,
                 "Targets, comma-separated: native (default), x86-64, x86-64-v3, x86-64-v4, aarch64-linux");
  app.add_option("--backends", a->backends,
                 "Backends in order of preference, e.g. xnnpack,cpu (default: each target's order); cpu "
                 "and reference are added last when missing");
  app.add_flag("--strict", a->strict,
               "Fail (exit 2) when any node would not run on the first backend, naming every such node");
  app.add_flag("--json", a->json, "Print one JSON object");
  app.add_option("--html", a->html, "Write an HTML page with the graph colored by backend here");
  app.add_option("--dim", a->dims, "Value of a symbolic dim, NAME=VALUE (default 1)");
  app.add_option("-O", a->level, "Optimize the model first as kiln run does (default 2; 0: as it is)")
      ->check(CLI::Range(0, 3));
  app.add_option("--threads", a->threads, "Threads for the backends (default: all cores)")->check(CLI::Range(0, 1024));
  add_allow_newer_opset(app, a->allow_newer_opset);
  return [a]() { return run_analyze(*a); };
}

}  // namespace kiln::cli
