// libFuzzer target: kiln's model loader on arbitrary bytes. A malformed model must end in a
// kiln::Error; anything else (a kInternal error, a crash, a sanitizer report, another exception,
// a hang) is a finding.
// fuzz_model.cc takes the same bytes further (check, inference, both engines).
//
// Build and run: make fuzz (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "onnx/import.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kiln::Model model = kiln::load_model_from_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), kiln::fuzz::scratch_dir());
    (void)model;
  } catch (const kiln::Error& e) {
    // The expected way for bad bytes to end, but for a broken invariant of kiln's own.
    kiln::fuzz::abort_if_internal(e);
  }
  return 0;
}
