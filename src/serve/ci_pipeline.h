// `kiln ci PIPELINE.json|yaml`: a model's gate in a CI system, one step. The pipeline, in JSON (or
// the same fields in YAML, read by serve/yaml_json.h when the file ends in .yaml or .yml):
//   {"model": "models/mlp.onnx",            the candidate (paths are relative to the pipeline file)
//    "name": "mlp",                         its registry name (default: the file's stem)
//    "targets": ["x86-64", "x86-64-v3"],
//    "compile": {"runs": 20, "shapes": ["batch=1..8"], "quantize": {"mode": "dynamic"}},
//                                           the rest of the compile request (serve/compile_request.h)
//    "calibrate_dir": "calib/",             quantize.calibrate from a folder of test_data_set_*/ input_N.pb
//    "tolerance": {"max_abs": 1e-3, "min_cosine": 0.999},
//    "latency_regression": 0.10,            p50 at most 10 % above the baseline's
//    "alias": "production",                 compared with the version it points at; moved by --promote
//    "baseline": "models/mlp-old.onnx",     or compared with this model file (not with --promote)
//    "server": "http://127.0.0.1:8080",     else --server, else the jobs run here
//    "token_env": "KILN_TOKEN"}             the variable holding the token (default KILN_TOKEN)
// Exit codes: 0 the gate passed (and the alias moved, with --promote), 1 it did not (or the server
// refused the promotion), 2 a bad pipeline or flag.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/compile_request.h"
#include "serve/gate.h"
#include "serve/job_worker.h"

namespace kiln::serve {

struct Pipeline {
  std::filesystem::path file, model, baseline, calibrate_dir;
  std::string name, alias, server, token_env = "KILN_TOKEN";
  // 'targets' and 'compile' parsed once, as the server parses a compile request; measure_hits
  // true unless 'compile' says otherwise, and calibrate_dir's sets filled in by run_ci.
  CompileRequest request;
  GateThresholds thresholds;
};

// A pipeline file's size limit: it is a page of settings.
inline constexpr int64_t kMaxPipelineBytes = 1 << 20;

// Fails (kBadInput) naming the field or the file.
Pipeline read_pipeline(const std::filesystem::path& file);

struct CiOptions {
  std::string server;               // overrides the pipeline's
  std::string token;                // resolved by the caller (--token-file, the pipeline's token_env)
  bool promote = false;
  std::filesystem::path data;       // local runs: the registry, queue and compile cache
  WorkerOptions worker;             // local runs
  std::filesystem::path report;     // when given: the verdict as JSON
  int job_timeout_s = 3600;         // server runs: how long to wait for a job
};

// Runs the pipeline and prints what it did and the gate's table on stdout; returns the exit code
// (0 passed, 1 not passed). Fails (kBadInput) on a bad pipeline.
int run_ci(const Pipeline& p, const CiOptions& o);

}  // namespace kiln::serve
