// The plans a CompiledModel keeps, by the concrete dims of its inputs: least recently used out
// first once `capacity` plans are kept, and counts of what was made, reused and evicted (kiln
// bench --vary prints them). A plan made for one set of dims is never run on another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <utility>

namespace kiln::engine {

struct PlanCacheStats {
  int64_t made = 0;       // plans made (a lookup that missed)
  int64_t reused = 0;     // lookups that found their plan
  int64_t evicted = 0;    // plans dropped to make room
  double planning_ms = 0; // time spent making plans, of which:
  double facts_ms = 0;    //   inference with the fed dims, constant nodes evaluated (graph_facts)
  double lowering_ms = 0; //   grouping and steps: oneDNN primitives made, weights reordered
  double memory_ms = 0;   //   the memory plan and the arena (Plan::finalize)
  size_t kept = 0;        // plans held now
  size_t run_memory_bytes = 0;  // the one buffer every plan runs in (the largest plan's needs)
  int64_t runs_on_one_thread = 0;  // runs put on one thread, the cores oversubscribed
                                   // (engine/thread_backoff.h)
};

template <class Key, class Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value for k, made the most recently used; nullptr when there is none.
  Value* find(const Key& k) {
    auto it = index_.find(k);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second.get();
  }
  // Adds v under k (absent), dropping the least recently used entry when full.
  Value& insert(const Key& k, std::unique_ptr<Value> v) {
    if (order_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++evicted_;
    }
    order_.emplace_front(k, std::move(v));
    index_[k] = order_.begin();
    return *order_.front().second;
  }
  template <class F>
  void for_each(F&& f) {
    for (auto& [k, v] : order_) f(*v);
  }
  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }
  int64_t evicted() const { return evicted_; }

 private:
  using Entry = std::pair<Key, std::unique_ptr<Value>>;
  size_t capacity_;
  std::list<Entry> order_;  // most recently used first
  std::map<Key, typename std::list<Entry>::iterator> index_;
  int64_t evicted_ = 0;
};

}  // namespace kiln::engine
