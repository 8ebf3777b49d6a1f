#include "onnx/paged_input.h"

#include <algorithm>

namespace kiln {

bool PagedInput::Next(const void** data, int* size) {
  // Everything before pos_ has been read: BackUp only returns bytes of the last chunk.
  if (pos_ - released_ >= kChunk) {
    file_.release(released_, pos_ - released_);
    released_ = pos_;
  }
  if (pos_ >= file_.size()) return false;
  const int64_t n = std::min(kChunk, file_.size() - pos_);
  *data = file_.data() + pos_;
  *size = static_cast<int>(n);
  pos_ += n;
  return true;
}

bool PagedInput::Skip(int count) {
  if (pos_ + count > file_.size()) {
    pos_ = file_.size();
    return false;
  }
  pos_ += count;
  return true;
}

}  // namespace kiln
