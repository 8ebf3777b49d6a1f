#include "serve/model_repository.h"

#include <algorithm>
#include <iostream>
#include <limits>

#include "frontend/compile.h"

namespace kiln::serve {

ModelRepository::ModelRepository(BatchOptions batching, Metrics* metrics, int max_loaded)
    : batching_(std::move(batching)), metrics_(metrics), max_loaded_(max_loaded) {
  if (!metrics_) return;
  declare_inference_metrics(*metrics_);
  metrics_->declare("kiln_inference_models_loaded", Metrics::Type::kGauge,
                    "Model versions loaded now (a session and its batcher each).");
  metrics_->declare("kiln_inference_model_evictions_total", Metrics::Type::kCounter,
                    "Versions unloaded as the least recently used, past --max-loaded-models.");
  metrics_->collect("kiln_inference_models_loaded", [this] {
    std::vector<std::shared_ptr<Slot>> slots;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [key, slot] : slots_) slots.push_back(slot);
    }
    double loaded = 0;
    for (const auto& slot : slots) loaded += batcher_of(*slot) != nullptr;
    return std::vector<std::pair<Labels, double>>{{{}, loaded}};
  });
  metrics_->collect("kiln_inference_queue_depth", [this] {
    std::vector<std::pair<Key, std::shared_ptr<Slot>>> slots;
    {
      std::lock_guard<std::mutex> lock(mu_);
      slots.assign(slots_.begin(), slots_.end());
    }
    std::vector<std::pair<Labels, double>> depths;
    for (const auto& [key, slot] : slots)
      if (auto b = batcher_of(*slot))
        depths.push_back({{{"model", key.first}, {"version", std::to_string(key.second)}}, double(b->queued())});
    return depths;
  });
}

std::shared_ptr<ModelBatcher> ModelRepository::batcher_of(Slot& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  return s.batcher;
}

std::shared_ptr<ModelBatcher> ModelRepository::get(const std::string& name, int64_t version,
                                                   const std::function<Model()>& load, bool explicit_load) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (explicit_load) unloaded_.erase(name);
    else if (unloaded_.contains(name)) return nullptr;
    auto& s = slots_[{name, version}];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  slot->used = ++clock_;
  if (auto b = batcher_of(*slot)) return b;
  std::shared_ptr<ModelBatcher> b;
  {
    std::lock_guard<std::mutex> loading(slot->load);  // one load per version; others wait for it
    if (auto loaded = batcher_of(*slot)) return loaded;
    auto model = frontend::compile_model(load(), engine::EngineOptions{.optimize_level = 2});
    b = std::make_shared<ModelBatcher>(std::move(model), batching_, metrics_,
                                       Labels{{"model", name}, {"version", std::to_string(version)}});
    std::lock_guard<std::mutex> lock(slot->mu);
    slot->batcher = b;
    slot->used = ++clock_;
  }
  if (max_loaded_ > 0) evict_beyond_limit(slot.get());
  return b;
}

void ModelRepository::evict_beyond_limit(const Slot* keep) {
  std::vector<std::pair<Key, std::shared_ptr<Slot>>> dropped;  // destroyed outside the lock (they drain)
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::map<Key, std::shared_ptr<Slot>>::iterator> loaded;
    for (auto it = slots_.begin(); it != slots_.end(); ++it)
      if (batcher_of(*it->second)) loaded.push_back(it);
    std::sort(loaded.begin(), loaded.end(), [](const auto& a, const auto& b) { return a->second->used < b->second->used; });
    size_t count = loaded.size();
    for (auto it : loaded) {
      if (count <= static_cast<size_t>(max_loaded_)) break;
      if (it->second.get() == keep) continue;
      dropped.emplace_back(it->first, std::move(it->second));
      slots_.erase(it);
      --count;
    }
  }
  for (const auto& [key, slot] : dropped) {
    std::cerr << "kiln serve: unloaded " << key.first << " version " << key.second
              << ", the least recently used (--max-loaded-models " << max_loaded_ << ")\n";
    if (metrics_)
      metrics_->add("kiln_inference_model_evictions_total", {{"model", key.first}, {"version", std::to_string(key.second)}});
  }
}

std::shared_ptr<ModelBatcher> ModelRepository::find(const std::string& name, int64_t version) const {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find({name, version});
    if (it == slots_.end()) return nullptr;
    slot = it->second;
  }
  return batcher_of(*slot);
}

int ModelRepository::unload(const std::string& name) {
  std::vector<std::shared_ptr<Slot>> dropped;  // their batchers are destroyed outside the lock (they drain)
  {
    std::lock_guard<std::mutex> lock(mu_);
    unloaded_.insert(name);
    const Key first{name, std::numeric_limits<int64_t>::min()};
    for (auto it = slots_.lower_bound(first); it != slots_.end() && it->first.first == name;) {
      dropped.push_back(std::move(it->second));
      it = slots_.erase(it);
    }
  }
  int loaded = 0;
  for (const auto& slot : dropped) loaded += batcher_of(*slot) != nullptr;
  return loaded;
}

bool ModelRepository::unloaded(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return unloaded_.contains(name);
}

std::vector<int64_t> ModelRepository::loaded_versions(const std::string& name) const {
  std::vector<std::pair<int64_t, std::shared_ptr<Slot>>> slots;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Key first{name, std::numeric_limits<int64_t>::min()};
    for (auto it = slots_.lower_bound(first); it != slots_.end() && it->first.first == name; ++it)
      slots.emplace_back(it->first.second, it->second);
  }
  std::vector<int64_t> v;
  for (const auto& [version, slot] : slots)
    if (batcher_of(*slot)) v.push_back(version);
  return v;
}

}  // namespace kiln::serve
