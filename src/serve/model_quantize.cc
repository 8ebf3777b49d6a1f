#include "serve/model_quantize.h"

#include <system_error>

#include "onnx/import.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "quant/quantize.h"
#include "serve/target_compile.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "support/read_file.h"

namespace kiln::serve {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// kiln's "kiln: error: MESSAGE" line without its prefix.
std::string message_of(std::string line) {
  for (const char* prefix : {"kiln: error: ", "kiln: "})
    if (line.rfind(prefix, 0) == 0) return line.substr(std::string(prefix).size());
  return line;
}

}  // namespace

QuantizedModel quantize_for_job(const ServiceStores& stores, const fs::path& kiln_exe, const std::string& model_sha256,
                                const CompileRequest& r, const fs::path& work, int timeout_s,
                                const std::atomic<bool>* abandon) {
  KILN_CHECK(r.quantize.has_value(), ErrorKind::kInternal, "quantize_for_job without a quantize request");
  const QuantizeRequest& q = *r.quantize;
  QuantizedModel out;
  out.key = quantized_model_key(model_sha256, q, r.seed);
  const fs::path index = stores.cache_dir / "quantized" / (out.key + ".json");
  std::error_code ec;
  if (fs::exists(index, ec)) {
    const json j = json::parse(read_file(index), nullptr, false);
    if (j.is_object() && j.contains("sha256") && j.contains("report") && stores.content->has(j["sha256"])) {
      out.sha256 = j["sha256"];
      out.report = j["report"];
      out.cache_hit = true;
      return out;
    }
  }
  const fs::path dir = work / "quantize", calibration = dir / "calibration";
  fs::create_directories(dir);
  for (size_t k = 0; k < q.calibrate.size(); ++k) {
    const fs::path set = calibration / fmt::format("test_data_set_{:04}", k);
    fs::create_directories(set);
    for (size_t i = 0; i < q.calibrate[k].size(); ++i) {
      const std::string& sha = q.calibrate[k][i];
      KILN_CHECK(stores.content->has(sha), ErrorKind::kBadInput,
                 "quantize.calibrate: no uploaded tensor {} (POST /v1/tensors)", sha);
      write_file_atomically(set / fmt::format("input_{}.pb", i), stores.content->get(sha));
    }
  }
  const fs::path model = work / "model.onnx", quantized = dir / "quantized.onnx", report = dir / "report.json";
  const ChildExit e = run_child(kiln_exe,
                                quantize_args(q, model.string(), quantized.string(), report.string(),
                                              calibration.string(), r.seed, r.threads, r.level),
                                dir / "log.txt", timeout_s, abandon);
  out.seconds = e.seconds;
  if (e.timed_out) fail(ErrorKind::kRuntime, "kiln quantize ran past the job time limit ({} s) and was stopped", timeout_s);
  if (e.abandoned) fail(ErrorKind::kRuntime, "kiln quantize was stopped: this worker lost the job's lease");
  if (e.signal) fail(ErrorKind::kRuntime, "kiln quantize died on signal {} ({})", e.signal, strsignal(e.signal));
  // The message without the worker's folder (a client sees it): "quantize/calibration/test_data_set_0000: ...".
  std::string why = message_of(last_log_line(dir / "log.txt"));
  for (const std::string& prefix : {fs::absolute(work).string() + "/", work.string() + "/"})
    for (size_t at; (at = why.find(prefix)) != std::string::npos;) why.erase(at, prefix.size());
  if (e.code == 2) fail(ErrorKind::kBadInput, "quantize: {}", why);
  if (e.code != 0) fail(ErrorKind::kRuntime, "kiln quantize exited {}: {}", e.code, why);
  KILN_CHECK(!fs::exists(quantized.string() + ".data", ec), ErrorKind::kUnsupported,
             "quantize: the quantized model has external data (over 2 GB): kiln serve keeps one file per model");
  json rep = json::parse(read_child_output(report), nullptr, false);
  KILN_CHECK(rep.is_object(), ErrorKind::kRuntime, "kiln quantize wrote no report: {}", why);
  // The paths are the worker's; the ranges and the per-node record are kiln quantize's --report.
  rep.erase("model");
  rep.erase("output");
  if (rep.contains("calibration")) rep["calibration"].erase("ranges");
  if (rep.contains("nodes")) {
    int quantized_nodes = 0, float_nodes = 0;
    for (const json& n : rep["nodes"]) (n.value("precision", "") == "float" ? float_nodes : quantized_nodes)++;
    rep["nodes"] = {{"quantized", quantized_nodes}, {"left_float", float_nodes}};
  }
  out.sha256 = stores.content->put(read_file(quantized));
  out.report = rep;
  fs::create_directories(index.parent_path());
  write_file_atomically(index, json{{"sha256", out.sha256}, {"report", rep}}.dump());
  return out;
}

void check_quantize_request(const ServiceStores& stores, const std::string& model_sha256, const CompileRequest& r) {
  if (!r.quantize) return;
  Model m = load_model_from_bytes(stores.content->get(model_sha256), stores.empty_dir);
  check_model(m, {.allow_newer_opset = r.allow_newer_opset});
  infer_shapes(m);
  size_t inputs = 0;
  for (const Value* v : m.graph->inputs) inputs += v->is_constant() ? 0 : 1;
  for (size_t k = 0; k < r.quantize->calibrate.size(); ++k) {
    const auto& set = r.quantize->calibrate[k];
    KILN_CHECK(set.size() == inputs, ErrorKind::kBadInput,
               "compile request: quantize.calibrate set {} has {} tensors; the model has {} inputs", k, set.size(),
               inputs);
    for (const std::string& sha : set)
      KILN_CHECK(stores.content->has(sha), ErrorKind::kBadInput,
                 "compile request: quantize.calibrate: no uploaded tensor {} (POST /v1/tensors first)", sha);
  }
  quant::check_quantizable(m, quantize_options(*r.quantize), "the model");
}

json quantize_result_json(const QuantizedModel& q, const QuantizeRequest& r) {
  return {{"request", quantize_request_json(r)},
          {"model_sha256", q.sha256},
          {"cache_hit", q.cache_hit},
          {"seconds", q.seconds},
          {"size_bytes", q.report.value("size_bytes", json::object())},
          {"nodes", q.report.value("nodes", json::object())},
          {"evaluation", q.report.value("evaluation", json::object())},
          {"calibration", q.report.value("calibration", json::object())},
          {"accuracy", {{"outputs", q.report.value("outputs", json::array())},
                        {"against", "the float original on kiln's fast engine (kiln quantize's measure)"}}},
          {"notes", q.report.value("notes", json::array())}};
}

}  // namespace kiln::serve
