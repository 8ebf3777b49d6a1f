// Watching a run node by node: the profiler's hook. Every executor (the reference interpreter, the
// fast engine) reports each node it runs, with the kernel that ran and its inputs and outputs.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln {

struct NodeEvent {
  const Node* node = nullptr;
  std::string_view kernel;  // the implementation that ran: "reference", "onednn.conv", ...
  int depth = 0;            // 0: a node of the main graph; n: inside n levels of subgraphs
  std::span<const RtValue* const> inputs;  // null entries: omitted inputs
  std::span<const RtValue> outputs;        // none-valued entries: outputs not produced
  int64_t start_ns = 0, end_ns = 0;        // std::chrono::steady_clock, nanoseconds
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_node(const NodeEvent& e) = 0;
};

inline int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace kiln
