#include "engine/run_memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ir/tensor.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

std::shared_ptr<void> zeroed_buffer(size_t bytes) {
  const size_t n = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  KILN_CHECK(static_cast<int64_t>(n) <= allocation_cap(), ErrorKind::kRuntime,
             "the engine's buffers need {} bytes, above the allocation cap of {}", n,
             allocation_cap());
  void* p = std::aligned_alloc(64, n);
  KILN_CHECK(p, ErrorKind::kRuntime, "out of memory allocating {} bytes", n);
  std::memset(p, 0, n);
  return std::shared_ptr<void>(p, std::free);
}

}  // namespace

const std::shared_ptr<void>& RunMemory::at_least(size_t bytes) {
  if (!buffer_ || bytes > bytes_) {
    buffer_.reset();  // the old bytes go before the new are taken (unless a plan still views them)
    bytes_ = 0;       // (what it holds, should the allocation below fail)
    buffer_ = zeroed_buffer(bytes);
    bytes_ = bytes;
  }
  return buffer_;
}

}  // namespace kiln::engine
