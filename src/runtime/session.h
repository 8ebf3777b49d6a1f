// The reference runtime: check, infer, plan, then run the graph node by node with the reference
// kernels. The definition every faster path is tested against. It takes models in kiln's IR;
// reading an .onnx file is src/onnx's (frontend::load_session opens one), so the runtime links
// no protobuf.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "runtime/observer.h"

namespace kiln {

struct SessionOptions {
  // Bytes for one tensor, while this session prepares and runs the model (AllocationCapScope);
  // 0: the cap in force around it (by default limits::kDefaultAllocationCap).
  int64_t allocation_cap = 0;
  bool infer = true;           // run shape inference at creation
  bool allow_newer_opset = false;  // run opsets newer than kiln knows, with a warning on stderr
};

// What a Session does to a model before it can run: the checks, local functions inlined, shapes
// inferred (when opts.infer). Other executors (the fast engine) start from the same.
void prepare_model(Model& model, const SessionOptions& opts = {});
// Fails (kBadInput) unless `feeds` fit `inputs` (the graph inputs a caller feeds, in order): count,
// kinds, dtypes, ranks and the known dims.
void check_feeds(const std::vector<const Value*>& inputs, const std::vector<RtValue>& feeds);

class Session {
 public:
  Session(Model model, const SessionOptions& opts = {});
  ~Session();

  const Model& model() const { return model_; }
  // The inputs a caller feeds: graph inputs without an initializer.
  const std::vector<const Value*>& inputs() const { return inputs_; }
  const std::vector<const Value*>& outputs() const { return outputs_; }

  // Feeds in inputs() order; results in outputs() order. `observer` hears every node run.
  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer = nullptr);
  std::map<std::string, RtValue> run(const std::map<std::string, RtValue>& feeds,
                                     RunObserver* observer = nullptr);

 private:
  Model model_;
  SessionOptions opts_;
  std::vector<const Value*> inputs_;
  std::vector<const Value*> outputs_;
};

}  // namespace kiln
