#include "serve/binary_tensors.h"

#include "support/error.h"

namespace kiln::serve {

InferBody split_infer_body(std::string_view body, const std::optional<std::string>& header_length) {
  if (!header_length) return {body, {}};
  const std::string& h = *header_length;
  if (h.empty() || h.size() > 18 || h.find_first_not_of("0123456789") != std::string::npos)
    fail(ErrorKind::kBadInput, "{}: '{}' is not a size in bytes", kInferenceHeaderLength, h.substr(0, 40));
  const size_t n = std::stoull(h);
  if (n > body.size())
    fail(ErrorKind::kBadInput, "{}: {} is past the end of the body ({} bytes)", kInferenceHeaderLength, n, body.size());
  if (n == 0) fail(ErrorKind::kBadInput, "{}: 0, the JSON header cannot be empty", kInferenceHeaderLength);
  return {body.substr(0, n), body.substr(n)};
}

}  // namespace kiln::serve
