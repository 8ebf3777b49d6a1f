#include "artifact/placement.h"

#include <fmt/format.h>
#include <omp.h>

#include <map>

#include "backend/engine_placement.h"
#include "backend/latency_model.h"
#include "backend/registry.h"
#include "engine/graph_facts.h"
#include "support/error.h"

namespace kiln::artifact {

namespace {

nlohmann::json node_range(const std::vector<const Node*>& nodes) {
  return {{"nodes", nodes.size()},
          {"first", backend::node_label(*nodes.front())},
          {"last", backend::node_label(*nodes.back())}};
}

}  // namespace

PlacementRecord place_for_artifact(Model& model, const std::vector<std::vector<int64_t>>& sig,
                                   const Target& target, const PlacementRequest& req) {
  PlacementRecord r;
  const int threads = req.threads > 0 ? req.threads : omp_get_max_threads();
  const std::vector<std::string>& order = req.backends.empty() ? target.backends : req.backends;
  backend::ResolvedBackends resolved = backend::resolve_backends(order, threads);
  for (const std::string& m : resolved.missing) {
    KILN_CHECK(!req.strict, ErrorKind::kBadInput, "--strict: backend {}", m);
    r.notes.push_back(fmt::format("backend {}: its nodes go to the next backend", m));
  }
  engine::GraphFacts facts(model, sig);
  const backend::PartitionPlan plan =
      backend::partition_graph(facts, resolved.backends, target, {.compile = req.compile});
  if (req.strict) backend::enforce_strict(plan);
  r.predicted = backend::prediction_json(backend::predict_latency(facts, backend::target_peaks(target, threads)));

  std::map<int, int> nodes_of;
  for (int b : plan.assigned)
    if (b >= 0) ++nodes_of[b];
  nlohmann::json order_json = nlohmann::json::array(), partitions = nlohmann::json::array();
  bool outside_engine = false;
  for (size_t b = 0; b < plan.backends.size(); ++b) {
    const backend::Backend& be = *plan.backends[b];
    order_json.push_back(be.name());
    if (!nodes_of.contains(static_cast<int>(b))) continue;
    r.backends.push_back({{"name", be.name()}, {"version", be.version()}, {"nodes", nodes_of[static_cast<int>(b)]},
                          {"in_engine", be.in_engine()}});
  }
  for (const backend::Partition& p : plan.partitions) {
    const backend::Backend& be = *plan.backends[p.backend];
    outside_engine = outside_engine || !be.in_engine();
    nlohmann::json pj = node_range(p.nodes);
    pj["backend"] = be.name();
    pj["boundary_copies"] = p.boundary_copies;
    partitions.push_back(std::move(pj));
  }
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const backend::Fallback& f : plan.fallbacks) {
    nlohmann::json fj = node_range(f.nodes);
    fj["backend"] = f.backend;
    fj["reason"] = f.reason;
    fallbacks.push_back(std::move(fj));
    r.notes.push_back(fmt::format("backend '{}' could not compile a partition of {} nodes (first {}): {}; "
                                  "they run on the next backend",
                                  f.backend, f.nodes.size(), backend::node_label(*f.nodes.front()), f.reason));
  }
  r.placement = {{"order", order_json},
                 {"summary", backend::placement_summary(plan)},
                 {"outside_engine", outside_engine},
                 {"compiled", req.compile},
                 {"partitions", partitions},
                 {"fallbacks", fallbacks},
                 {"boundary_copies", plan.boundary_copies}};
  if (!req.compile)
    r.notes.push_back("the placement is the backends' claims only: the target does not run here, so "
                      "no partition was compiled (a failure would fall back at load)");
  return r;
}

std::vector<std::string> placed_backends(const Manifest& m) {
  const auto it = m.json.find("placement");
  if (it == m.json.end() || !it->is_object()) return {};  // older artifacts: the engine runs all
  const nlohmann::json& p = *it;
  const auto outside = p.find("outside_engine");
  if (outside == p.end() || !outside->is_boolean() || !outside->get<bool>()) return {};
  const auto order = p.find("order");
  KILN_CHECK(order != p.end() && order->is_array() && !order->empty() && order->size() <= 16,
             ErrorKind::kBadModel, "the manifest's placement has no backend order");
  std::vector<std::string> names;
  for (const nlohmann::json& n : *order) {
    KILN_CHECK(n.is_string(), ErrorKind::kBadModel, "the manifest's placement order holds a {}", n.type_name());
    names.push_back(n.get<std::string>());
  }
  try {
    return backend::parse_backend_list(fmt::format("{}", fmt::join(names, ",")));
  } catch (const Error& e) {
    fail(ErrorKind::kBadModel, "the manifest's placement order: {}", e.what());
  }
}

std::shared_ptr<engine::PlacementHook> artifact_placement(const Manifest& m, int threads) {
  std::vector<std::string> order = placed_backends(m);
  if (order.empty()) return nullptr;
  return std::make_shared<backend::BackendPlacement>(
      backend::PlacementOptions{.backends = std::move(order), .threads = threads, .target = m.target});
}

}  // namespace kiln::artifact
