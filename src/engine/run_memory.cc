#include "engine/run_memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "support/checked_math.h"
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

void RunMemory::start_run() {
  reusable_ = std::move(given_);
  given_.clear();
}

Tensor RunMemory::output_tensor(DataType dtype, std::vector<int64_t> dims) {
  const std::optional<int64_t> numel = checked_product(dims);
  const std::optional<int64_t> bytes =
      numel ? checked_mul(*numel, static_cast<int64_t>(dtype_size(dtype))) : std::nullopt;
  // (Strings are objects, not bytes; dims too large fail there, as for any tensor.)
  if (dtype == DataType::kString || !bytes) return Tensor::uninitialized(dtype, std::move(dims));
  // Free: held by this list alone (the caller's tensors, and their views, are gone).
  auto best = reusable_.end();
  for (auto it = reusable_.begin(); it != reusable_.end(); ++it)
    if (it->holders() == 1 && static_cast<int64_t>(it->nbytes()) >= *bytes &&
        (best == reusable_.end() || it->nbytes() < best->nbytes()))
      best = it;
  if (best != reusable_.end()) {
    given_.push_back(std::move(*best));
    reusable_.erase(best);
  } else {
    given_.push_back(Tensor::uninitialized(DataType::kUInt8, {*bytes}));
  }
  return given_.back().view_as(dtype, std::move(dims));
}

}  // namespace kiln::engine
