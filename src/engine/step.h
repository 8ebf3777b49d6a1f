// One unit of work of a prepared plan: a kernel run on slots (the values of a run, by index).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "runtime/observer.h"

namespace kiln::engine {

// The values of one run, by slot index. A slot holds a value in one layout; a value that several
// kernels need in different layouts has one slot per layout.
struct RunState {
  std::vector<RtValue> slots;
  RunObserver* observer = nullptr;
};

// How a step's output slot gets its memory.
enum class OutputMemory {
  kPlanned,  // the step writes into the slot's buffer, placed by the memory plan before the run
  kSelf,     // the step puts a value of its own into the slot (reference kernels, unknown sizes)
  kAlias,    // the step puts a view of input slot `share` into the slot (Reshape, Flatten ...)
};

struct StepOutput {
  int slot = -1;
  OutputMemory memory = OutputMemory::kPlanned;
  // kPlanned: the input slot whose buffer this output takes over (in place: the input dies at this
  // step); -1: a buffer of its own. kAlias: the slot viewed.
  int share = -1;
};

// An input the memory plan may place `offset` bytes into the buffer of output slot `within`, so
// that its producer writes it where the step would copy it to (a Concat's pieces). A hint: taken
// when nothing else shares the input's buffer and no later step reads it; the step checks where
// the input is at run time and copies it when it is elsewhere.
struct PlacedInput {
  int slot = -1;
  int within = -1;
  size_t offset = 0;
};

class Step {
 public:
  virtual ~Step() = default;
  virtual void run(RunState& st) = 0;
  // What the plan's description adds under the step's line (how its subgraphs run); may be empty.
  virtual std::string detail() const { return {}; }

  // What the profiler sees: the node the step was lowered from (the anchor of a fused group, or
  // the consumer a layout change was made for) and the implementation's name.
  const Node* node = nullptr;
  std::string_view kernel;
  std::vector<int> inputs;  // slots read, in the order reported (-1: an omitted input)
  std::vector<int> also_reads;  // slots read but not reported (values a subgraph uses)
  std::vector<StepOutput> outputs;
  std::vector<PlacedInput> placed_inputs;
  int threads = 0;  // OpenMP threads the step runs with; kPlanThreads: the plan's; 0: not chosen yet
                    // (Lowering::add chooses by the bytes moved)
  // Its constants are read only from the WeightCache's packed copies (oneDNN's layouts, kiln's
  // own packings), never as the plain initializers (plain_weights.h may let those go).
  bool reads_packed_constants = false;
};

}  // namespace kiln::engine
