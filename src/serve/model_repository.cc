#include "serve/model_repository.h"

#include <limits>

namespace kiln::serve {

ModelRepository::ModelRepository(BatchOptions batching, Metrics* metrics)
    : batching_(std::move(batching)), metrics_(metrics) {
  if (!metrics_) return;
  declare_inference_metrics(*metrics_);
  metrics_->collect("kiln_inference_queue_depth", [this] {
    std::vector<std::pair<Labels, double>> depths;
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, b] : loaded_)
      depths.push_back({{{"model", key.first}, {"version", std::to_string(key.second)}}, double(b->queued())});
    return depths;
  });
}

std::shared_ptr<ModelBatcher> ModelRepository::get(const std::string& name, int64_t version,
                                                   const std::function<Model()>& load, bool explicit_load) {
  std::lock_guard<std::mutex> lock(mu_);
  if (explicit_load) unloaded_.erase(name);
  else if (unloaded_.contains(name)) return nullptr;
  auto& slot = loaded_[{name, version}];
  if (!slot) {
    try {
      auto model = std::make_unique<engine::CompiledModel>(load(), engine::EngineOptions{.optimize_level = 2});
      slot = std::make_shared<ModelBatcher>(std::move(model), batching_, metrics_,
                                            Labels{{"model", name}, {"version", std::to_string(version)}});
    } catch (...) {
      loaded_.erase({name, version});
      throw;
    }
  }
  return slot;
}

std::shared_ptr<ModelBatcher> ModelRepository::find(const std::string& name, int64_t version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = loaded_.find({name, version});
  return it == loaded_.end() ? nullptr : it->second;
}

int ModelRepository::unload(const std::string& name) {
  std::vector<std::shared_ptr<ModelBatcher>> dropped;  // destroyed outside the lock (they drain)
  {
    std::lock_guard<std::mutex> lock(mu_);
    unloaded_.insert(name);
    for (auto it = loaded_.lower_bound({name, std::numeric_limits<int64_t>::min()}); it != loaded_.end() && it->first.first == name;) {
      dropped.push_back(std::move(it->second));
      it = loaded_.erase(it);
    }
  }
  return static_cast<int>(dropped.size());
}

bool ModelRepository::unloaded(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return unloaded_.contains(name);
}

std::vector<int64_t> ModelRepository::loaded_versions(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> v;
  for (auto it = loaded_.lower_bound({name, std::numeric_limits<int64_t>::min()}); it != loaded_.end() && it->first.first == name; ++it)
    v.push_back(it->first.second);
  return v;
}

}  // namespace kiln::serve
