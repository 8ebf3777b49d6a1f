// The steps cpu.lstm and cpu.gru: a KernelContextStep (the reference form's inputs and outputs)
// whose kernel also gets the recurrent weights packed for batch-1 steps (cpu/recurrent_gemm.h),
// made once while lowering when R is a constant. Its kernel splits its work over the plan's
// threads itself.
#pragma once

#include <string_view>
#include <vector>

#include "engine/cpu/recurrent_gemm.h"
#include "engine/reference_step.h"

namespace kiln::engine {

class Group;
class Lowering;

using RecurrentRun = void (*)(KernelContext& ctx, const std::vector<cpu::PackedRecurrent>& packs);

// Adds the step for g's anchor: `run` with `packs` (empty: R is not a constant).
void add_recurrent_step(Group& g, Lowering& lw, std::string_view name, RecurrentRun run,
                        std::vector<cpu::PackedRecurrent> packs);

// R [directions, gates * H, H] of g's anchor when it is a float constant, else null.
const Tensor* constant_recurrent_weights(const Group& g, const Lowering& lw, int64_t gates);

}  // namespace kiln::engine
