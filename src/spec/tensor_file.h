// ONNX test data files (input_N.pb / output_N.pb: a serialized TensorProto, SequenceProto or
// OptionalProto) as run-time values, read and written in protobuf's wire format by kiln itself
// (onnx.proto's field numbers), so that the runtime alone (kiln-run) reads and writes them
// without protobuf. The tensors' rules are spec/tensor_data.h's, as for models.
#pragma once

#include <filesystem>
#include <string>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "ir/tensor.h"

namespace kiln {

// The value a file holds; `kind` (the model's type of the value) says which message it is.
// `name`, when given, receives the name stored in the file. Fails (kBadInput) on a file that is
// not such a message, (kBadModel) on a tensor its data does not fit, (kUnsupported) on sequences
// of non-tensors.
RtValue read_value_file(const std::filesystem::path& path, TypeInfo::Kind kind,
                        std::string* name = nullptr);
void write_tensor_file(const std::filesystem::path& path, const Tensor& t, const std::string& name);
void write_value_file(const std::filesystem::path& path, const RtValue& v, const std::string& name);

// The same over a message's bytes; `what` names it in errors.
RtValue parse_value(std::string bytes, TypeInfo::Kind kind, const std::string& what,
                    std::string* name = nullptr);
std::string serialize_value(const RtValue& v, const std::string& name);

}  // namespace kiln
