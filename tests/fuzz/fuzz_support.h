// What the libFuzzer targets share (tests/fuzz, docs/fuzzing.md).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "support/error.h"

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

// A kInternal error is a bug by definition (KILN_ASSERT: an invariant of kiln's own code broke),
// so the targets make it a finding; every other kind is a bad input refused.
inline void abort_if_internal(const Error& e) {
  if (e.kind() != ErrorKind::kInternal) return;
  std::fprintf(stderr, "fuzz: kInternal error: %s\n", e.what());
  std::abort();
}

}  // namespace kiln::fuzz
