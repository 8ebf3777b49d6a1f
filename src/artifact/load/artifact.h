// A compiled artifact opened for the fast engine: the file mapped, its compatibility checked from
// the manifest first, the graph read (weights are views into the mapping), the schema checks run
// (the file is untrusted), and the pre-packed weights and the declared shapes' plans made ready.
// No optimization, no shape inference of the declared types, no weight packing where pre-packed.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "artifact/format/manifest.h"
#include "artifact/load/compatibility.h"
#include "engine/compiled_model.h"
#include "engine/runner.h"

namespace kiln::artifact {

// Where the time of opening an artifact went, in milliseconds.
struct LoadTimes {
  double map = 0, read = 0, check = 0, plans = 0, total = 0;
  int plans_made = 0;
  int packed_entries = 0;  // pre-packed weights in the file
  int packed_taken = 0;    // ... that the plans used as they were
  int reordered = 0;       // weights the plans reordered anyway
};

// Makes the engine's placement hook for the placement an artifact recorded (artifact/placement.h's
// artifact_placement, over the backends); null makes the engine run every node. The loader itself
// knows no backend, so the runtime alone (kiln-run) has none.
using PlacementFactory = std::function<std::shared_ptr<engine::PlacementHook>(const Manifest&, int threads)>;

struct LoadOptions {
  engine::EngineOptions engine;  // threads, allocation cap; optimize_level is ignored
  PlacementFactory recorded_placement;  // unless engine.placement is given (--backends)
  bool plan_ahead = true;        // make the declared shapes' plans at load (else on first use)
  bool quiet = false;            // no note on stderr when it runs suboptimally
  bool verify_checksums = true;  // false only for the fuzz target (its mutations must get through)
};

class Artifact {
 public:
  // Fails with one line: kBadModel for a corrupted or hand-crafted file, kUnsupported for one
  // this CPU or this kiln cannot run (what it needs, what to recompile with).
  static std::unique_ptr<Artifact> open(const std::filesystem::path& path, const LoadOptions& opts = {});
  // The same over bytes `owner` keeps alive (`what` names them in errors).
  static std::unique_ptr<Artifact> from_bytes(std::span<const uint8_t> bytes,
                                              std::shared_ptr<void> owner, const std::string& what,
                                              const LoadOptions& opts = {});

  const Manifest& manifest() const { return manifest_; }
  const Compatibility& compatibility() const { return compat_; }
  engine::CompiledModel& model() { return *model_; }
  const LoadTimes& times() const { return times_; }
  // Fails (kBadInput) under --strict-shapes for input dims outside the declared profiles.
  void check_shapes(const std::vector<RtValue>& feeds) const;
  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer = nullptr);

 private:
  Artifact() = default;
  void load(std::span<const uint8_t> bytes, std::shared_ptr<void> owner, const std::string& what,
            const LoadOptions& opts);

  Manifest manifest_;
  Compatibility compat_;
  std::unique_ptr<engine::CompiledModel> model_;
  LoadTimes times_;
};

// The manifest of the artifact at `path` and whether this machine can run it, without reading
// its graph (`kiln inspect` on an artifact). Fails (kBadModel) on a file that is not one.
struct ArtifactInfo {
  Manifest manifest;
  Compatibility compatibility;
  uint64_t bytes = 0;
};
ArtifactInfo inspect_artifact(const std::filesystem::path& path);

// True when the file at `path` starts with the artifact magic.
bool is_artifact_file(const std::filesystem::path& path);

// An artifact as the engine's ModelRunner (kiln run/bench/profile): the fast engine runs its
// plans; `reference` is refused (the reference runs the .onnx).
std::unique_ptr<engine::ModelRunner> open_artifact_runner(const std::filesystem::path& path,
                                                          engine::EngineKind kind,
                                                          const engine::EngineOptions& opts,
                                                          PlacementFactory recorded_placement = nullptr);

// The load times of a runner open_artifact_runner made; null for any other runner.
const LoadTimes* artifact_load_times(const engine::ModelRunner& r);

}  // namespace kiln::artifact
