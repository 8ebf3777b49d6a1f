// A step that runs one oneDNN primitive: its memory arguments are bound to slots (their buffers
// set before each execution), to constants made at preparation (weights), or to the plan's
// shared scratchpad.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/plan.h"
#include "engine/step.h"

namespace kiln::engine {

class DnnlStep : public Step {
 public:
  DnnlStep(dnnl::primitive prim, const Node* node, std::string_view kernel);

  // Argument `arg` reads slot s (described by md). `dims`: the slot's logical dims, checked
  // against the tensor at run time (a reference kernel before it may have made another shape).
  void bind_input(int arg, int s, const dnnl::memory::desc& md, const std::vector<int64_t>& dims);
  // Argument `arg` writes slot s.
  void bind_output(int arg, int s, const dnnl::memory::desc& md, OutputMemory memory, int share);
  // Argument `arg` is a memory fixed at preparation (weights, bias).
  void bind_constant(int arg, dnnl::memory m);
  void bind_scratchpad(const dnnl::memory::desc& md, std::shared_ptr<Scratchpad> pad);

  void run(RunState& st) override;

 private:
  struct Binding {
    dnnl::memory mem;
    int slot;
    std::vector<int64_t> dims;  // empty for outputs: not checked
  };
  dnnl::primitive prim_;
  std::unordered_map<int, dnnl::memory> args_;
  std::vector<Binding> bindings_;
  dnnl::memory scratch_;
  std::shared_ptr<Scratchpad> pad_;
};

}  // namespace kiln::engine
