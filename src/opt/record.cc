#include "opt/record.h"

namespace kiln::opt {

namespace {

void count(const Graph& g, ModelStats& s) {
  for (const auto& n : g.nodes()) {
    ++s.nodes;
    ++s.ops[n->domain.empty() ? n->op_type : n->domain + "." + n->op_type];
  }
  for (const Value* v : g.initializers) {
    ++s.initializers;
    s.initializer_bytes += static_cast<int64_t>(v->data.nbytes());
  }
  for (const Graph* sg : g.subgraphs()) {
    ++s.subgraphs;
    count(*sg, s);
  }
}

nlohmann::json rewrite_json(const Rewrite& r) {
  return {{"pass", r.pass}, {"what", r.what}, {"removed", r.removed}, {"added", r.added}};
}

}  // namespace

ModelStats model_stats(const Model& m) {
  ModelStats s;
  count(*m.graph, s);
  return s;
}

nlohmann::json to_json(const ModelStats& s) {
  return {{"nodes", s.nodes},
          {"subgraphs", s.subgraphs},
          {"ops", s.ops},
          {"initializers", s.initializers},
          {"initializer_bytes", s.initializer_bytes},
          {"file_bytes", s.file_bytes}};
}

nlohmann::json to_json(const OptimizeResult& r) {
  nlohmann::json passes = nlohmann::json::array();
  for (const auto& p : r.passes)
    passes.push_back({{"name", p.name}, {"runs", p.runs}, {"rewrites", p.rewrites}, {"ms", p.ms}});
  nlohmann::json rewrites = nlohmann::json::array();
  for (const auto& w : r.rewrites) rewrites.push_back(rewrite_json(w));
  nlohmann::json misses = nlohmann::json::array();
  for (const auto& n : r.near_misses)
    misses.push_back({{"pass", n.pass}, {"node", n.node}, {"reason", n.reason}});
  return {{"rounds", r.rounds},     {"ms", r.ms},          {"passes", passes},
          {"rewrites", rewrites},   {"near_misses", misses}};
}

nlohmann::json to_json(const VerifyReport& r) {
  nlohmann::json outs = nlohmann::json::array();
  for (const auto& o : r.outputs) {
    nlohmann::json j = {{"name", o.name}, {"max_abs_error", o.max_abs_error},
                        {"max_rel_error", o.max_rel_error}, {"ok", o.ok}};
    if (!o.ok) j["reason"] = o.reason;
    outs.push_back(std::move(j));
  }
  nlohmann::json j = {{"ok", r.ok}, {"outputs", outs}};
  if (!r.chosen_dims.empty()) {
    j["chosen_dims"] = r.chosen_dims;
    if (!r.chosen_because.empty()) j["chosen_because"] = r.chosen_because;
  }
  return j;
}

nlohmann::json to_json(const BisectResult& r) {
  nlohmann::json j = {{"total_rewrites", r.total}, {"replays", r.runs}};
  if (r.first_bad) {
    j["first_bad"] = *r.first_bad;
    j["rewrite"] = rewrite_json(*r.rewrite);
    j["failure"] = r.failure;
  }
  return j;
}

}  // namespace kiln::opt
