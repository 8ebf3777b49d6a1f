// Which kind of file a session is created from: an ONNX model or a compiled kiln artifact, told by
// its first bytes (never by its name).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "artifact/format/format.h"

namespace kiln::capi {

enum class ModelFormat { kOnnx, kArtifact };

inline constexpr size_t kFormatHeadBytes = sizeof artifact::kMagic;  // what detect_format needs to see

// A compiled artifact begins with the artifact magic ("KILNART\0"); an ONNX model is a protobuf,
// whose first byte is a field tag: 'K' would be field 9 (unused in ModelProto) as a group
// (deprecated), which no ONNX writer emits. Everything that is not an artifact goes to the ONNX
// loader, which judges it.
inline ModelFormat detect_format(std::string_view head) {
  return artifact::looks_like_artifact({reinterpret_cast<const uint8_t*>(head.data()), head.size()})
             ? ModelFormat::kArtifact
             : ModelFormat::kOnnx;
}

}  // namespace kiln::capi
