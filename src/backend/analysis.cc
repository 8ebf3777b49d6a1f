#include "backend/analysis.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <tuple>

#include "backend/engine_placement.h"
#include "backend/registry.h"

namespace kiln::backend {

namespace {

std::vector<OpPlacement> op_placements(const PartitionPlan& plan) {
  std::map<std::string, OpPlacement> by_op;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const int b = plan.assigned[i];
    if (b < 0) continue;
    OpPlacement& o = by_op[plan.nodes[i]->op_type];
    o.op = plan.nodes[i]->op_type;
    ++o.nodes;
    ++o.placed[plan.backends[b]->name()];
    for (int e = 0; e < b; ++e) {
      const NodeClaim& c = plan.claims[e][i];
      ++o.refused[{plan.backends[e]->name(), c.claimed ? "its partition failed to compile" : c.reason}];
    }
  }
  std::vector<OpPlacement> out;
  for (auto& [op, o] : by_op) out.push_back(std::move(o));
  std::stable_sort(out.begin(), out.end(), [](const OpPlacement& a, const OpPlacement& b) { return a.nodes > b.nodes; });
  return out;
}

// Fewest boundary copies, then fewest partitions, then the target's order: among the orders of
// the non-reference backends (reference stays last), without compiling.
void recommend(const engine::GraphFacts& facts, TargetAnalysis& t) {
  std::vector<std::shared_ptr<Backend>> movable;
  std::shared_ptr<Backend> last;
  for (const auto& b : t.plan.backends) {
    if (b->name() == "reference") last = b;
    else movable.push_back(b);
  }
  std::vector<int> perm(movable.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  std::tuple<int, int, int> best{1 << 30, 1 << 30, 1 << 30};
  int rank = 0;
  do {
    std::vector<std::shared_ptr<Backend>> order;
    for (int i : perm) order.push_back(movable[i]);
    if (last) order.push_back(last);
    const PartitionPlan p = partition_graph(facts, order, t.target, {.compile = false});
    int on_reference = 0;
    for (int b : p.assigned)
      if (b >= 0 && order[b]->name() == "reference") ++on_reference;
    const std::tuple<int, int, int> score{on_reference + p.boundary_copies, static_cast<int>(p.partitions.size()), rank++};
    if (score < best) {
      best = score;
      t.recommended.clear();
      for (const auto& b : order) t.recommended.push_back(b->name());
      t.recommended_why = fmt::format("{} boundary copies, {} partitions, {} nodes on reference kernels "
                                      "(fewest copies and partitions among the orders; ties keep the target's)",
                                      p.boundary_copies, p.partitions.size(), on_reference);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

}  // namespace

Analysis analyze(const engine::GraphFacts& facts, const std::string& model_name, const AnalyzeOptions& opts) {
  Analysis a{.model = model_name};
  for (const Value* v : facts.graph().inputs)
    if (!v->is_constant()) a.inputs.push_back({v->name, facts.dims(v) ? *facts.dims(v) : std::vector<int64_t>{}});
  for (const auto& n : facts.graph().nodes()) {
    ++a.nodes;
    if (facts.folded(n.get())) ++a.folded;
  }
  const int threads = opts.threads > 0 ? opts.threads : omp_get_max_threads();
  std::vector<std::string> seen_missing;
  for (const std::string& name : opts.targets) {
    TargetAnalysis t{.target = find_target(name)};
    t.missing_on_host = missing_on_host(t.target);
    ResolvedBackends r = resolve_backends(opts.backends.empty() ? t.target.backends : opts.backends, threads);
    for (const std::string& m : r.missing)
      if (std::find(a.missing_backends.begin(), a.missing_backends.end(), m) == a.missing_backends.end())
        a.missing_backends.push_back(m);
    for (const auto& b : r.backends)
      if (std::find_if(a.backend_versions.begin(), a.backend_versions.end(),
                       [&](const auto& p) { return p.first == b->name(); }) == a.backend_versions.end())
        a.backend_versions.push_back({b->name(), b->version()});
    t.compiled = t.missing_on_host.empty();
    t.plan = partition_graph(facts, r.backends, t.target, {.compile = t.compiled});
    t.ops = op_placements(t.plan);
    recommend(facts, t);
    t.predicted = predict_latency(facts, target_peaks(t.target, threads));
    a.targets.push_back(std::move(t));
  }
  return a;
}

}  // namespace kiln::backend
