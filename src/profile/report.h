// Everything a profile report shows, gathered once, and the three ways it is written: a terminal
// table, one JSON object, and a self-contained HTML page.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "profile/peak_probe.h"
#include "profile/profile_data.h"
#include "profile/summary.h"

namespace kiln {

struct ModelSummary {
  std::string path;
  std::string producer;
  std::map<std::string, int64_t> opsets;          // "ai.onnx" for the default domain
  std::vector<std::pair<std::string, std::string>> inputs;   // name, what was fed: "float[1,3,224,224]"
  std::vector<std::pair<std::string, std::string>> outputs;  // name, inferred type
  int nodes = 0;                                  // of the main graph, as it ran
  int subgraph_nodes = 0;
  std::map<std::string, int> ops;                 // op type -> nodes, main graph
  int64_t params = 0, param_bytes = 0;
};

ModelSummary summarize_model(const Model& m, const std::string& path,
                             const std::vector<const Value*>& inputs,
                             const std::vector<RtValue>& feeds);

struct ProfileReport {
  ModelSummary model;
  ProfileData data;
  ProfileSummary summary;
  MachinePeak peak;
  int threads = 1;
};

// The terminal table: the run, the top `top` op types and nodes.
std::string profile_table(const ProfileReport& r, int top = 15);
nlohmann::ordered_json profile_json(const ProfileReport& r);
std::string profile_html(const ProfileReport& r);

}  // namespace kiln
