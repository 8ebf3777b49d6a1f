// Which kind of file a session is created from: an ONNX model or a compiled kiln artifact, told by
// its first bytes (never by its name).
#pragma once

#include <cstddef>
#include <string_view>

namespace kiln::capi {

enum class ModelFormat { kOnnx, kArtifact };

inline constexpr size_t kFormatHeadBytes = 8;  // what detect_format needs to see

// The compiled artifact (src/artifact, in the works) is to begin with the magic "KILN"; an ONNX
// model is a protobuf, whose first byte is a field tag: 'K' would be field 9 (unused in ModelProto)
// as a group (deprecated), which no ONNX writer emits. Everything that is not an artifact goes to
// the ONNX loader, which judges it.
inline ModelFormat detect_format(std::string_view head) {
  return head.substr(0, 4) == "KILN" ? ModelFormat::kArtifact : ModelFormat::kOnnx;
}

}  // namespace kiln::capi
