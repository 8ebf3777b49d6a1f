#include "serve/ci_pipeline.h"

#include <algorithm>
#include <iostream>

#include "serve/ci_backends.h"
#include "serve/json_fields.h"
#include "serve/yaml_json.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "support/read_file.h"

namespace kiln::serve {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string string_field(const json& j, const char* name, const std::string& fallback = "") {
  if (!j.contains(name)) return fallback;
  KILN_CHECK(j[name].is_string() && !j[name].get<std::string>().empty(), ErrorKind::kBadInput,
             "pipeline: '{}' must be a non-empty string", name);
  return j[name].get<std::string>();
}

// The calibration sets of a folder (test_data_set_*/input_N.pb, sorted), uploaded: their sha256s.
std::vector<std::vector<std::string>> upload_calibration(CiBackend& b, const fs::path& dir) {
  KILN_CHECK(fs::is_directory(dir), ErrorKind::kBadInput, "pipeline: calibrate_dir '{}' is not a folder", dir.string());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  KILN_CHECK(!sets.empty(), ErrorKind::kBadInput, "pipeline: calibrate_dir '{}' has no test_data_set_*/ folders",
             dir.string());
  std::vector<std::vector<std::string>> out;
  for (const fs::path& s : sets) {
    std::vector<std::string> set;
    for (int i = 0; fs::exists(s / fmt::format("input_{}.pb", i)); ++i)
      set.push_back(b.upload_tensor(read_file(s / fmt::format("input_{}.pb", i))));
    KILN_CHECK(!set.empty(), ErrorKind::kBadInput, "pipeline: '{}' has no input_0.pb", s.string());
    out.push_back(set);
  }
  return out;
}

void print_job(const char* what, const json& job) {
  std::cout << fmt::format("{} job {}: {}\n", what, job.value("job", int64_t{0}), job.value("state", std::string("?")));
}

}  // namespace

Pipeline read_pipeline(const fs::path& file) {
  const std::string ext = file.extension().string();
  const bool yaml = ext == ".yaml" || ext == ".yml";
  const std::string text = read_file(file, kMaxPipelineBytes);
  json j;
  if (yaml) {
    j = yaml_to_json(text, file.string());
  } else {
    j = json::parse(text, nullptr, false);
    KILN_CHECK(!j.is_discarded(), ErrorKind::kBadInput, "'{}' is not JSON (a .yaml or .yml file is read as YAML)",
               file.string());
  }
  KILN_CHECK(j.is_object(), ErrorKind::kBadInput, "'{}': a pipeline is a {} mapping of fields", file.string(),
             yaml ? "YAML" : "JSON");
  check_known_fields(j, {"model", "name", "targets", "compile", "calibrate_dir", "tolerance", "latency_regression",
                         "alias", "baseline", "server", "token_env"},
                     "pipeline");
  Pipeline p;
  p.file = file;
  const fs::path dir = file.parent_path();
  const auto path_of = [&](const std::string& s) { return s.empty() ? fs::path() : fs::path(s).is_absolute() ? fs::path(s) : dir / s; };
  p.model = path_of(string_field(j, "model"));
  KILN_CHECK(!p.model.empty(), ErrorKind::kBadInput, "pipeline: 'model' (the .onnx file) is needed");
  KILN_CHECK(fs::is_regular_file(p.model), ErrorKind::kBadInput, "pipeline: model '{}': no such file", p.model.string());
  p.name = string_field(j, "name", p.model.stem().string());
  check_model_name(p.name);
  p.alias = string_field(j, "alias");
  if (!p.alias.empty()) check_alias_name(p.alias);
  p.baseline = path_of(string_field(j, "baseline"));
  if (!p.baseline.empty())
    KILN_CHECK(fs::is_regular_file(p.baseline), ErrorKind::kBadInput, "pipeline: baseline '{}': no such file",
               p.baseline.string());
  p.calibrate_dir = path_of(string_field(j, "calibrate_dir"));
  p.server = string_field(j, "server");
  p.token_env = string_field(j, "token_env", "KILN_TOKEN");
  json request = json::object();
  if (j.contains("compile")) {
    KILN_CHECK(j["compile"].is_object() && !j["compile"].contains("targets"), ErrorKind::kBadInput,
               "pipeline: 'compile' must be an object of compile options (the targets go in 'targets')");
    request = j["compile"];
  }
  KILN_CHECK(j.contains("targets"), ErrorKind::kBadInput, "pipeline: 'targets' is needed (kiln compile --list-targets)");
  request["targets"] = j["targets"];
  // Cache hits (the baseline's, typically) are measured again, so both sides' latencies are of now.
  if (!request.contains("measure_hits")) request["measure_hits"] = true;
  if (!p.calibrate_dir.empty()) {  // checked with a placeholder set; the real one is uploaded at run time
    KILN_CHECK(request.contains("quantize") && request["quantize"].is_object(), ErrorKind::kBadInput,
               "pipeline: calibrate_dir needs compile.quantize");
    request["quantize"]["calibrate"] = json::array({json::array({std::string(64, '0')})});
  }
  try {
    p.request = parse_compile_request(request);
  } catch (const Error& e) {
    fail(ErrorKind::kBadInput, "pipeline: {}", e.what());
  }
  try {
    p.thresholds = parse_gate_thresholds(j);
  } catch (const Error& e) {
    fail(ErrorKind::kBadInput, "pipeline: {}", e.what());
  }
  return p;
}

