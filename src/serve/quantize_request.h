// The "quantize" part of a compile request: what `kiln quantize` takes, applied to the model before
// its targets are compiled, so that a job compiles (and measures) the quantized model and records
// its accuracy against the float original.
//   {"mode": "static", "format": "qdq", "per_channel": true, "activation_type": "uint8",
//    "weight_type": "int8", "method": "minmax", "percentile": 99.99, "include_ops": ["Conv"],
//    "exclude_ops": [], "exclude_nodes": [], "keep_io_types": true, "calibrate_random": 8,
//    "calibrate": [["SHA256 of input_0.pb", ...], ...], "eval_random": 2, "max_loss": 0.01,
//    "dims": ["batch=1"]}
// "calibrate" names calibration sets uploaded with POST /v1/tensors (TensorProto files, as kiln
// run reads them), one array per set, in the model's input order; "calibrate_random" N seeded
// random sets instead. Static mode needs one of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quant/options.h"

namespace kiln::serve {

// kiln quantize's words (quant/options.h), and what a job adds: where its sets come from.
struct QuantizeRequest : quant::QuantizeWords {
  std::vector<std::string> dims;
  int calibrate_random = 0;
  std::vector<std::vector<std::string>> calibrate;  // sets of tensor sha256s, in input order
  int eval_random = 2;
  std::optional<double> max_loss;
};

// Fails (kBadInput) naming the field ("compile request: quantize.mode 'x': expected ...").
QuantizeRequest parse_quantize_request(const nlohmann::json& q);
// Every field, the defaults filled in: what the job stores and the cache keys on.
nlohmann::json quantize_request_json(const QuantizeRequest& q);
quant::QuantizeOptions quantize_options(const QuantizeRequest& q);
// The sha256s of every calibration tensor the request names.
std::vector<std::string> calibration_tensors(const QuantizeRequest& q);

// The arguments of `kiln quantize` (after the executable) that do what q says: `model` into
// `out`, the JSON report into `report`, the calibration sets (when q names some) read from
// `calibration_dir`; seed, threads and the -O level of its measurements from the compile request.
std::vector<std::string> quantize_args(const QuantizeRequest& q, const std::string& model, const std::string& out,
                                       const std::string& report, const std::string& calibration_dir, uint64_t seed,
                                       int threads, int level);

// What the quantized model is keyed by: the float model's sha256, the request, the seed and this
// kiln build (a new quantizer may quantize differently).
std::string quantized_model_key(const std::string& model_sha256, const QuantizeRequest& q, uint64_t seed);

}  // namespace kiln::serve
