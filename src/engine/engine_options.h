// Options of the fast engine (src/engine): threads and limits.
#pragma once

#include <cstdint>
#include <memory>

namespace kiln::engine {

class PlacementHook;
class ChoiceStore;

// Implementation choice by measurement (engine/tuning.h): kOff takes the order of preference and
// reads no decisions but an artifact's; kOn takes the machine's cached decisions and measures the
// missing ones; kAgain measures every choice again and replaces the cached decisions. kDefault:
// the environment's KILN_TUNE (off, on, again), else kOn.
enum class TuneMode { kDefault, kOff, kOn, kAgain };

struct EngineOptions {
  int threads = 0;              // OpenMP threads for kernels (oneDNN shares them); 0: the default
  int optimize_level = 0;       // the portable optimizer's -O level, run first by src/frontend
                                // (compile_model, make_runner); the engine itself refuses one > 0
  bool winograd = true;         // 3x3 stride-1 convs by Winograd where oneDNN has it (fewer
                                // multiplications, float32 error a few times larger) and where
                                // it is faster than direct (measured: `tune`)
  int64_t allocation_cap = 0;   // bytes for one tensor; 0: the default (support/limits.h)
  int max_plans = 16;           // plans kept, one per set of input dims (least recently used out)
  bool thread_backoff = true;   // runs on one thread while the cores are oversubscribed
                                // (engine/thread_backoff.h)
  bool allow_newer_opset = false;  // opsets newer than kiln knows: a warning, not a refusal
  bool bf16 = false;            // convs and matmuls with constant weights compute in bf16 (weights
                                // and inputs rounded to bf16, results float) where the CPU has
                                // AVX-512 BF16; elsewhere float32, said once on stderr
  // The plain initializers that oneDNN's packed copies replaced stay resident (engine/
  // plain_weights.h lets them go otherwise): for `kiln compile`, which writes them out after
  // planning.
  bool keep_plain_weights = false;
  // Where nodes run when other backends take part (engine/placement.h, filled by src/backend);
  // null: every node is lowered by the engine itself.
  std::shared_ptr<PlacementHook> placement;
  // Implementation choice by measurement (engine/tuning.h).
  TuneMode tune = TuneMode::kDefault;
  double tune_budget_ms = 2000;  // a plan's time for measuring choices; then the order of preference
  // Decisions made before (a compiled artifact's), taken ahead of the machine's and even when
  // tune is off; null: none.
  std::shared_ptr<const ChoiceStore> given_choices;
};

}  // namespace kiln::engine
