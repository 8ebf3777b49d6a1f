#include "engine/lowering.h"

#include <algorithm>
#include <climits>

#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/reorder_step.h"
#include "engine/onednn/weight_cache.h"
#include "engine/plain_weights.h"
#include "engine/threads.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

// Ops whose lowering may make their output a view of their input's buffer.
bool may_alias(const Node& n) {
  static const std::unordered_set<std::string> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                                      "Identity", "Dropout"};
  return n.domain.empty() && ops.contains(n.op_type);
}

}  // namespace

std::vector<const Node*> Group::members() const {
  std::vector<const Node*> m(prologue.begin(), prologue.end());
  m.push_back(anchor);
  for (const EpilogueUnit& u : epilogue) m.insert(m.end(), u.nodes.begin(), u.nodes.end());
  m.insert(m.end(), side.begin(), side.end());
  return m;
}

Lowering::Lowering(const GraphFacts& facts, Plan& plan, WeightCache& weights,
                   const EngineOptions& opts, const Placement* placement)
    : facts_(facts), plan_(plan), weights_(weights), opts_(opts), placement_(placement), tuner_(opts) {}

Lowering::~Lowering() = default;

dnnl::memory Lowering::packed_constant(const Value* v, const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (v->is_constant() && !v->data.raw())
    if (auto mem = weights_.find_dropped(v, from, to)) return *mem;
  const Tensor* t = facts_.constant(v);
  KILN_ASSERT(t, "a packed constant that is not constant");
  return weights_.get(*t, from, to);
}

void Lowering::lower(PlainWeights* plain_weights) {
  group_nodes();
  schedule();
  for (const Value* v : facts_.graph().inputs) {
    if (v->is_constant()) continue;
    const int s = define(v);
    plan_.slots[s].source = SlotInfo::Source::kInput;
    plan_.input_slots.push_back(s);
  }
  for (size_t i = 0; i < groups_.size(); ++i) {
    current_ = static_cast<int>(i);
    const size_t first_step = plan_.steps.size();
    build_group(groups_[i]);
    if (plain_weights) plain_weights->lowered(groups_[i], facts_, plan_, first_step);
  }
  current_ = static_cast<int>(groups_.size());
  for (const Value* v : facts_.graph().outputs) {
    current_node_ = v->producer;
    plan_.output_slots.push_back(plain(v));
  }
  plan_.choices = tuner_.made();
  tuner_.save();
}

void Lowering::group_nodes() {
  if (placement_) place_external();
  const KernelTable& table = KernelTable::global();
  const auto& nodes = facts_.graph().nodes();
  auto try_impls = [&](const Node& n, Sweep sweep) {
    const MatchContext ctx{facts_, claimed_, false, &options()};
    for (const DispatchEntry& e : table.find(n, facts_)) {
      if (e.sweep > sweep) continue;  // an entry is tried from its sweep on
      Group g{.impl = e.impl, .anchor = &n};
      if (!e.impl->match(n, ctx, g)) continue;
      for (const Node* m : g.members()) claimed_.insert(m);
      groups_.push_back(std::move(g));
      return true;
    }
    return false;
  };
  for (Sweep sweep : {Sweep::kProducers, Sweep::kFusing})
    for (const auto& n : nodes)
      if (!facts_.folded(n.get()) && !claimed_.contains(n.get())) try_impls(*n, sweep);
  for (const auto& n : nodes) {
    if (facts_.folded(n.get()) || claimed_.contains(n.get())) continue;
    if (try_impls(*n, Sweep::kAll)) continue;
    claimed_.insert(n.get());
    groups_.push_back(Group{.impl = &KernelTable::reference(), .anchor = n.get()});
  }
}

