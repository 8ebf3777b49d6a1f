// The steps cpu.lstm and cpu.gru: a KernelContextStep (the reference form's inputs and outputs)
// whose kernel also gets the recurrent weights packed for batch-1 steps (cpu/recurrent_gemm.h),
// made once per model when R is a constant (in its WeightCache, shared by every plan: a stream
// of new sequence lengths does not pack them again). Its kernel splits its work over the plan's
// threads itself.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/cpu/recurrent_gemm.h"
#include "engine/reference_step.h"

namespace kiln::engine {

class Group;
class Lowering;

using RecurrentRun = void (*)(KernelContext& ctx, const std::vector<cpu::PackedRecurrent>& packs);

// R [directions, gates * H, H] packed: per direction one pack per entry of `split` (the gates
// each covers, in R's order: {4} for LSTM, {3} or {2, 1} for GRU), directions one after another.
struct RecurrentPacks {
  std::vector<cpu::PackedRecurrent> packs;
  size_t bytes() const;
  void unpack(void* plain) const;  // R again (WeightCache::native's contract)
};

// The packs of g's anchor's R, from lw's weight cache (made on its first plan), or null when R
// is not a float constant [directions, gates * H, H] (gates: the sum of `split`).
std::shared_ptr<const RecurrentPacks> recurrent_packs(const Group& g, Lowering& lw,
                                                      const std::vector<int64_t>& split);

// Adds the step for g's anchor: `run` with `packs` (null: R is not a constant).
void add_recurrent_step(Group& g, Lowering& lw, std::string_view name, RecurrentRun run,
                        std::shared_ptr<const RecurrentPacks> packs);

}  // namespace kiln::engine
