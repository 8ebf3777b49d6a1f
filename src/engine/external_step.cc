// The engine's side of external partitions (placement.h): their groups, their place in the
// schedule, and the step that runs one.
#include <algorithm>
#include <queue>

#include "engine/lowering.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

class ExternalStep : public Step {
 public:
  explicit ExternalStep(const ExternalPartition& p) : name_(p.kernel), run_(p.run) {
    kernel = name_;
    detail_ = fmt::format("{} nodes, {} inputs, {} outputs", p.nodes.size(), p.inputs.size(),
                          p.outputs.size());
  }
  void run(RunState& st) override {
    ins_.clear();
    outs_.clear();
    for (int s : inputs) ins_.push_back(&st.slots[s].tensor);
    for (const StepOutput& o : outputs) outs_.push_back(&st.slots[o.slot].tensor);
    run_(ins_, outs_);
  }
  std::string detail() const override { return detail_; }

 private:
  std::string name_, detail_;
  std::function<void(std::span<const Tensor* const>, std::span<Tensor* const>)> run_;
  std::vector<const Tensor*> ins_;
  std::vector<Tensor*> outs_;
};

}  // namespace

void Lowering::place_external() {
  for (size_t k = 0; k < placement_->partitions.size(); ++k) {
    const ExternalPartition& p = placement_->partitions[k];
    KILN_ASSERT(!p.nodes.empty(), "an external partition without nodes");
    Group g{.impl = &KernelTable::reference(), .anchor = p.nodes.back(),
            .external = static_cast<int>(k)};
    g.prologue.assign(p.nodes.begin(), p.nodes.end() - 1);
    for (const Node* m : p.nodes) {
      KILN_ASSERT(!claimed_.contains(m) && !facts_.folded(m), "a node placed twice or folded");
      claimed_.insert(m);
    }
    groups_.push_back(std::move(g));
  }
  for (const auto& n : facts_.graph().nodes()) {
    if (!placement_->reference.contains(n.get()) || facts_.folded(n.get()) || claimed_.contains(n.get()))
      continue;
    claimed_.insert(n.get());
    groups_.push_back(Group{.impl = &KernelTable::reference(), .anchor = n.get()});
  }
}

void Lowering::order_by_dependencies() {
  const size_t n = groups_.size();
  std::unordered_map<const Value*, size_t> made_by;
  for (size_t i = 0; i < n; ++i)
    for (const Node* m : groups_[i].members())
      for (const Value* v : m->outputs)
        if (v) made_by[v] = i;
  std::vector<std::vector<size_t>> after(n);
  std::vector<int> waiting(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::unordered_set<size_t> deps;
    for (const Node* m : groups_[i].members())
      for (const Value* v : facts_.reads(m)) {
        auto it = made_by.find(v);
        if (it != made_by.end() && it->second != i) deps.insert(it->second);
      }
    for (size_t d : deps) after[d].push_back(i);
    waiting[i] = static_cast<int>(deps.size());
  }
  // Ready groups in their current order (by position), so the order changes only where it must.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<Group> ordered;
  ordered.reserve(n);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    ordered.push_back(std::move(groups_[i]));
    for (size_t j : after[i])
      if (--waiting[j] == 0) ready.push(j);
  }
  KILN_ASSERT(ordered.size() == n, "the placement's partitions depend on each other in a cycle");
  groups_ = std::move(ordered);
}

void Lowering::build_external(const Group& g) {
  const ExternalPartition& p = placement_->partitions[g.external];
  auto step = std::make_unique<ExternalStep>(p);
  step->node = g.anchor;
  for (const Value* v : p.inputs) step->inputs.push_back(plain(v));
  for (const Value* v : p.outputs) {
    KILN_ASSERT(facts_.dims(v) != nullptr, "an external partition's output of unknown dims");
    step->outputs.push_back({define(v), OutputMemory::kPlanned, -1});
  }
  add(std::move(step));
}

}  // namespace kiln::engine
