#include "backend/engine_placement.h"

#include <fmt/format.h>
#include <omp.h>

#include <iostream>

#include "backend/registry.h"
#include "support/error.h"

namespace kiln::backend {

BackendPlacement::BackendPlacement(const PlacementOptions& opts)
    : opts_(opts), target_(find_target(opts.target)) {
  const int threads = opts.threads > 0 ? opts.threads : omp_get_max_threads();
  ResolvedBackends r = resolve_backends(opts.backends, threads);
  for (const std::string& m : r.missing) {
    if (opts.strict) fail(ErrorKind::kBadInput, "--strict: backend {}", m);
    std::cerr << fmt::format("kiln: backend {}; its nodes run on the next backend\n", m);
  }
  backends_ = std::move(r.backends);
}

engine::Placement BackendPlacement::place(const engine::GraphFacts& facts) {
  PartitionPlan plan = partition_graph(facts, backends_, target_, {.compile = true});
  if (opts_.strict) enforce_strict(plan);
  for (const Fallback& f : plan.fallbacks)
    std::cerr << fmt::format("kiln: backend '{}' could not compile a partition of {} nodes (first {}): {}; "
                             "they run on the next backend\n",
                             f.backend, f.nodes.size(), node_label(*f.nodes.front()), f.reason);
  // Nodes left to reference after cpu are the engine's anyway: it runs them on reference kernels
  // unless it fuses them into a neighbour's group, which forcing them would prevent. Reference
  // ahead of cpu (or without it) is forced.
  int cpu = -1, reference = -1;
  for (size_t b = 0; b < plan.backends.size(); ++b) {
    if (plan.backends[b]->name() == "cpu") cpu = static_cast<int>(b);
    if (plan.backends[b]->name() == "reference") reference = static_cast<int>(b);
  }
  const bool force_reference = reference >= 0 && (cpu < 0 || reference < cpu);
  engine::Placement out;
  for (const Partition& p : plan.partitions) {
    const Backend& b = *plan.backends[p.backend];
    if (!b.in_engine()) {
      std::shared_ptr<CompiledPartition> c = p.compiled;
      out.partitions.push_back({.kernel = b.name(), .nodes = p.nodes, .inputs = p.inputs, .outputs = p.outputs,
                                .run = [c](std::span<const Tensor* const> in, std::span<Tensor* const> o) {
                                  c->run(in, o);
                                }});
    } else if (b.name() == "reference" && force_reference) {
      out.reference.insert(p.nodes.begin(), p.nodes.end());
    }
  }
  summary_ = placement_summary(plan);
  return out;
}

std::string placement_summary(const PartitionPlan& plan) {
  std::string s;
  for (size_t b = 0; b < plan.backends.size(); ++b) {
    int parts = 0, nodes = 0;
    for (const Partition& p : plan.partitions)
      if (p.backend == static_cast<int>(b)) {
        ++parts;
        nodes += static_cast<int>(p.nodes.size());
      }
    if (nodes == 0) continue;
    s += fmt::format("{}{}: {} partition{}, {} node{}", s.empty() ? "" : "; ", plan.backends[b]->name(), parts,
                     parts == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
  }
  if (!plan.fallbacks.empty()) s += fmt::format("; {} partitions fell back", plan.fallbacks.size());
  s += fmt::format("; {} boundary copies", plan.boundary_copies);
  return s;
}

std::shared_ptr<BackendPlacement> make_placement(const std::string& spec, bool strict, int threads) {
  if (spec.empty()) {
    if (strict) fail(ErrorKind::kBadInput, "--strict needs --backends");
    return nullptr;
  }
  return std::make_shared<BackendPlacement>(
      PlacementOptions{.backends = parse_backend_list(spec), .strict = strict, .threads = threads});
}

}  // namespace kiln::backend
