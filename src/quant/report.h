// What `kiln quantize` says: the one-screen summary on stdout and the --report JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quant/evaluate.h"
#include "quant/mixed_precision.h"
#include "quant/options.h"
#include "quant/quantize.h"

namespace kiln::quant {

struct QuantizeReport {
  std::string model, output;
  QuantizeOptions options;
  QuantizeResult result;
  std::string eval_source;  // "calibration sets", "random inputs (seed 0)" ...
  int eval_sets = 0;
  bool random_inputs = false;  // the accuracy figures then mean little
  std::vector<OutputError> errors;
  int64_t bytes_before = 0, bytes_after = 0;
  std::optional<double> latency_before_ms, latency_after_ms;
  int latency_runs = 0;
  int threads = 0;
  double quantize_ms = 0;
  std::optional<MixedPrecision> mixed;  // --max-loss
  double max_loss = 0;
};

std::string summary_text(const QuantizeReport& r);
nlohmann::json report_json(const QuantizeReport& r);
std::string report_html(const QuantizeReport& r);  // a self-contained page (src/report)

}  // namespace kiln::quant
