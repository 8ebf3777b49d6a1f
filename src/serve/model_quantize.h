// The quantized model of a compile job that asks for "quantize" (serve/quantize_request.h):
// `kiln quantize` in a child process (as a target's compile runs in one: the calibration runs the
// model on the fast engine, whose ISA must not be fixed in the worker, and a model that hangs or
// crashes the quantizer costs one child), once per float model, request, seed and kiln build. The
// quantized .onnx goes to the content store; DATA/cache/quantized/KEY.json records its sha256 and
// kiln quantize's report (its accuracy against the float model), so that the same request again
// neither quantizes nor compiles: the targets' compile cache keys are the quantized model's sha256.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/compile_request.h"
#include "serve/service_stores.h"

namespace kiln::serve {

struct QuantizedModel {
  std::string sha256;      // of the quantized .onnx, in the content store
  nlohmann::json report;   // kiln quantize --report's JSON (outputs: the error against the float model)
  std::string key;         // quantized_model_key
  bool cache_hit = false;
  double seconds = 0;
};

// Quantizes `work`/model.onnx (the float model, of sha256 `model_sha256`) as r.quantize says;
// calibration tensors come from the content store. Fails (kBadInput) with kiln quantize's
// one-line message when it refuses the model or the request, (kRuntime) when the child dies or
// runs past `timeout_s`.
QuantizedModel quantize_for_job(const ServiceStores& stores, const std::filesystem::path& kiln_exe,
                                const std::string& model_sha256, const CompileRequest& r,
                                const std::filesystem::path& work, int timeout_s, const std::atomic<bool>* abandon);

// The checks of a compile request's "quantize" the server makes before it queues the job, so that
// a request that cannot work is a 400: the calibration tensors are uploaded and each set has one
// per input of the model; the filters name nodes and ops of the model and something in it can be
// quantized in the mode (quant::check_quantizable, what kiln quantize checks first).
void check_quantize_request(const ServiceStores& stores, const std::string& model_sha256, const CompileRequest& r);

// What a target's result says of the quantization: the request, the quantized model, its
// accuracy against the float original and its size.
nlohmann::json quantize_result_json(const QuantizedModel& q, const QuantizeRequest& r);

}  // namespace kiln::serve
