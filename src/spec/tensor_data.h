// ONNX TensorProto's data rules (dims, data type, which field holds the values, raw bytes, sub-byte
// packing, external data) over the message's fields as plain views, with every check an untrusted
// file needs. Both readers of TensorProto use it: src/onnx's (protobuf's classes, for models) and
// spec/tensor_file.h's (the wire format, for test data files, with no protobuf).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/tensor.h"
#include "support/mapped_file.h"

namespace kiln {

// Where external data files are looked up, and the files already mapped (shared by all tensors).
struct ExternalData {
  std::filesystem::path model_dir;
  std::map<std::filesystem::path, std::shared_ptr<MappedFile>> files;
};

// A TensorProto's fields; the views must outlive tensor_from_fields.
struct TensorFields {
  int32_t data_type = 0;
  std::span<const int64_t> dims;
  bool segmented = false;      // `segment` set
  bool external = false;       // data_location is EXTERNAL
  std::string* raw = nullptr;  // raw_data when set; its bytes may be taken over (left empty)
  std::span<const float> float_data;
  std::span<const int32_t> int32_data;
  std::span<const int64_t> int64_data;
  std::span<const double> double_data;
  std::span<const uint64_t> uint64_data;
  std::vector<std::string_view> string_data;
  std::vector<std::pair<std::string_view, std::string_view>> external_data;  // key, value
};

// The tensor the fields describe. `what` names it in errors ("initializer 'w'"). External data is
// viewed in place from the mapped file when aligned (null `external`: not allowed). Fails with
// kBadModel on anything inconsistent, kUnsupported on segments.
Tensor tensor_from_fields(TensorFields& f, ExternalData* external, const std::string& what);

// The bytes of raw_data for t: little-endian as in memory, sub-byte types packed low bits first.
std::string raw_data_of(const Tensor& t);

}  // namespace kiln
