// The rewrite record: what the optimizer did, pass by pass, as JSON, and the before/after
// numbers of a model.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "opt/bisect.h"
#include "opt/pipeline.h"
#include "opt/verify.h"

namespace kiln::opt {

struct ModelStats {
  std::map<std::string, int64_t> ops;  // op type -> count, subgraphs included
  int64_t nodes = 0;
  int64_t subgraphs = 0;
  int64_t initializers = 0;
  int64_t initializer_bytes = 0;
  int64_t file_bytes = 0;  // model file plus its external data files, when saved
};
ModelStats model_stats(const Model& m);

nlohmann::json to_json(const ModelStats& s);
nlohmann::json to_json(const OptimizeResult& r);
nlohmann::json to_json(const VerifyReport& r);
nlohmann::json to_json(const BisectResult& r);

}  // namespace kiln::opt
