#include "engine/native/native_step.h"

#include "engine/lowering.h"
#include "support/error.h"

namespace kiln::engine {

NativeStep::NativeStep(const Node& n, std::string_view kernel_name) {
  node = &n;
  kernel = kernel_name;
}

void NativeStep::read(int s, std::vector<int64_t> dims) {
  inputs.push_back(s);
  expected_.push_back(std::move(dims));
}

void NativeStep::write(int s, int share) { outputs.push_back({s, OutputMemory::kPlanned, share}); }

const Tensor& NativeStep::in(const RunState& st, size_t k) const {
  const RtValue& v = st.slots[inputs[k]];
  KILN_CHECK(v.is_tensor(), ErrorKind::kRuntime, "{}: input {} is not a tensor", kernel, k);
  if (v.tensor.dims() != expected_[k])
    fail(ErrorKind::kRuntime, "{}: input of shape {} where the plan expects {}", kernel,
         dims_to_string(v.tensor.dims()), dims_to_string(expected_[k]));
  return v.tensor;
}

int64_t dims_product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

int in_place_share(Lowering& lw, int s, size_t out_bytes) {
  return lw.dies_here(s) && lw.slot(s).bytes() == out_bytes ? s : -1;
}

}  // namespace kiln::engine