void Lowering::schedule() {
  for (Group& g : groups_) {
    g.position = 0;
    for (const Node* m : g.members()) g.position = std::max(g.position, facts_.position(m));
  }
  std::stable_sort(groups_.begin(), groups_.end(),
                   [](const Group& a, const Group& b) { return a.position < b.position; });
  // A partition runs where its last node is; what reads its earlier results must wait for it.
  if (placement_ && !placement_->partitions.empty()) order_by_dependencies();
  for (size_t i = 0; i < groups_.size(); ++i) {
    const auto members = groups_[i].members();
    std::unordered_set<const Value*> made;
    for (const Node* m : members)
      for (const Value* v : m->outputs)
        if (v) made.insert(v);
    for (const Node* m : members)
      for (const Value* v : facts_.reads(m))
        if (!made.contains(v)) last_read_[v] = static_cast<int>(i);
  }
  // A view keeps the viewed buffer alive as long as the view is read.
  const auto& nodes = facts_.graph().nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& n = **it;
    if (!may_alias(n) || !n.has_input(0) || !n.outputs[0]) continue;
    auto out = last_read_.find(n.outputs[0]);
    if (out != last_read_.end())
      last_read_[n.inputs[0]] = std::max(last_read_[n.inputs[0]], out->second);
  }
  for (const Value* v : facts_.graph().outputs) last_read_[v] = INT_MAX;
}

void Lowering::build_group(Group& g) {
  current_node_ = g.anchor;
  if (g.external >= 0) return build_external(g);
  const Group full = g;
  bool ok = false;
  try {
    ok = g.impl->build(g, *this);
  } catch (const dnnl::error&) {
    ok = false;
  }
  if (!ok) {
    auto members = full.members();
    std::sort(members.begin(), members.end(), [&](const Node* a, const Node* b) {
      return facts_.position(a) < facts_.position(b);
    });
    // on its own the anchor may still suit the implementation that could not fuse
    for (const Node* m : members) lower_standalone(m);
    return;
  }
  KILN_ASSERT(g.side.empty() || g.epilogue.size() == full.epilogue.size(),
              "a group computing nodes alongside its result dropped part of the result's chain");
  std::vector<const Node*> dropped;
  for (size_t u = g.epilogue.size(); u < full.epilogue.size(); ++u)
    dropped.insert(dropped.end(), full.epilogue[u].nodes.begin(), full.epilogue[u].nodes.end());
  std::sort(dropped.begin(), dropped.end(), [&](const Node* a, const Node* b) {
    return facts_.position(a) < facts_.position(b);
  });
  for (const Node* m : dropped) lower_standalone(m);
}

void Lowering::lower_standalone(const Node* n) {
  current_node_ = n;
  const MatchContext ctx{facts_, claimed_, true, &options()};
  for (const DispatchEntry& e : KernelTable::global().find(*n, facts_)) {
    const KernelImpl* impl = e.impl;
    Group g{.impl = impl, .anchor = n, .position = facts_.position(n)};
    if (!impl->match(*n, ctx, g)) continue;
    bool ok = false;
    try {
      ok = impl->build(g, *this);
    } catch (const dnnl::error&) {
      ok = false;
    }
    if (ok && g.epilogue.empty() && g.prologue.empty() && g.side.empty()) return;
    KILN_ASSERT(!ok, "a standalone build fused other nodes");
  }
  Group g{.impl = &KernelTable::reference(), .anchor = n, .position = facts_.position(n)};
  KernelTable::reference().build(g, *this);
}

const Lowering::ValueSlots& Lowering::slots_of(const Value* v) const {
  auto it = values_.find(v);
  if (it == values_.end())
    fail(ErrorKind::kInternal, "internal error (a bug in kiln): value '{}' is read before it is made",
         v->name);
  return it->second;
}

int Lowering::new_slot(SlotInfo s, const Value* v) {
  slot_value_.push_back(v);
  slot_planned_.push_back(false);
  slot_alias_of_.push_back(-1);
  return plan_.add_slot(std::move(s));
}

int Lowering::constant_slot(const Value* v) {
  auto it = values_.find(v);
  if (it != values_.end()) return it->second.primary;
  const Tensor* c = facts_.constant(v);
  SlotInfo s{.name = v->name, .dtype = c->dtype(), .dims = c->dims(),
             .source = SlotInfo::Source::kConstant, .constant = RtValue::of(*c)};
  return values_[v].primary = new_slot(std::move(s), v);
}

std::optional<dnnl::memory::desc> Lowering::layout(const Value* v) const {
  if (facts_.has_constant(v)) return std::nullopt;
  return plan_.slots[slots_of(v).primary].md;
}

int Lowering::plain(const Value* v) {
  if (facts_.constant(v)) return constant_slot(v);
  const ValueSlots& vs = slots_of(v);
  const SlotInfo& p = plan_.slots[vs.primary];
  if (!p.md) return vs.primary;
  return in_layout(v, plain_md(*p.dims, p.md->data_type()));
}

