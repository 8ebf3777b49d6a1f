// Placement: each backend, in order of preference, claims nodes; a node goes to the first that
// claims it; connected nodes of one backend become partitions (convex: no path leaves a
// partition and comes back, so each runs as one step); a backend that fails to compile a
// partition gives its nodes back, the next backend that claims them takes them, and the reason is
// recorded. Boundary copies: every value entering or leaving a partition of a backend outside
// the engine is copied (and, for images, converted between NCHW and the backend's layout).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace kiln::backend {

struct Partition {
  int backend = -1;  // index into PartitionPlan::backends
  std::vector<const Node*> nodes;  // graph order
  std::vector<const Value*> inputs;   // non-constant values read from outside
  std::vector<const Value*> outputs;  // values read outside, or graph outputs
  int boundary_copies = 0;
  std::shared_ptr<CompiledPartition> compiled;  // backends outside the engine, when compiled
};

// A partition a backend failed to compile, given back.
struct Fallback {
  std::string backend;
  std::vector<const Node*> nodes;
  std::string reason;
};

struct PartitionPlan {
  std::vector<std::shared_ptr<Backend>> backends;  // in order of preference
  std::vector<const Node*> nodes;                  // the main graph's, in order
  std::vector<std::vector<NodeClaim>> claims;      // [backend][node]
  std::vector<int> assigned;  // per node: the backend that runs it; -1: folded (never runs)
  std::vector<Partition> partitions;  // by first node
  std::vector<Fallback> fallbacks;
  int boundary_copies = 0;

  // Nodes that run on another backend than the first (what --strict refuses).
  std::vector<const Node*> fallen_back() const;
  int node_index(const Node* n) const;
};

struct PartitionOptions {
  bool compile = true;  // compile the partitions of backends outside the engine (fallback on failure)
};

PartitionPlan partition_graph(const engine::GraphFacts& facts,
                              const std::vector<std::shared_ptr<Backend>>& backends,
                              const Target& target, const PartitionOptions& opts = {});

// --strict: fails (kUnsupported), naming every node not on the first backend with where it would
// run and why the first does not take it (and every partition whose compile failed).
void enforce_strict(const PartitionPlan& plan);

// "name (Op)", for messages and reports.
std::string node_label(const Node& n);

}  // namespace kiln::backend
