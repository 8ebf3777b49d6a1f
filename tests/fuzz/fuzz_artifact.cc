// libFuzzer target: the compiled-artifact loader (src/artifact) on arbitrary bytes, the whole way a
// `kiln run` takes them: container, manifest, compatibility, graph, schema checks, pre-packed
// weights and the plans of the declared shapes. Checksums are not verified, so that mutations reach
// the parsers behind them (a real load refuses a changed section at its checksum already). A bad
// artifact must end in a kiln::Error; a kInternal error, a crash or a sanitizer report is a finding.
//
// Seeds: tests/fuzz/corpus/fuzz_artifact (small artifacts, tests/fuzz/make_artifact_seeds.sh).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "artifact/load/artifact.h"
#include "fuzz_support.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // 64-byte aligned, as a mapped file is: weights are then views and pre-packed weights are taken.
  std::shared_ptr<void> buf(std::aligned_alloc(64, (size + 64) / 64 * 64), std::free);
  if (!buf) return 0;
  if (size) std::memcpy(buf.get(), data, size);
  try {
    kiln::artifact::LoadOptions opts;
    opts.engine.threads = 1;
    opts.engine.allocation_cap = int64_t(64) << 20;  // declared shapes cannot ask for more
    opts.engine.tune = kiln::engine::TuneMode::kOff;  // an artifact's own choices still hold
    opts.quiet = true;
    opts.verify_checksums = false;
    auto a = kiln::artifact::Artifact::from_bytes({static_cast<const uint8_t*>(buf.get()), size}, buf,
                                                  "fuzz.kiln", opts);
    (void)a;
  } catch (const kiln::Error& e) {
    kiln::fuzz::abort_if_internal(e);
  }
  return 0;
}
