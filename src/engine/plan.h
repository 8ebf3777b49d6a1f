// A prepared plan: the steps of the main graph for one set of input shapes, the slots they pass
// values through, and the memory those slots live in. Runs one at a time.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/run_memory.h"
#include "engine/step.h"
#include "engine/tuning.h"

namespace kiln::engine {

struct SlotInfo {
  enum class Source { kStep, kInput, kConstant };
  std::string name;  // the value's name, for messages
  DataType dtype = DataType::kUndefined;
  std::optional<std::vector<int64_t>> dims;  // logical dims, when known before the run
  std::optional<dnnl::memory::desc> md;      // the layout when it is not row-major
  Source source = Source::kStep;
  RtValue constant;  // kConstant: the value

  // Bytes the slot's buffer takes (0 when the dims are not known).
  size_t bytes() const;
};

// Scratch memory shared by every step of a plan (they run one after the other).
struct Scratchpad {
  size_t bytes = 0;
  void* data = nullptr;
  void need(size_t n) { bytes = std::max(bytes, n); }
};

class Plan {
 public:
  Plan();
  ~Plan();

  std::vector<SlotInfo> slots;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<int> input_slots;   // per fed graph input; -1 where no step reads it
  std::vector<int> output_slots;  // per graph output
  std::shared_ptr<Scratchpad> scratchpad = std::make_shared<Scratchpad>();
  std::vector<PlanChoice> choices;  // the implementation choices its lowering decided (tuning.h)
  double best_ms = 0;  // its fastest run on the model's threads so far (ThreadBackoff's yardstick)

  int add_slot(SlotInfo s);
  // Places the planned buffers (one arena, reused by lifetime; its bytes come from the RunMemory
  // each run is given) and presets constants; call once after the last step is added.
  void finalize();
  size_t arena_bytes() const { return arena_bytes_; }
  // Whether a step may run on more than one thread (ThreadBackoff leaves a plan that is not alone).
  bool parallel() const { return parallel_; }
  // The bytes a run takes of its RunMemory: the arena, then the steps' scratchpad.
  size_t run_bytes() const { return scratch_offset_ + scratchpad->bytes; }
  // Lets go of the buffer the last run was bound to (another plan's run replaced it).
  void unbind();
  // One line per step: kernel, node, the slots read (marked "in place" when their producer wrote
  // them inside this step's output) and written, with their layouts; then a line per
  // implementation choice: the candidates' times and where the decision came from.
  std::string describe() const;

  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer, RunMemory& memory);

 private:
  // The arena's slots viewed in `buffer` (again only when it is another buffer than the last;
  // null: none).
  void bind(const std::shared_ptr<void>& buffer);
  void run_step(size_t i, RunObserver* observer);
  bool in_arena(const Tensor& t) const;

  RunState state_;
  std::shared_ptr<void> arena_;  // the buffer the arena slots view now (null: not bound)
  size_t arena_bytes_ = 0;
  bool parallel_ = false;
  size_t scratch_offset_ = 0;    // where the scratchpad starts in it
  std::vector<int64_t> offset_;  // per slot: its byte offset in the arena, -1: none
  std::vector<std::vector<int>> release_after_;  // per step: slots no later step reads
  std::vector<std::vector<int>> fresh_before_;   // per step: outputs made in tensors of their own
  std::vector<std::vector<int>> placed_;         // per step: inputs written inside its output
};

}  // namespace kiln::engine
