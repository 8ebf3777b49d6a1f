// Whole files read into memory, with a bound on their size: the one way kiln reads a file whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace kiln {

// The default bound: 2 GiB, protobuf's own limit on one message (a model past it keeps its weights
// as external data, which is mapped, not read).
inline constexpr int64_t kMaxReadFileBytes = int64_t(2) << 30;

// The bytes of the regular file `path`. Fails (kBadInput) with one line naming the path when it
// cannot be opened, is not a regular file, holds more than `max_bytes` (checked before anything is
// allocated) or a read fails.
std::string read_file(const std::filesystem::path& path, int64_t max_bytes = kMaxReadFileBytes);

}  // namespace kiln
