// Memory planning: the buffers steps write into, placed in one arena so that buffers whose
// lifetimes do not overlap share bytes; in-place steps and views share their input's buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/plan.h"

namespace kiln::engine {

struct MemoryPlan {
  size_t arena_bytes = 0;
  std::vector<int64_t> offset;                   // per slot: byte offset in the arena, -1: none
  std::vector<std::vector<int>> release_after;   // per step: slots to drop after it ran
  // per step: graph outputs it writes into a tensor of their own, made before it runs (the caller
  // keeps them; no copy out of the arena)
  std::vector<std::vector<int>> fresh_before;
  // per step: its placed_inputs the plan put inside their output (their producers write them there)
  std::vector<std::vector<int>> placed;
};

MemoryPlan plan_memory(const std::vector<SlotInfo>& slots,
                       const std::vector<std::unique_ptr<Step>>& steps,
                       const std::vector<int>& outputs);

}  // namespace kiln::engine
