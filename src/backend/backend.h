// One interface for every backend: which nodes of a graph it takes on a target, and why not the
// others; compiling a partition (a convex, connected set of nodes it claimed) or failing with a
// reason; running what it compiled. Backends are found by name in the registry (registry.h).
//
// `cpu` and `reference` are kiln's own engine (src/engine): their partitions are lowered by the
// engine's plan with the rest of the graph (in_engine()), so they are never compiled here. Other
// backends (the xnnpack plugin, or a test's) compile each partition for the plan's concrete dims;
// the engine runs it as one step that passes row-major host tensors in and out.
//
// Accelerators: nothing here assumes host execution beyond CompiledPartition::run's tensors. A
// device backend keeps its weights and intermediates in device memory inside its compiled
// partition and copies at the boundary (which the partitioner already counts); an asynchronous
// one would return from run() once its work is queued and wait in a `sync()` the engine calls
// before a consumer reads the outputs (a member to add with the first such backend; the plugin
// ABI reserves it the same way, include/kiln/backend_abi.h).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/graph_facts.h"
#include "ir/tensor.h"
#include "target/target.h"

namespace kiln::backend {

// Whether a backend takes one node; reason says why not (or, when claimed, how: the kernel).
struct NodeClaim {
  bool claimed = false;
  std::string reason;
};

// A partition to compile: nodes of facts' graph in graph order, the non-constant values they read
// from outside (the order run() gets them in) and the values they make for outside.
struct PartitionSpec {
  const engine::GraphFacts& facts;
  std::vector<const Node*> nodes;
  std::vector<const Value*> inputs;
  std::vector<const Value*> outputs;
};

class CompiledPartition {
 public:
  virtual ~CompiledPartition() = default;
  // inputs: row-major, the dims compiled for; outputs: buffers of the outputs' dims to fill.
  virtual void run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  // cpu and reference: the engine lowers their nodes itself; compile() is not called.
  virtual bool in_engine() const { return false; }
  // One claim per node of facts.graph().nodes(), in that order (folded nodes are asked too; the
  // partitioner ignores their answers: they never run).
  virtual std::vector<NodeClaim> claim(const engine::GraphFacts& facts, const Target& target) = 0;
  // The compiled partition, or null with why_not set.
  virtual std::unique_ptr<CompiledPartition> compile(const PartitionSpec& p, std::string& why_not) = 0;
};

// The engine's own backends (cpu_backend.cc, reference_backend.cc).
std::shared_ptr<Backend> make_cpu_backend();
std::shared_ptr<Backend> make_reference_backend();

}  // namespace kiln::backend
