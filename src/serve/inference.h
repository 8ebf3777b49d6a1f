// Inference of kiln serve: the Open Inference Protocol's requests read into tensors checked
// against the model (before they are queued, so that one bad request never fails a batch), and
// the outputs written back as the protocol's JSON tensors. The tensors' data comes as JSON arrays
// or, with the binary data extension (binary_tensors.h), as raw bytes after the JSON header.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "ir/tensor.h"

namespace kiln::serve {

// A request read and checked: the feeds in the model's input order, and the outputs asked for
// (empty: all), with whether each is wanted as binary data.
struct InferRequest {
  std::vector<Tensor> feeds;
  std::set<std::string> wanted;         // output names; empty: every output
  std::set<std::string> binary_outputs;  // outputs to send as binary data
  bool all_binary = false;               // the request's "binary_data_output" parameter
};

// The protocol's datatype name of an element type ("FP32"), and back (nullopt for one kiln does
// not serve).
std::string datatype_name(DataType t);
std::optional<DataType> datatype_of(const std::string& name);

// Reads {"inputs": [{"name", "shape", "datatype", "data" | "parameters": {"binary_data_size"}}],
// "outputs": [{"name", "parameters": {"binary_data"}}], "parameters": {"binary_data_output"}}.
// `binary` is the bytes after the JSON header (binary_tensors.h), consumed in input order.
// Fails (kBadInput) naming the input for a request that does not fit the model: a wrong
// datatype, a rank or fixed dim the model does not take, data of the wrong length, an input
// missing or one the model lacks, an output it does not have.
InferRequest read_infer_request(const std::vector<const Value*>& inputs, const std::vector<const Value*>& outputs,
                                const nlohmann::json& request, std::string_view binary = {});

// The response's JSON ({"outputs": [{"name", "datatype", "shape", "data"}]}) for `results` (in
// the model's output order); outputs wanted as binary get "parameters": {"binary_data_size"}
// instead of "data", and their bytes are appended to `binary` in order.
nlohmann::json infer_response(const std::vector<const Value*>& outputs, const std::vector<RtValue>& results,
                              const InferRequest& request, std::string* binary);

}  // namespace kiln::serve
