// Lowering: the main graph, for one set of input shapes, becomes a Plan. Nodes are grouped (each
// group: the first implementation in the dispatch table that accepts it, fusing its neighbours
// where it can), groups are scheduled at their last member, and each group's implementation
// emits its steps, asking the lowering for its inputs in the layouts it wants.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/engine_options.h"
#include "engine/graph_facts.h"
#include "engine/group.h"
#include "engine/kernel_table.h"
#include "engine/placement.h"
#include "engine/plan.h"
#include "engine/tuning.h"

namespace kiln::engine {

class PlainWeights;
class WeightCache;

class Lowering {
 public:
  // `placement` (may be null): partitions other backends run and nodes for the reference kernels.
  Lowering(const GraphFacts& facts, Plan& plan, WeightCache& weights, const EngineOptions& opts,
           const Placement* placement = nullptr);
  ~Lowering();
  // Fills the plan (steps, slots, inputs, outputs); the caller finalizes it. `plain_weights` (may be
  // null) hears of each group lowered, to let go of the weights only packed copies still need.
  void lower(PlainWeights* plain_weights = nullptr);

  // For the implementations' build functions.
  const GraphFacts& facts() const { return facts_; }
  const EngineOptions& options() const { return opts_; }
  WeightCache& weights() { return weights_; }
  // Constant v (an initializer, or computed) read as layout `from`, in layout `to` (the weight
  // cache's copy): found without v's plain bytes where the engine let go of them and its packed
  // copy in `to` exists, else as weights().get(*facts().constant(v), ...).
  dnnl::memory packed_constant(const Value* v, const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  // The plan's implementation choices by measurement (engine/tuning.h).
  Tuner& tuner() { return tuner_; }
  const std::shared_ptr<Scratchpad>& scratchpad() const { return plan_.scratchpad; }
  // The slot holding v row-major (a reorder is added when v was made in another layout).
  int plain(const Value* v);
  // The slot holding v in layout md (a reorder is added the first time a layout is asked for).
  int in_layout(const Value* v, const dnnl::memory::desc& md);
  // The layout v was made in; nullopt for row-major or an element type oneDNN does not have.
  std::optional<dnnl::memory::desc> layout(const Value* v) const;
  // Declares the slot v is made into (in layout md; row-major when nullopt or plain).
  int define(const Value* v, std::optional<dnnl::memory::desc> md = std::nullopt);
  // A slot holding v in layout md that the current group may overwrite (an in-place output takes
  // it over): v's own when v dies here and the step does not also read it (`reads`), else a
  // fresh copy.
  int writable_copy(const Value* v, const dnnl::memory::desc& md, const std::vector<int>& reads);
  // Whether the current group may overwrite slot s: a planned buffer made by a step, holding a
  // value that no later group reads and that is not a graph output.
  bool dies_here(int slot) const;
  const SlotInfo& slot(int s) const { return plan_.slots[s]; }
  void add(std::unique_ptr<Step> step);

 private:
  struct ValueSlots {
    int primary = -1;
    std::vector<int> variants;  // the same value in other layouts
  };
  void group_nodes();
  void schedule();
  void place_external();           // the placement's partitions and reference nodes as groups
  void order_by_dependencies();    // groups in an order where each runs after what it reads
  void build_external(const Group& g);
  void build_group(Group& g);
  void lower_standalone(const Node* n);
  int constant_slot(const Value* v);
  // Adds a slot holding v (null: a private copy no value owns).
  int new_slot(SlotInfo s, const Value* v);
  const ValueSlots& slots_of(const Value* v) const;

  const GraphFacts& facts_;
  Plan& plan_;
  WeightCache& weights_;
  const EngineOptions& opts_;
  const Placement* placement_ = nullptr;
  Tuner tuner_;
  std::vector<Group> groups_;  // in schedule order after schedule()
  std::unordered_set<const Node*> claimed_;
  std::unordered_map<const Value*, int> last_read_;  // schedule index of the last group reading
  std::unordered_map<const Value*, ValueSlots> values_;
  std::vector<const Value*> slot_value_;   // per slot
  std::vector<bool> slot_planned_;         // per slot: in a planned buffer
  std::vector<int> slot_alias_of_;         // per slot: the slot it views, or -1
  int current_ = 0;                        // the group being built
  const Node* current_node_ = nullptr;     // for steps the lowering adds (reorders)
};

}  // namespace kiln::engine
