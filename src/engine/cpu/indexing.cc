#include "engine/cpu/indexing.h"

#include <cstring>

namespace kiln::cpu {

namespace {

template <class T, class IsNonZero>
Tensor non_zero_of(const Tensor& x, IsNonZero nonzero) {
  const T* p = x.data<T>();
  const int64_t n = x.numel();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += nonzero(p[i]) ? 1 : 0;
  const int rank = x.rank();
  Tensor out(DataType::kInt64, {rank, count});
  int64_t* o = out.data<int64_t>();
  std::vector<int64_t> coord(rank, 0);
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (nonzero(p[i])) {
      for (int a = 0; a < rank; ++a) o[a * count + k] = coord[a];
      ++k;
    }
    for (int a = rank - 1; a >= 0; --a) {  // the next row-major coordinate
      if (++coord[a] < x.dim(a)) break;
      coord[a] = 0;
    }
  }
  return out;
}

}  // namespace

std::optional<Tensor> non_zero(const Tensor& x) {
  if (x.rank() == 0) return std::nullopt;
  const auto byte = [](auto v) { return v != 0; };
  switch (x.dtype()) {
    case DataType::kBool:
    case DataType::kUInt8: return non_zero_of<uint8_t>(x, byte);
    case DataType::kInt8: return non_zero_of<int8_t>(x, byte);
    case DataType::kInt32: return non_zero_of<int32_t>(x, byte);
    case DataType::kInt64: return non_zero_of<int64_t>(x, byte);
    case DataType::kFloat: return non_zero_of<float>(x, [](float v) { return v != 0.0f; });
    default: return std::nullopt;
  }
}

std::optional<Tensor> gather_nd(const Tensor& data, const Tensor& indices) {
  if (indices.dtype() != DataType::kInt64 || indices.rank() < 1 ||
      data.dtype() == DataType::kString)  // (strings are objects, not bytes to copy)
    return std::nullopt;
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k < 1 || k > data.rank()) return std::nullopt;
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  int64_t slice = 1;  // elements per gathered slice
  for (int a = static_cast<int>(k); a < data.rank(); ++a) {
    dims.push_back(data.dim(a));
    slice *= data.dim(a);
  }
  const int64_t tuples = indices.numel() / k;
  const int64_t* idx = indices.data<int64_t>();
  std::vector<int64_t> offsets(tuples);  // in slices
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t d = data.dim(static_cast<int>(j));
      int64_t i = idx[t * k + j];
      if (i < 0) i += d;
      if (i < 0 || i >= d) return std::nullopt;
      off = off * d + i;
    }
    offsets[t] = off;
  }
  Tensor out(data.dtype(), dims);
  const size_t bytes = static_cast<size_t>(slice) * dtype_size(data.dtype());
  if (bytes == 0 || tuples == 0) return out;
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t t = 0; t < tuples; ++t) std::memcpy(dst + t * bytes, src + offsets[t] * bytes, bytes);
  return out;
}

}  // namespace kiln::cpu
