#include "onnx/tensor_proto.h"

#include "ir/graph.h"
#include "onnx/proto.h"
#include "support/checked_math.h"
#include "support/error.h"
#include "support/limits.h"

namespace kiln {

Tensor tensor_from_proto(onnx::TensorProto& p, ExternalData* external, const std::string& what) {
  TensorFields f{.data_type = p.data_type(),
                 .dims = {p.dims().data(), static_cast<size_t>(p.dims_size())},
                 .segmented = p.has_segment(),
                 .external = p.data_location() == onnx::TensorProto::EXTERNAL,
                 .raw = p.has_raw_data() ? p.mutable_raw_data() : nullptr,
                 .float_data = {p.float_data().data(), static_cast<size_t>(p.float_data_size())},
                 .int32_data = {p.int32_data().data(), static_cast<size_t>(p.int32_data_size())},
                 .int64_data = {p.int64_data().data(), static_cast<size_t>(p.int64_data_size())},
                 .double_data = {p.double_data().data(), static_cast<size_t>(p.double_data_size())},
                 .uint64_data = {p.uint64_data().data(), static_cast<size_t>(p.uint64_data_size())}};
  for (const std::string& s : p.string_data()) f.string_data.emplace_back(s);
  for (const auto& kv : p.external_data()) f.external_data.emplace_back(kv.key(), kv.value());
  return tensor_from_fields(f, external, what);
}

SparseTensor sparse_from_proto(onnx::SparseTensorProto& p, ExternalData* external,
                               const std::string& what) {
  SparseTensor s;
  s.values = tensor_from_proto(*p.mutable_values(), external, what + " values");
  s.indices = tensor_from_proto(*p.mutable_indices(), external, what + " indices");
  s.dims.assign(p.dims().begin(), p.dims().end());
  KILN_CHECK(s.dims.size() <= size_t(limits::kMaxRank), ErrorKind::kBadModel, "{}: rank too large",
             what);
  for (int64_t d : s.dims) KILN_CHECK(d >= 0, ErrorKind::kBadModel, "{}: negative dim", what);
  KILN_CHECK(checked_product(s.dims).has_value(), ErrorKind::kBadModel, "{}: dims overflow", what);
  KILN_CHECK(s.values.rank() == 1, ErrorKind::kBadModel, "{}: values must be 1-D", what);
  KILN_CHECK(s.indices.dtype() == DataType::kInt64, ErrorKind::kBadModel,
             "{}: indices must be int64", what);
  // Indices must be in range and (for linear indices) strictly increasing, as the checker asks.
  const Tensor dense = with_context(what + ": ", [&] { return s.to_dense(); });
  (void)dense;
  return s;
}

void tensor_to_proto(const Tensor& t, onnx::TensorProto& p) {
  p.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.dims()) p.add_dims(d);
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) p.add_string_data(t.strings()[i]);
  } else {
    p.set_raw_data(raw_data_of(t));
  }
}

void sparse_to_proto(const SparseTensor& s, onnx::SparseTensorProto& p) {
  tensor_to_proto(s.values, *p.mutable_values());
  tensor_to_proto(s.indices, *p.mutable_indices());
  for (int64_t d : s.dims) p.add_dims(d);
}

}  // namespace kiln
