#include "engine/onednn/dnnl_step.h"

#include "engine/onednn/dnnl_context.h"
#include "support/error.h"

namespace kiln::engine {

DnnlStep::DnnlStep(dnnl::primitive prim, const Node* n, std::string_view k) : prim_(std::move(prim)) {
  node = n;
  kernel = k;
  reads_packed_constants = true;
}

void DnnlStep::bind_input(int arg, int s, const dnnl::memory::desc& md,
                          const std::vector<int64_t>& dims) {
  dnnl::memory m = unbound_memory(md);
  args_[arg] = m;
  bindings_.push_back({m, s, dims});
  inputs.push_back(s);
}

void DnnlStep::bind_output(int arg, int s, const dnnl::memory::desc& md, OutputMemory memory,
                           int share) {
  dnnl::memory m = unbound_memory(md);
  args_[arg] = m;
  bindings_.push_back({m, s, {}});
  outputs.push_back({s, memory, share});
}

void DnnlStep::bind_constant(int arg, dnnl::memory m) { args_[arg] = std::move(m); }

void DnnlStep::bind_scratchpad(const dnnl::memory::desc& md, std::shared_ptr<Scratchpad> pad) {
  if (md.get_size() == 0) return;
  pad->need(md.get_size());
  scratch_ = unbound_memory(md);
  args_[DNNL_ARG_SCRATCHPAD] = scratch_;
  pad_ = std::move(pad);
}

void DnnlStep::run(RunState& st) {
  for (Binding& b : bindings_) {
    const RtValue& v = st.slots[b.slot];
    KILN_CHECK(v.is_tensor(), ErrorKind::kRuntime, "{}: an input is not a tensor", kernel);
    if (!b.dims.empty() && v.tensor.dims() != b.dims)
      fail(ErrorKind::kRuntime, "{}: input of shape {} where the plan expects {}", kernel,
           dims_to_string(v.tensor.dims()), dims_to_string(b.dims));
    b.mem.set_data_handle(const_cast<void*>(v.tensor.raw()));
  }
  if (pad_) scratch_.set_data_handle(pad_->data);
  prim_.execute(dnnl_stream(), args_);
}

}  // namespace kiln::engine
