#include "capi/feeds.h"

#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include "capi/status.h"
#include "ir/dtype.h"
#include "support/limits.h"

namespace kiln::capi {

namespace {

std::string where(size_t i, const kiln_tensor_info& info) { return fmt::format("input {} '{}'", i, info.name); }

// Bool is one byte 0 or 1; sub-byte types hold one element per byte in their range.
void check_values(size_t i, const kiln_tensor_info& info, DataType dt, const uint8_t* p, int64_t n) {
  int lo = 0, hi = 0;
  switch (dt) {
    case DataType::kBool: lo = 0, hi = 1; break;
    case DataType::kUInt4: lo = 0, hi = 15; break;
    case DataType::kInt4: lo = -8, hi = 7; break;
    case DataType::kUInt2: lo = 0, hi = 3; break;
    case DataType::kInt2: lo = -2, hi = 1; break;
    case DataType::kFloat4E2M1: lo = 0, hi = 15; break;
    default: return;
  }
  const bool is_signed_type = lo < 0;
  for (int64_t k = 0; k < n; ++k) {
    const int v = is_signed_type ? static_cast<int>(static_cast<int8_t>(p[k])) : static_cast<int>(p[k]);
    if (v < lo || v > hi)
      refuse(KILN_ERROR_BAD_INPUT, "{}: element {} is {}, {} holds {}..{} (one per byte)", where(i, info), k, v,
             dtype_name(dt), lo, hi);
  }
}

}  // namespace

std::string model_dims_text(const kiln_tensor_info& info) {
  if (info.rank < 0) return "[?]";
  std::string s = "[";
  for (size_t k = 0; k < info.dims.size(); ++k) {
    if (k) s += ",";
    s += info.dims[k] >= 0 ? std::to_string(info.dims[k]) : (info.dim_names[k].empty() ? "?" : info.dim_names[k]);
  }
  return s + "]";
}

Feeds make_feeds(const kiln_session& session, const kiln_tensor* inputs, size_t count, bool dims_only) {
  if (count != session.inputs.size())
    refuse(KILN_ERROR_BAD_INPUT, "{} inputs given, the model takes {}", count, session.inputs.size());
  if (count > 0) require(inputs, "inputs");
  Feeds feeds;
  std::map<std::string, std::pair<int64_t, size_t>> symbols;  // symbol -> (size, the input that gave it)
  for (size_t i = 0; i < count; ++i) {
    const kiln_tensor& t = inputs[i];
    const kiln_tensor_info& info = session.inputs[i];
    if (!info.is_tensor) refuse(KILN_ERROR_UNSUPPORTED, "{} is not a tensor: the C API feeds tensors only", where(i, info));
    if (!is_valid_dtype(t.dtype))
      refuse(KILN_ERROR_BAD_INPUT, "{}: element type {} is not a kiln_dtype", where(i, info), static_cast<int>(t.dtype));
    const auto dt = static_cast<DataType>(t.dtype);
    if (t.dtype != info.dtype)
      refuse(KILN_ERROR_BAD_INPUT, "{}: element type {}, the model takes {}", where(i, info), dtype_name(dt),
             dtype_name(static_cast<DataType>(info.dtype)));
    if (dt == DataType::kString)
      refuse(KILN_ERROR_UNSUPPORTED, "{}: string tensors are not fed through the C API", where(i, info));
    if (t.rank > static_cast<size_t>(limits::kMaxRank))
      refuse(KILN_ERROR_BAD_INPUT, "{}: rank {}, kiln's limit is {}", where(i, info), t.rank, limits::kMaxRank);
    if (t.rank > 0 && t.dims == nullptr)
      refuse(KILN_ERROR_INVALID_ARGUMENT, "{}: dims is NULL with rank {}", where(i, info), t.rank);
    std::vector<int64_t> dims(t.dims, t.dims + t.rank);
    if (info.rank >= 0 && static_cast<int64_t>(t.rank) != info.rank)
      refuse(KILN_ERROR_BAD_INPUT, "{}: rank {}, the model takes rank {} {}", where(i, info), t.rank, info.rank,
             model_dims_text(info));
    int64_t numel = 1;
    bool overflow = false;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] < 0) refuse(KILN_ERROR_BAD_INPUT, "{}: dim {} is {}", where(i, info), k, dims[k]);
      if (info.rank >= 0 && info.dims[k] >= 0 && dims[k] != info.dims[k])
        refuse(KILN_ERROR_BAD_INPUT, "{}: dims {}, the model takes {} (dim {})", where(i, info), dims_to_string(dims),
               model_dims_text(info), k);
      if (info.rank >= 0 && !info.dim_names[k].empty()) {
        auto [it, fresh] = symbols.try_emplace(info.dim_names[k], dims[k], i);
        if (!fresh && it->second.first != dims[k])
          refuse(KILN_ERROR_BAD_INPUT, "{}: dim {} ({}) is {}, input {} gave {} = {}", where(i, info), k,
                 info.dim_names[k], dims[k], it->second.second, info.dim_names[k], it->second.first);
      }
      if (dims[k] != 0 && numel > std::numeric_limits<int64_t>::max() / dims[k]) overflow = true;
      else numel *= dims[k];
    }
    const size_t esize = dtype_size(dt);
    if (overflow || numel > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(esize))
      refuse(KILN_ERROR_BAD_INPUT, "{}: dims {} overflow", where(i, info), dims_to_string(dims));
    const size_t bytes = static_cast<size_t>(numel) * esize;
    if (!dims_only) {
      if (t.byte_size != bytes)
        refuse(KILN_ERROR_BAD_INPUT, "{}: {} bytes given, {}{} takes {}", where(i, info), t.byte_size, dtype_name(dt),
               dims_to_string(dims), bytes);
      if (bytes > 0) require(t.data, fmt::format("{}: data", where(i, info)).c_str());
      check_values(i, info, dt, static_cast<const uint8_t*>(t.data), numel);
      // Read in place; bytes not aligned for the element type are copied (kernels load whole
      // elements).
      if (reinterpret_cast<uintptr_t>(t.data) % esize == 0) {
        feeds.values.push_back(RtValue::of(Tensor::view(dt, dims, nullptr, t.data)));
      } else {
        Tensor copy(dt, dims);
        std::memcpy(copy.raw(), t.data, bytes);
        feeds.values.push_back(RtValue::of(std::move(copy)));
      }
    }
    feeds.dims.push_back(std::move(dims));
  }
  return feeds;
}

}  // namespace kiln::capi
