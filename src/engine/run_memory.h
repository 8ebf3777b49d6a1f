// The memory a model's runs take: one buffer for all of its plans' activations (their runs are
// serial, under the CompiledModel's lock), and the buffers of its graph outputs.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "ir/tensor.h"

namespace kiln::engine {

// The memory a model's plans run in, one plan at a time: one buffer, grown to the largest plan's
// needs (zeroed when made) and kept while the model lives. A plan made for new dims allocates
// nothing of its own, and a stream of varying dims holds one buffer, not one per plan kept.
//
// Graph outputs are tensors of their own (the caller keeps them), made in the buffers of the last
// run's outputs once the caller has let go of them: new memory may cost its page faults on every
// run (fresh pages 1.8-2.4 us a 4 KB page on the Xeon VM kiln was measured on), a kept buffer
// none (PP-OCR det's 1.6 MB map: its last step 1.9 -> 1.75 ms).
class RunMemory {
 public:
  // A buffer of at least `bytes`: the current one, or a larger one in its place.
  const std::shared_ptr<void>& at_least(size_t bytes);
  size_t bytes() const { return bytes_; }

  // Call as a run starts: the buffers the last run's outputs were made in become the ones
  // output_tensor may take again (those it did not take the run before are let go of).
  void start_run();
  // An uninitialized tensor for a graph output, for a writer that sets every element: in a
  // buffer of the last run's outputs that no one else holds any more and that is large enough
  // (the smallest such), else in a new one.
  Tensor output_tensor(DataType dtype, std::vector<int64_t> dims);

 private:
  std::shared_ptr<void> buffer_;
  size_t bytes_ = 0;
  // Output buffers (uint8 tensors; the outputs made in them are views, and hold them too).
  std::vector<Tensor> reusable_;  // the last run's
  std::vector<Tensor> given_;     // this run's
};

}  // namespace kiln::engine
