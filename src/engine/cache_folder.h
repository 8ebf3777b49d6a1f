// kiln's caches of what it measured on a machine (the peaks, the implementation choices): one
// folder, and JSON files of one section per machine in it.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace kiln::engine {

// $XDG_CACHE_HOME/kiln, else ~/.cache/kiln; nullopt when neither variable is set.
std::optional<std::filesystem::path> cache_folder();

// A cache file {"version": V, "machines": {NAME: {...}, ...}}: its content, or an empty object when
// it is missing, not JSON or of another version.
nlohmann::json read_machine_sections(const std::filesystem::path& file, int version);
// Writes `j` with its version (and the folder when missing), atomically; a cache that cannot be
// written (a read-only home) is not an error: false.
bool write_machine_sections(const std::filesystem::path& file, nlohmann::json j, int version);

}  // namespace kiln::engine
