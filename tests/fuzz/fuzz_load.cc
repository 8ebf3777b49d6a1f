// libFuzzer target: kiln's model loader on arbitrary bytes. A malformed model must end in a
// kiln::Error; anything else (a crash, a sanitizer report, another exception, a hang) is a finding.
//
// Build: make fuzz (clang, -DKILN_FUZZ=ON, ASan + UBSan); run: scripts/run-fuzz.sh BUILD SECONDS.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "onnx/import.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // External data resolves against this folder. A fresh empty one would be tidier, but any
  // location the fuzzer invents must be refused or contained by the loader anyway.
  static const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kiln-fuzz-load";
  static const bool made = [] {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return true;
  }();
  (void)made;
  try {
    kiln::Model model =
        kiln::load_model_from_bytes(std::string_view(reinterpret_cast<const char*>(data), size), dir);
    (void)model;
  } catch (const kiln::Error&) {
    // The expected way for bad bytes to end.
  }
  return 0;
}
