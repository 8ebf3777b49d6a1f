// The Open Inference Protocol's binary tensor data extension (as KServe and Triton have it): a
// request or response body is a JSON header followed by the tensors' raw bytes, the header's
// length in the HTTP header Inference-Header-Content-Length; each tensor sent so carries
// "parameters": {"binary_data_size": N} instead of "data" (inference.h reads and writes those).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::serve {

inline constexpr const char* kInferenceHeaderLength = "Inference-Header-Content-Length";

// The body split into its JSON header and the binary data after it. `header_length` is the
// Inference-Header-Content-Length value (nullopt: no such header, the whole body is JSON). Fails
// (kBadInput) for a value that is not a decimal size or is past the end of the body.
struct InferBody {
  std::string_view json;
  std::string_view binary;
};
InferBody split_infer_body(std::string_view body, const std::optional<std::string>& header_length);

}  // namespace kiln::serve
