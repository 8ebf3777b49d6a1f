// `kiln analyze`: per target, which backend takes each node and why the others do not, the
// partition plan (partitions, sizes, boundary copies, compile fallbacks) and a recommended backend
// order; as text, JSON and an HTML page with the graph colored by backend (analysis_report.cc).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/latency_model.h"
#include "backend/partitioner.h"

namespace kiln::backend {

// One op type's placement: nodes per backend, and the reasons of the backends (earlier in the
// order) that did not take them, counted.
struct OpPlacement {
  std::string op;
  int nodes = 0;
  std::map<std::string, int> placed;                                 // backend -> nodes
  std::map<std::pair<std::string, std::string>, int> refused;        // (backend, reason) -> nodes
};

struct TargetAnalysis {
  Target target;
  std::vector<std::string> missing_on_host;  // why code for it cannot run here (empty: it can)
  PartitionPlan plan;                        // compiled when the target runs here
  bool compiled = false;
  std::vector<OpPlacement> ops;              // by node count, descending
  std::vector<std::string> recommended;      // backend order
  std::string recommended_why;
  LatencyPrediction predicted;               // the roofline estimate on the target's peaks
};

struct Analysis {
  std::string model;
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;  // name, dims analyzed with
  int nodes = 0, folded = 0;
  std::vector<std::string> missing_backends;  // "xnnpack: plugin ... not found"
  std::vector<std::pair<std::string, std::string>> backend_versions;  // name, version
  std::vector<TargetAnalysis> targets;
};

struct AnalyzeOptions {
  std::vector<std::string> targets = {"native"};
  std::vector<std::string> backends;  // empty: each target's own order
  int threads = 0;
};

// Analyzes facts' graph per target. The backends' partitions are compiled for targets this
// machine runs (so compile failures show as fallbacks), claimed only for the others.
Analysis analyze(const engine::GraphFacts& facts, const std::string& model_name, const AnalyzeOptions& opts);

std::string analysis_text(const Analysis& a);
nlohmann::json analysis_json(const Analysis& a);
std::string analysis_html(const Analysis& a);

}  // namespace kiln::backend