int run_ci(const Pipeline& p, const CiOptions& o) {
  const std::string server = o.server.empty() ? p.server : o.server;
  KILN_CHECK(!o.promote || !p.alias.empty(), ErrorKind::kBadInput, "--promote needs the pipeline's 'alias'");
  KILN_CHECK(!o.promote || p.baseline.empty(), ErrorKind::kBadInput,
             "--promote compares with the version the alias points at: drop the pipeline's 'baseline'");
  std::unique_ptr<CiBackend> b = server.empty() ? local_backend(o.data, o.worker)
                                                : server_backend(server, o.token, o.job_timeout_s);
  CompileRequest r = p.request;
  if (!p.calibrate_dir.empty()) r.quantize->calibrate = upload_calibration(*b, p.calibrate_dir);
  const json request = compile_request_json(r);

  const int64_t version = b->upload_model(p.name, read_file(p.model));
  std::cout << fmt::format("kiln ci {}: {} version {} ({}) on {}\n", p.file.filename().string(), p.name, version,
                           p.model.filename().string(), b->where());
  const json job = b->compile(p.name, version, request);
  print_job("candidate", job);

  json baseline_job;
  std::optional<int64_t> baseline_version;
  std::string against = "nothing (no baseline: latency is not compared)";
  if (!p.baseline.empty()) {
    baseline_version = b->upload_model(p.name, read_file(p.baseline));
    against = *baseline_version == version
                  ? fmt::format("nothing: {} is the same model (version {})", p.baseline.filename().string(), version)
                  : fmt::format("{} (version {})", p.baseline.filename().string(), *baseline_version);
  } else if (!p.alias.empty()) {
    baseline_version = b->alias_version(p.name, p.alias);
    if (baseline_version == version) {
      against = fmt::format("nothing: '{}' points at this version already", p.alias);
      baseline_version.reset();
    } else if (baseline_version) {
      against = fmt::format("'{}' (version {})", p.alias, *baseline_version);
    } else {
      against = fmt::format("nothing: '{}' points at no version yet", p.alias);
    }
  }
  if (baseline_version && *baseline_version != version) {
    baseline_job = b->compile(p.name, *baseline_version, request);
    print_job("baseline", baseline_job);
  }
  std::cout << "compared with " << against << "\n";
  const GateVerdict v = evaluate_gate(job.value("targets", json::array()),
                                      baseline_job.is_object() ? baseline_job.value("targets", json::array()) : json::array(),
                                      p.thresholds);
  std::cout << "\n" << gate_table(v) << "\n";
  json report = gate_verdict_json(v);
  report["job"] = job.value("job", int64_t{0});
  if (baseline_job.is_object()) report["baseline_job"] = baseline_job.value("job", int64_t{0});
  report["thresholds"] = gate_thresholds_json(p.thresholds);
  report["promoted"] = false;
  int code = 0;
  if (!v.passed) {
    std::cout << "gate: FAILED: " << gate_failures(v) << "\n";
    code = 1;
  } else if (o.promote) {
    json gate = gate_thresholds_json(p.thresholds);
    gate["job"] = job["job"];
    if (baseline_job.is_object()) gate["baseline_job"] = baseline_job["job"];
    const PromoteOutcome r = b->promote(p.name, p.alias, version, gate);
    if (r.status == 200) {
      std::cout << fmt::format("gate: passed; '{}' now points at version {}\n", p.alias, version);
      report["promoted"] = true;
    } else {
      std::cout << fmt::format("gate: passed here, but the promotion was refused ({}): {}\n", r.status, r.error);
      code = 1;
    }
  } else {
    std::cout << "gate: passed" << (p.alias.empty() ? "" : " (not promoted: --promote moves '" + p.alias + "')") << "\n";
  }
  if (!o.report.empty()) write_file_atomically(o.report, report.dump(2) + "\n");
  return code;
}

}  // namespace kiln::serve
