#include "backend/partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "support/error.h"

namespace kiln::backend {

namespace {

struct Builder {
  const engine::GraphFacts& facts;
  PartitionPlan& plan;
  std::unordered_map<const Node*, int> index;

  // The nodes (by index) making the non-constant values node i reads.
  std::vector<int> producers(int i) const {
    std::vector<int> out;
    for (const Value* v : facts.reads(plan.nodes[i])) {
      if (facts.constant(v) || !v->producer) continue;
      auto it = index.find(v->producer);
      if (it == index.end() || plan.assigned[it->second] < 0) continue;
      if (std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
    }
    return out;
  }

  // Greedy in graph order: a node joins a partition of its backend that makes one of its inputs
  // when none of its other inputs depends on that partition through outside nodes (convexity).
  void group() {
    const int n = static_cast<int>(plan.nodes.size());
    std::vector<int> part_of(n, -1);
    std::vector<std::set<int>> depends_on(n);  // partitions each node depends on, its own included
    for (int i = 0; i < n; ++i) {
      const int b = plan.assigned[i];
      if (b < 0) continue;
      const std::vector<int> prod = producers(i);
      int chosen = -1;
      for (int p : prod) {
        const int P = part_of[p];
        if (plan.partitions[P].backend != b) continue;
        bool convex = true;
        for (int q : prod)
          if (part_of[q] != P && depends_on[q].contains(P)) convex = false;
        if (convex) {
          chosen = P;
          break;
        }
      }
      if (chosen < 0) {
        chosen = static_cast<int>(plan.partitions.size());
        plan.partitions.push_back({.backend = b});
      }
      plan.partitions[chosen].nodes.push_back(plan.nodes[i]);
      part_of[i] = chosen;
      for (int q : prod) depends_on[i].insert(depends_on[q].begin(), depends_on[q].end());
      depends_on[i].insert(chosen);
    }
    for (Partition& p : plan.partitions) boundary(p);
  }

  void boundary(Partition& p) const {
    const std::unordered_set<const Node*> members(p.nodes.begin(), p.nodes.end());
    for (const Node* m : p.nodes) {
      for (const Value* v : facts.reads(m))
        if (!facts.constant(v) && !members.contains(v->producer) &&
            std::find(p.inputs.begin(), p.inputs.end(), v) == p.inputs.end())
          p.inputs.push_back(v);
      for (const Value* v : m->outputs) {
        if (!v) continue;
        bool outside = facts.is_graph_output(v);
        for (const Node* c : facts.consumers(v)) outside = outside || !members.contains(c);
        if (outside) p.outputs.push_back(v);
      }
    }
    if (!plan.backends[p.backend]->in_engine())
      p.boundary_copies = static_cast<int>(p.inputs.size() + p.outputs.size());
  }
};

}  // namespace

std::string node_label(const Node& n) {
  const std::string name = !n.name.empty() ? n.name : n.num_outputs() > 0 && n.outputs[0] ? n.outputs[0]->name : "";
  return fmt::format("'{}' ({})", name, n.op_type);
}

int PartitionPlan::node_index(const Node* n) const {
  auto it = std::find(nodes.begin(), nodes.end(), n);
  return it == nodes.end() ? -1 : static_cast<int>(it - nodes.begin());
}

std::vector<const Node*> PartitionPlan::fallen_back() const {
  std::vector<const Node*> out;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (assigned[i] > 0) out.push_back(nodes[i]);
  return out;
}

PartitionPlan partition_graph(const engine::GraphFacts& facts,
                              const std::vector<std::shared_ptr<Backend>>& backends,
                              const Target& target, const PartitionOptions& opts) {
  KILN_ASSERT(!backends.empty(), "placement without backends");
  PartitionPlan plan{.backends = backends};
  for (const auto& n : facts.graph().nodes()) plan.nodes.push_back(n.get());
  const size_t n = plan.nodes.size();
  for (const auto& b : backends) {
    plan.claims.push_back(b->claim(facts, target));
    KILN_CHECK(plan.claims.back().size() == n, ErrorKind::kRuntime,
               "backend '{}' answered {} claims for {} nodes", b->name(), plan.claims.back().size(), n);
  }
  Builder builder{facts, plan};
  for (size_t i = 0; i < n; ++i) builder.index[plan.nodes[i]] = static_cast<int>(i);
  int engine_fallback = static_cast<int>(backends.size()) - 1;
  for (size_t b = 0; b < backends.size(); ++b)
    if (backends[b]->name() == "cpu") engine_fallback = static_cast<int>(b);
  std::vector<std::set<int>> refused(n);  // backends whose compile failed on the node
  for (;;) {
    plan.assigned.assign(n, -1);
    plan.partitions.clear();
    for (size_t i = 0; i < n; ++i) {
      if (facts.folded(plan.nodes[i])) continue;
      plan.assigned[i] = engine_fallback;  // nobody claims it: the engine (and its error) has it
      for (size_t b = 0; b < backends.size(); ++b)
        if (plan.claims[b][i].claimed && !refused[i].contains(static_cast<int>(b))) {
          plan.assigned[i] = static_cast<int>(b);
          break;
        }
    }
    builder.group();
    if (!opts.compile) break;
    bool gave_back = false;
    for (Partition& p : plan.partitions) {
      Backend& b = *backends[p.backend];
      if (b.in_engine()) continue;
      std::string why;
      std::unique_ptr<CompiledPartition> c;
      try {
        c = b.compile({facts, p.nodes, p.inputs, p.outputs}, why);
      } catch (const Error& e) {
        why = e.what();
      }
      if (c) {
        p.compiled = std::move(c);
        continue;
      }
      plan.fallbacks.push_back({b.name(), p.nodes, why.empty() ? "compile failed" : why});
      for (const Node* m : p.nodes) refused[builder.index[m]].insert(p.backend);
      gave_back = true;
    }
    if (!gave_back) break;
  }
  plan.boundary_copies = 0;
  for (const Partition& p : plan.partitions) plan.boundary_copies += p.boundary_copies;
  return plan;
}

void enforce_strict(const PartitionPlan& plan) {
  const auto nodes = plan.fallen_back();
  if (nodes.empty() && plan.fallbacks.empty()) return;
  const std::string first = plan.backends[0]->name();
  std::string list;
  for (const Node* n : nodes) {
    const int i = plan.node_index(n);
    const NodeClaim& c = plan.claims[0][i];
    list += fmt::format("{}{} -> {} ({})", list.empty() ? "" : "; ", node_label(*n),
                        plan.backends[plan.assigned[i]]->name(),
                        c.claimed ? "its compile failed" : c.reason);
  }
  for (const Fallback& f : plan.fallbacks)
    list += fmt::format("{}{}'s partition of {} nodes failed to compile: {}", list.empty() ? "" : "; ",
                        f.backend, f.nodes.size(), f.reason);
  fail(ErrorKind::kUnsupported, "--strict: {} nodes would fall back from '{}': {}", nodes.size(), first, list);
}

}  // namespace kiln::backend
