// One buffer for all of a model's plans (their runs are serial, under the CompiledModel's lock).
#pragma once

#include <cstddef>
#include <memory>

namespace kiln::engine {

// The memory a model's plans run in, one plan at a time: one buffer, grown to the largest plan's
// needs (zeroed when made) and kept while the model lives. A plan made for new dims allocates
// nothing of its own, and a stream of varying dims holds one buffer, not one per plan kept.
class RunMemory {
 public:
  // A buffer of at least `bytes`: the current one, or a larger one in its place.
  const std::shared_ptr<void>& at_least(size_t bytes);
  size_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<void> buffer_;
  size_t bytes_ = 0;
};

}  // namespace kiln::engine
