// kiln_session_output_dims, kiln_session_run (into the caller's buffers), kiln_session_run_alloc
// (into kiln's) and kiln_tensor_release (include/kiln/kiln.h).
#include <cstdlib>
#include <cstring>
#include <optional>

#include "capi/feeds.h"
#include "capi/handles.h"
#include "capi/status.h"
#include "ir/dtype.h"

using kiln::capi::guarded;
using kiln::capi::refuse;
using kiln::capi::require;

namespace {

std::string where(size_t i, const kiln_tensor_info& info) { return fmt::format("output {} '{}'", i, info.name); }

// The block kiln_session_run_alloc hands out: this header, the dims, then the data (64-aligned).
struct OwnedBlock {
  static constexpr uint64_t kMagic = 0x6b696c6e74656e73;  // "kilntens"
  uint64_t magic;
  uint64_t rank;
};
constexpr size_t kDataAlign = 64;

size_t data_offset(size_t rank) {
  return (sizeof(OwnedBlock) + rank * sizeof(int64_t) + kDataAlign - 1) / kDataAlign * kDataAlign;
}

void release_block(void* owner) {
  auto* b = static_cast<OwnedBlock*>(owner);
  if (b->magic != OwnedBlock::kMagic) return;  // not one of kiln's: left alone
  b->magic = 0;
  std::free(b);
}

// The result of output i as a tensor of the output's type, or a refusal naming what it is.
const kiln::Tensor& result_tensor(const kiln::RtValue& v, size_t i, const kiln_tensor_info& info) {
  if (!v.is_tensor())
    refuse(KILN_ERROR_UNSUPPORTED, "{} is a {}: the C API returns tensors only", where(i, info), v.describe());
  if (v.tensor.dtype() == kiln::DataType::kString)
    refuse(KILN_ERROR_UNSUPPORTED, "{} is a string tensor: the C API returns numeric tensors only", where(i, info));
  return v.tensor;
}

// The run itself: an artifact compiled with --strict-shapes refuses dims outside its profiles.
std::vector<kiln::RtValue> run_session(kiln_session& s, const kiln::capi::Feeds& feeds) {
  if (s.artifact) s.artifact->check_shapes(feeds.values);
  return s.model->run(feeds.values);
}

void check_output_count(const kiln_session& s, size_t count) {
  if (count != s.outputs.size())
    refuse(KILN_ERROR_INVALID_ARGUMENT, "output_count {}, the model has {} outputs", count, s.outputs.size());
}

// Output i's buffer against dims the run makes (or will make): the dtype, the dims when given, the size.
void check_buffer(const kiln_tensor& out, size_t i, const kiln_tensor_info& info, kiln::DataType dt,
                  const std::vector<int64_t>& dims) {
  if (out.dtype != static_cast<kiln_dtype>(dt))
    refuse(KILN_ERROR_BAD_INPUT, "{}: the buffer's element type is {}, the output is {}", where(i, info),
           kiln::is_valid_dtype(out.dtype) ? kiln::dtype_name(static_cast<kiln::DataType>(out.dtype)) : "invalid",
           kiln::dtype_name(dt));
  if (out.dims != nullptr) {
    const std::vector<int64_t> given(out.dims, out.dims + out.rank);
    if (given != dims)
      refuse(KILN_ERROR_BAD_INPUT, "{}: the buffer's dims are {}, the output's {}", where(i, info),
             kiln::dims_to_string(given), kiln::dims_to_string(dims));
  }
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;  // dims of a planned or made tensor: checked when made
  const size_t bytes = static_cast<size_t>(numel) * kiln::dtype_size(dt);
  if (out.byte_size < bytes)
    refuse(KILN_ERROR_BUFFER_TOO_SMALL, "{}: {}{} takes {} bytes, the buffer has {}", where(i, info),
           kiln::dtype_name(dt), kiln::dims_to_string(dims), bytes, out.byte_size);
}

}  // namespace

