// The hook through which another backend runs parts of the main graph inside a plan (src/backend
// fills it; the engine knows no backend). Per plan (one set of input shapes), the hook is asked
// where nodes go: each external partition becomes one step that hands its inputs (row-major) to
// the partition's run function and receives its outputs in planned row-major buffers; nodes in
// `reference` run on their reference kernels; every other node is lowered as usual.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace kiln::engine {

class GraphFacts;

struct ExternalPartition {
  std::string kernel;               // what the profiler reports: "xnnpack" ...
  std::vector<const Node*> nodes;   // the members, in graph order (a convex set: no path leaves
                                    // the partition and comes back into it)
  std::vector<const Value*> inputs;   // non-constant values read from outside, in run()'s order
  std::vector<const Value*> outputs;  // values read outside (or graph outputs), in run()'s order
  // Reads inputs (row-major, the dims of the plan), writes every output's buffer (row-major).
  std::function<void(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs)> run;
};

struct Placement {
  std::vector<ExternalPartition> partitions;
  std::unordered_set<const Node*> reference;  // nodes the reference kernels run
};

class PlacementHook {
 public:
  virtual ~PlacementHook() = default;
  // Called once per plan, before grouping, with the facts of that plan's input shapes. The nodes
  // are the CompiledModel's own (after its preparation and -O level).
  virtual Placement place(const GraphFacts& facts) = 0;
};

// The backend a step's kernel belongs to, for the profiler: the reference kernels ("reference"),
// the engine's own ("onednn.*", "cpu.*", "engine.*": "cpu"), else the external partition's name.
inline std::string_view backend_of_kernel(std::string_view kernel) {
  if (kernel == "reference") return "reference";
  for (std::string_view own : {"onednn.", "cpu.", "engine."})
    if (kernel.substr(0, own.size()) == own) return "cpu";
  return kernel;
}

}  // namespace kiln::engine
