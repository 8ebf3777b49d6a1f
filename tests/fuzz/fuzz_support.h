// What the libFuzzer targets share (tests/fuzz, docs/fuzzing.md).
#pragma once

#include <filesystem>
#include <system_error>

namespace kiln::fuzz {

// The folder external data resolves against. Every location the fuzzer invents (`../x`, absolute
// paths, links) must be refused or contained by the loader; a real folder makes the files it
// could name exist, so the containment is what is tested, not a missing directory.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / "kiln-fuzz";
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    return d;
  }();
  return dir;
}

}  // namespace kiln::fuzz
