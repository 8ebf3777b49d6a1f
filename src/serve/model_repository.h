// The models kiln serve has loaded for inference: one ModelBatcher (its compiled session and its
// queue) per model version. A version is loaded on its first request, or by the repository
// extension's load (POST /v2/repository/models/{name}/load); unload drops every loaded version
// of a name (requests already queued still run: their batcher lives until they are answered)
// and keeps the name from being loaded on demand until it is loaded again. With a limit on the
// versions loaded (--max-loaded-models), loading one past it unloads the least recently used
// other (its queued requests still run), which its next request loads again.
#pragma once

#include <atomic>
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
  // `metrics` (may be null) gets the batchers' reports, the queue depths, the versions loaded and
  // the evictions. `max_loaded`: the most versions loaded at once (0: no limit).
  ModelRepository(BatchOptions batching, Metrics* metrics, int max_loaded = 0);

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
  int max_loaded() const { return max_loaded_; }

 private:
  // One version's place: loading it holds only `load`, so that a model being compiled (seconds
  // for a large one) holds up neither the other models' requests nor ready and metrics.
  struct Slot {
    std::mutex load;
    std::mutex mu;  // guards batcher
    std::shared_ptr<ModelBatcher> batcher;
    std::atomic<uint64_t> used{0};  // the repository's clock at the version's last request or load
  };
  using Key = std::pair<std::string, int64_t>;
  static std::shared_ptr<ModelBatcher> batcher_of(Slot& s);
  // Past max_loaded_: drops the least recently used loaded versions but `keep`.
  void evict_beyond_limit(const Slot* keep);

  BatchOptions batching_;
  Metrics* metrics_;
  int max_loaded_;
  std::atomic<uint64_t> clock_{0};
  mutable std::mutex mu_;  // guards slots_ and unloaded_
  std::map<Key, std::shared_ptr<Slot>> slots_;
  std::set<std::string> unloaded_;
};

}  // namespace kiln::serve
