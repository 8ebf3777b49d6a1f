// The models kiln serve has loaded for inference: one ModelBatcher (its compiled session and its
// queue) per model version. A version is loaded on its first request, or by the repository
// extension's load (POST /v2/repository/models/{name}/load); unload drops every loaded version
// of a name (requests already queued still run: their batcher lives until they are answered)
// and keeps the name from being loaded on demand until it is loaded again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "serve/batcher.h"
#include "serve/metrics.h"

namespace kiln::serve {

class ModelRepository {
 public:
  // `metrics` (may be null) gets the batchers' reports and the queue depths.
  ModelRepository(BatchOptions batching, Metrics* metrics);

  // The batcher of (name, version), made from `load`'s model when it is not loaded; nullptr when
  // the name was unloaded and `explicit_load` is false (a request's lazy load).
  std::shared_ptr<ModelBatcher> get(const std::string& name, int64_t version, const std::function<Model()>& load,
                                    bool explicit_load = false);
  // The loaded batcher of (name, version), or nullptr.
  std::shared_ptr<ModelBatcher> find(const std::string& name, int64_t version) const;
  // Drops the loaded versions of `name`; how many there were.
  int unload(const std::string& name);
  bool unloaded(const std::string& name) const;
  // The loaded versions of `name`.
  std::vector<int64_t> loaded_versions(const std::string& name) const;

 private:
  // One version's place: loading it holds only `load`, so that a model being compiled (seconds
  // for a large one) holds up neither the other models' requests nor ready and metrics.
  struct Slot {
    std::mutex load;
    std::mutex mu;  // guards batcher
    std::shared_ptr<ModelBatcher> batcher;
  };
  using Key = std::pair<std::string, int64_t>;
  static std::shared_ptr<ModelBatcher> batcher_of(Slot& s);

  BatchOptions batching_;
  Metrics* metrics_;
  mutable std::mutex mu_;  // guards slots_ and unloaded_
  std::map<Key, std::shared_ptr<Slot>> slots_;
  std::set<std::string> unloaded_;
};

}  // namespace kiln::serve
