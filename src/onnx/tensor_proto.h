// TensorProto <-> Tensor over protobuf's classes (models), with every check an untrusted file needs
// (spec/tensor_data.h's rules). Test data files (input_N.pb) are spec/tensor_file.h's, without
// protobuf.
#pragma once

#include <string>

#include "ir/tensor.h"
#include "spec/tensor_data.h"

namespace onnx {
class TensorProto;
class SparseTensorProto;
}  // namespace onnx

namespace kiln {

struct SparseTensor;

// Converts a TensorProto. `what` names the tensor in errors ("initializer 'w'"). May take the
// proto's raw bytes without copying (the proto is left without them). External data is viewed in
// place from the mapped file when aligned. Fails with kBadModel on anything inconsistent.
Tensor tensor_from_proto(onnx::TensorProto& proto, ExternalData* external, const std::string& what);
SparseTensor sparse_from_proto(onnx::SparseTensorProto& proto, ExternalData* external,
                               const std::string& what);

// Writes t into proto (raw_data for numbers, packed for sub-byte types; string_data for strings).
void tensor_to_proto(const Tensor& t, onnx::TensorProto& proto);
void sparse_to_proto(const SparseTensor& s, onnx::SparseTensorProto& proto);

}  // namespace kiln
