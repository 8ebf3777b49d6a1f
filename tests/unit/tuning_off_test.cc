// The unit tests run with implementation choice by measurement off (KILN_TUNE=off, unless the
// environment says otherwise): what a plan looks like must not hang on a timing. The tests of the
// tuner itself ask for it (EngineOptions::tune), with a cache folder of their own.
#include <cstdlib>

namespace {
[[maybe_unused]] const bool kTuningOff = [] { return setenv("KILN_TUNE", "off", /*overwrite=*/0) == 0; }();
}  // namespace
