// Runs one graph (or subgraph) on concrete values, frame by frame for control flow.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "ops/op.h"
#include "runtime/observer.h"

namespace kiln {

// Kernels an embedding executor runs in place of the reference ones in the graphs it hands to
// the interpreter (the fast engine's, for the bodies of If, Loop and Scan).
class KernelOverrides {
 public:
  struct Choice {
    const KernelFn* kernel = nullptr;  // null: the node's reference kernel
    std::string_view name;             // what observers are told ran
  };
  virtual ~KernelOverrides() = default;
  virtual Choice find(const Node& n) const = 0;
};

// Values bound while a graph runs; subgraph frames see their parent's (outer scope).
class Frame {
 public:
  // A frame without a parent reports to `observer`; a subgraph's frame reports to its parent's.
  explicit Frame(const Frame* parent = nullptr, RunObserver* observer = nullptr)
      : parent_(parent),
        observer_(parent ? parent->observer_ : observer),
        overrides_(parent ? parent->overrides_ : nullptr),
        depth_(parent ? parent->depth_ + 1 : 0) {}
  const RtValue* find(const Value* v) const;
  void bind(const Value* v, RtValue x) { values_[v] = std::move(x); }
  void release(const Value* v) { values_.erase(v); }
  RunObserver* observer() const { return observer_; }
  // Kernels this frame's nodes, and its subgraphs', run instead of the reference ones.
  void set_overrides(const KernelOverrides* o) { overrides_ = o; }
  const KernelOverrides* overrides() const { return overrides_; }
  int depth() const { return depth_; }

 private:
  const Frame* parent_;
  RunObserver* observer_;
  const KernelOverrides* overrides_;
  int depth_;
  std::unordered_map<const Value*, RtValue> values_;
};

// Runs g with its inputs bound to `inputs` (in g.inputs order) and returns its outputs. `outer` is
// the calling node's frame for a subgraph; `observer` (main graph only) hears every node run.
std::vector<RtValue> run_graph(const Graph& g, const std::vector<RtValue>& inputs,
                               const Frame* outer, RunObserver* observer = nullptr);

}  // namespace kiln
