// Caps that keep hostile models from exhausting the machine. One place, so tools can report them.
#pragma once

#include <cstdint>

namespace kiln::limits {

inline constexpr int kMaxRank = 64;                 // tensor and shape rank
inline constexpr int kMaxGraphNesting = 64;         // If/Loop/Scan subgraphs inside each other
inline constexpr int kMaxFunctionDepth = 64;        // model-local functions calling each other
inline constexpr int64_t kMaxModelBytes = int64_t(1) << 40;
inline constexpr int64_t kDefaultAllocationCap = int64_t(16) << 30;  // bytes for one tensor at run time

}  // namespace kiln::limits
