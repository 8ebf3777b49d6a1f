// The small tags of the graph section (graph_codec.h), shared by its writer and its reader.
#pragma once

#include <cstdint>

namespace kiln::artifact {

inline constexpr uint32_t kNoValue = 0xffffffffu;  // an omitted optional input or output
inline constexpr uint8_t kDimUnknown = 0, kDimKnown = 1, kDimSymbolic = 2;
inline constexpr uint8_t kTensorEmpty = 0, kTensorInWeights = 1, kTensorStrings = 2;
inline constexpr uint8_t kValueGraphInput = 1, kValueDeclared = 2, kValueConstant = 4;

}  // namespace kiln::artifact
