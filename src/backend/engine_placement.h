// What makes a placement run: the engine's PlacementHook (engine/placement.h) answered by the
// partitioner. Per plan the backends claim nodes, partitions outside the engine are compiled
// (falling back on failure, said on stderr with the reason), and the engine runs each as one step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/partitioner.h"
#include "engine/placement.h"

namespace kiln::backend {

struct PlacementOptions {
  std::vector<std::string> backends;  // in order of preference ("xnnpack", "cpu")
  bool strict = false;                // no fallback: a node off the first backend is an error
  int threads = 0;                    // for the plugins (0: OpenMP's default)
  std::string target = "native";
};

class BackendPlacement : public engine::PlacementHook {
 public:
  // Resolves the backends now: a missing one is said on stderr (an error with strict).
  explicit BackendPlacement(const PlacementOptions& opts);
  engine::Placement place(const engine::GraphFacts& facts) override;
  // The latest plan's placement in one line ("xnnpack: 1 partition, 120 nodes; cpu: 2 nodes ...").
  const std::string& summary() const { return summary_; }

 private:
  PlacementOptions opts_;
  Target target_;
  std::vector<std::shared_ptr<Backend>> backends_;
  std::string summary_;
};

// The one-line summary of a plan (per backend: partitions and nodes; fallbacks; boundary copies).
std::string placement_summary(const PartitionPlan& plan);

// For `--backends LIST` on run, bench and profile: the engine option, or null when spec is empty.
std::shared_ptr<BackendPlacement> make_placement(const std::string& spec, bool strict, int threads);

}  // namespace kiln::backend
