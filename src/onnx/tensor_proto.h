// TensorProto <-> Tensor, with every check an untrusted file needs (dims, data size, locations).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "ir/rt_value.h"
#include "ir/tensor.h"
#include "support/mapped_file.h"

namespace onnx {
class TensorProto;
class SparseTensorProto;
}  // namespace onnx

namespace kiln {

struct SparseTensor;

// Where external data files are looked up, and the files already mapped (shared by all tensors).
struct ExternalData {
  std::filesystem::path model_dir;
  std::map<std::filesystem::path, std::shared_ptr<MappedFile>> files;
};

// Converts a TensorProto. `what` names the tensor in errors ("initializer 'w'"). May take the
// proto's raw bytes without copying (the proto is left without them). External data is viewed in
// place from the mapped file when aligned. Fails with kBadModel on anything inconsistent.
Tensor tensor_from_proto(onnx::TensorProto& proto, ExternalData* external, const std::string& what);
SparseTensor sparse_from_proto(onnx::SparseTensorProto& proto, ExternalData* external,
                               const std::string& what);

// Writes t into proto (raw_data for numbers, packed for sub-byte types; string_data for strings).
void tensor_to_proto(const Tensor& t, onnx::TensorProto& proto);
void sparse_to_proto(const SparseTensor& s, onnx::SparseTensorProto& proto);

// A serialized TensorProto / SequenceProto / OptionalProto file (ONNX test data) as a run-time
// value; `kind` (the model's type of the value) says which message the file holds. `name`, when
// given, receives the name stored in the file.
RtValue read_value_file(const std::filesystem::path& path, TypeInfo::Kind kind,
                        std::string* name = nullptr);
void write_tensor_file(const std::filesystem::path& path, const Tensor& t, const std::string& name);
void write_value_file(const std::filesystem::path& path, const RtValue& v, const std::string& name);

}  // namespace kiln
