// Inference of kiln serve: the Open Inference Protocol's JSON tensors in and out, on the fast
// engine, one session per model version, made on its first request and kept.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "engine/compiled_model.h"

namespace kiln::serve {

class InferenceSessions {
 public:
  // The session of (name, version); `load` gives the model's bytes when it must be made.
  engine::CompiledModel& get(const std::string& name, int64_t version, const std::function<Model()>& load);

 private:
  std::mutex mu_;
  std::map<std::pair<std::string, int64_t>, std::unique_ptr<engine::CompiledModel>> sessions_;
};

// Runs `model` on an inference request ({"inputs": [{"name", "shape", "datatype", "data"}],
// optional "outputs": [{"name"}]}) and returns {"outputs": [{"name", "shape", "datatype",
// "data"}]}. Fails (kBadInput) naming the input for a request that does not fit the model.
nlohmann::json infer(engine::CompiledModel& model, const nlohmann::json& request);

}  // namespace kiln::serve
