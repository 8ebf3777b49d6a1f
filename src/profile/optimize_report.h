// The record of one `kiln optimize`: the model before and after, what each pass did (time,
// rewrites, near misses) and, when it ran, the verification against the original. Written as JSON
// (the format for tools) or as a self-contained HTML page with charts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "opt/bisect.h"
#include "opt/pipeline.h"
#include "opt/record.h"
#include "opt/verify.h"

namespace kiln {

struct OptimizeVerification {
  int samples = 0;  // input sets
  double rtol = 0, atol = 0;
  opt::VerifyReport report;
  std::optional<opt::BisectResult> bisect;  // when --bisect ran after a failure
};

struct OptimizeReport {
  std::string model, output;
  std::vector<std::string> pipeline;  // pass names in order
  double load_ms = 0;
  opt::ModelStats before, after;
  opt::OptimizeResult result;
  std::optional<OptimizeVerification> verify;
};

nlohmann::json optimize_json(const OptimizeReport& r);
std::string optimize_html(const OptimizeReport& r);

// Whether a report written to `path` is the HTML page: the name ends in .html or .htm (any case).
bool is_html_path(const std::string& path);

}  // namespace kiln
