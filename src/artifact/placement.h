// Where an artifact's nodes run. At compile, the target's backends in order (or --backends) claim
// the optimized graph's nodes and the partitioner places them (src/backend); where the target runs
// here the partitions outside kiln's engine are compiled too, so a backend that fails gives its
// nodes back and the reason is recorded. The manifest's "placement" says per backend what it took,
// every partition, every fallback and the boundary copies. A backend's compiled partition is not
// stored (XNNPACK has no serialized form), so at load an artifact whose placement has partitions
// outside the engine gets the same backends again, in the recorded order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/format/manifest.h"
#include "engine/placement.h"
#include "target/target.h"

namespace kiln::artifact {

struct PlacementRequest {
  std::vector<std::string> backends;  // in order of preference; empty: the target's
  bool strict = false;                // refuse any fallback (names every node that would fall back)
  bool compile = true;                // compile the outside partitions (the target runs here)
  int threads = 0;
};

struct PlacementRecord {
  nlohmann::json placement;  // the manifest's "placement"
  nlohmann::json backends;   // the manifest's "backends": name, version, nodes, per backend used
  nlohmann::json predicted;  // the manifest's "predicted": the roofline estimate on the target's peaks
  std::vector<std::string> notes;  // missing backends and fallbacks, for the command's output
};

// Places the optimized model's graph for `target` with the input dims `sig` (one plan's: the first
// declared profile, or the inputs' dims with symbolic ones 1). The model's types are left as they
// were.
PlacementRecord place_for_artifact(Model& model, const std::vector<std::vector<int64_t>>& sig,
                                   const Target& target, const PlacementRequest& req);

// The backends an artifact's loader hands nodes to, in order, when its placement has partitions
// outside kiln's engine; empty when the engine runs every node. Fails (kBadModel) on a placement
// that is not one compile writes.
std::vector<std::string> placed_backends(const Manifest& m);

// The engine's placement hook for an artifact: null when the engine runs every node.
std::shared_ptr<engine::PlacementHook> artifact_placement(const Manifest& m, int threads);

}  // namespace kiln::artifact