int Lowering::in_layout(const Value* v, const dnnl::memory::desc& md) {
  const int src = facts_.constant(v) ? constant_slot(v) : slots_of(v).primary;
  const SlotInfo from = plan_.slots[src];  // a copy: adding slots moves them
  const auto dt = dnnl_dtype(from.dtype);
  if (!dt || !from.dims)
    fail(ErrorKind::kInternal, "internal error (a bug in kiln): a layout asked for '{}' ({}, dims {}known)", v->name,
         dtype_name(from.dtype), from.dims ? "" : "not ");
  const dnnl::memory::desc from_md = from.md ? *from.md : plain_md(*from.dims, *dt);
  if (same_layout(from_md, md)) return src;
  for (int s : values_[v].variants) {
    const SlotInfo& si = plan_.slots[s];
    if (same_layout(si.md ? *si.md : plain_md(*si.dims, *dt), md)) return s;
  }
  SlotInfo s{.name = v->name, .dtype = from.dtype, .dims = from.dims};
  if (!is_plain(md)) s.md = md;
  const int dst = new_slot(std::move(s), v);
  values_[v].variants.push_back(dst);
  add(make_reorder_step(current_node_, *from.dims, src, from_md, dst, md));
  return dst;
}

int Lowering::define(const Value* v, std::optional<dnnl::memory::desc> md) {
  KILN_ASSERT(!values_.contains(v), "a value defined twice");
  SlotInfo s{.name = v->name, .dtype = facts_.dtype(v)};
  if (const auto* d = facts_.dims(v)) s.dims = *d;
  if (md && !is_plain(*md)) {
    // The producer knows its result's dims even where shape inference did not (a consumer
    // reordering it to plain needs them).
    const dnnl::memory::dims md_dims = md->dims();
    if (!s.dims) s.dims = std::vector<int64_t>(md_dims.begin(), md_dims.end());
    KILN_ASSERT(std::equal(s.dims->begin(), s.dims->end(), md_dims.begin(), md_dims.end()),
                "a layout's dims differ from the value's");
    s.md = *md;
  }
  return values_[v].primary = new_slot(std::move(s), v);
}

int Lowering::writable_copy(const Value* v, const dnnl::memory::desc& md,
                            const std::vector<int>& reads) {
  if (!facts_.constant(v)) {
    const int s = in_layout(v, md);
    if (dies_here(s) && std::find(reads.begin(), reads.end(), s) == reads.end()) return s;
  }
  const int src = facts_.constant(v) ? constant_slot(v) : slots_of(v).primary;
  const SlotInfo from = plan_.slots[src];  // a copy: adding slots moves them
  const dnnl::memory::desc from_md = from.md ? *from.md : plain_md(*from.dims, md.data_type());
  SlotInfo s{.name = v->name, .dtype = from.dtype, .dims = from.dims};
  if (!is_plain(md)) s.md = md;
  const int dst = new_slot(std::move(s), nullptr);
  add(make_reorder_step(current_node_, *from.dims, src, from_md, dst, md));
  return dst;
}

bool Lowering::dies_here(int slot) const {
  for (int s = slot; s >= 0; s = slot_alias_of_[s]) {
    const Value* v = slot_value_[s];
    if (!v || !slot_planned_[s] || facts_.is_graph_output(v)) return false;
    auto it = last_read_.find(v);
    if (it != last_read_.end() && it->second > current_) return false;
  }
  return true;
}

void Lowering::add(std::unique_ptr<Step> step) {
  // Steps that did not choose their threads: by the bytes they move.
  if (step->threads == 0 && step->kernel.rfind("cpu.", 0) == 0) {
    double bytes = 0;
    for (int s : step->inputs)
      if (s >= 0) bytes += static_cast<double>(plan_.slots[s].bytes());
    for (const StepOutput& o : step->outputs) bytes += static_cast<double>(plan_.slots[o.slot].bytes());
    step->threads = threads_for_bytes(bytes);
  }
  for (const StepOutput& o : step->outputs) {
    slot_planned_[o.slot] = o.memory == OutputMemory::kPlanned ||
                            (o.memory == OutputMemory::kAlias && slot_planned_[o.share]);
    if (o.memory == OutputMemory::kAlias) slot_alias_of_[o.slot] = o.share;
  }
  plan_.steps.push_back(std::move(step));
}

}  // namespace kiln::engine