extern "C" {

kiln_status kiln_session_output_dims(kiln_session* session, const kiln_tensor* inputs, size_t input_count,
                                     size_t output_index, int64_t* dims, size_t capacity, int64_t* rank) {
  return guarded(__func__, [&] {
    require(session, "session");
    require(rank, "rank");
    if (output_index >= session->outputs.size())
      refuse(KILN_ERROR_INVALID_ARGUMENT, "output {} of a model with {} outputs", output_index,
             session->outputs.size());
    const kiln::capi::Feeds feeds = kiln::capi::make_feeds(*session, inputs, input_count, true);
    const auto planned = session->model->output_dims(feeds.dims)[output_index];
    const kiln_tensor_info& info = session->outputs[output_index];
    // Dims only the data decides: the rank the model declares, every dim -1.
    const std::vector<int64_t> out = planned ? *planned
                                             : std::vector<int64_t>(info.rank > 0 ? info.rank : 0, -1);
    *rank = planned || info.rank >= 0 ? static_cast<int64_t>(out.size()) : -1;
    if (capacity < out.size())
      refuse(KILN_ERROR_BUFFER_TOO_SMALL, "{}: rank {}, the dims array holds {}", where(output_index, info),
             out.size(), capacity);
    if (!out.empty()) require(dims, "dims");
    for (size_t k = 0; k < out.size(); ++k) dims[k] = out[k];
  });
}

kiln_status kiln_session_run(kiln_session* session, const kiln_tensor* inputs, size_t input_count,
                             kiln_tensor* outputs, size_t output_count) {
  return guarded(__func__, [&] {
    require(session, "session");
    check_output_count(*session, output_count);
    if (output_count > 0) require(outputs, "outputs");
    const kiln::capi::Feeds feeds = kiln::capi::make_feeds(*session, inputs, input_count, false);
    // What the plan knows before the run is checked before it: no run for a buffer too small.
    const auto planned = session->model->output_dims(feeds.dims);
    for (size_t i = 0; i < output_count; ++i) {
      const kiln_tensor_info& info = session->outputs[i];
      if (outputs[i].data == nullptr) continue;
      if (!info.is_tensor)
        refuse(KILN_ERROR_UNSUPPORTED, "{} is not a tensor: the C API returns tensors only", where(i, info));
      if (planned[i]) check_buffer(outputs[i], i, info, static_cast<kiln::DataType>(info.dtype), *planned[i]);
    }
    const std::vector<kiln::RtValue> results = run_session(*session, feeds);
    for (size_t i = 0; i < output_count; ++i) {
      if (outputs[i].data == nullptr) continue;
      const kiln::Tensor& t = result_tensor(results[i], i, session->outputs[i]);
      check_buffer(outputs[i], i, session->outputs[i], t.dtype(), t.dims());
    }
    for (size_t i = 0; i < output_count; ++i) {
      if (outputs[i].data == nullptr) continue;
      const kiln::Tensor& t = results[i].tensor;
      if (t.nbytes() > 0) std::memmove(outputs[i].data, t.raw(), t.nbytes());
    }
  });
}

kiln_status kiln_session_run_alloc(kiln_session* session, const kiln_tensor* inputs, size_t input_count,
                                   kiln_tensor* outputs, size_t output_count) {
  return guarded(__func__, [&] {
    require(session, "session");
    check_output_count(*session, output_count);
    if (output_count > 0) require(outputs, "outputs");
    const kiln::capi::Feeds feeds = kiln::capi::make_feeds(*session, inputs, input_count, false);
    const std::vector<kiln::RtValue> results = run_session(*session, feeds);
    for (size_t i = 0; i < output_count; ++i) result_tensor(results[i], i, session->outputs[i]);
    // Each output is copied into a block of its own, which outlives the session: results may
    // share bytes with the inputs, the model's constants or each other.
    std::vector<kiln_tensor> made(output_count);
    std::vector<void*> blocks;
    for (size_t i = 0; i < output_count; ++i) {
      const kiln::Tensor& t = results[i].tensor;
      const size_t rank = t.dims().size();
      const size_t off = data_offset(rank);
      const size_t total = (off + t.nbytes() + kDataAlign - 1) / kDataAlign * kDataAlign;
      void* p = std::aligned_alloc(kDataAlign, total);
      if (p == nullptr) {
        for (void* b : blocks) release_block(b);
        refuse(KILN_ERROR_RUNTIME, "{}: out of memory for {} bytes", where(i, session->outputs[i]), total);
      }
      blocks.push_back(p);
      auto* block = static_cast<OwnedBlock*>(p);
      block->magic = OwnedBlock::kMagic;
      block->rank = rank;
      auto* dims = reinterpret_cast<int64_t*>(block + 1);
      for (size_t k = 0; k < rank; ++k) dims[k] = t.dims()[k];
      char* data = static_cast<char*>(p) + off;
      if (t.nbytes() > 0) std::memcpy(data, t.raw(), t.nbytes());
      made[i] = kiln_tensor{.dtype = static_cast<kiln_dtype>(t.dtype()), .rank = rank, .dims = dims,
                            .data = data, .byte_size = t.nbytes(), .owner = p};
    }
    for (size_t i = 0; i < output_count; ++i) outputs[i] = made[i];
  });
}

void kiln_tensor_release(kiln_tensor* tensor) {
  if (tensor == nullptr || tensor->owner == nullptr) return;
  release_block(tensor->owner);
  *tensor = kiln_tensor{};
}

}  // extern "C"
