// The body of POST /v1/models/{name}/versions/{v}/compile: the targets and the options `kiln
// compile` takes, checked before a job is queued so that a bad request is a 400, not a failed job.
//   {"targets": ["x86-64-v3", "x86-64"], "shapes": ["batch=1..8"], "level": 2, "passes": "",
//    "strict_shapes": false, "runs": 10, "seed": 0, "threads": 0, "allow_newer_opset": false,
//    "quantize": {"mode": "dynamic"}}
// "runs" are the timed runs of the measurement (latency, and accuracy against the original: kiln
// compile's --verify); 0 measures nothing. "quantize" (serve/quantize_request.h): kiln quantize's
// options, applied before the targets are compiled. "measure_hits": a target taken from the
// compile cache is measured again here and now (kiln ci sets it, so that the candidate's and the
// baseline's latencies are measured at the same time), instead of reporting its compile's figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/compile.h"
#include "serve/quantize_request.h"

namespace kiln::serve {

struct CompileRequest {
  std::vector<std::string> targets;  // names as `kiln compile --list-targets` prints them
  std::vector<std::string> shapes;
  int level = 2;
  std::string passes;
  bool strict_shapes = false;
  int runs = 10;
  uint64_t seed = 0;
  int threads = 0;
  bool allow_newer_opset = false;
  bool measure_hits = false;  // a compile cache hit is measured again (else: the figures of its compile)
  std::optional<QuantizeRequest> quantize;  // none: the float model is compiled
};

// Fails (kBadInput) naming the field: unknown fields, wrong types, no or unknown targets, a
// target twice, a malformed shape.
CompileRequest parse_compile_request(const nlohmann::json& body);
nlohmann::json compile_request_json(const CompileRequest& r);
// The options of one target's compile, the model read from `model_path`.
artifact::CompileOptions compile_options(const CompileRequest& r, const std::string& target,
                                         const std::string& model_path);

}  // namespace kiln::serve
