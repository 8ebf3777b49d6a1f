#include "serve/inference.h"

#include <cstring>
#include <limits>
#include <type_traits>
#include <map>

#include "support/checked_math.h"
#include "support/error.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;

// The protocol's datatype names for the tensor types kiln serves.
const std::map<std::string, DataType>& datatypes() {
  static const std::map<std::string, DataType> m = {
      {"BOOL", DataType::kBool},     {"UINT8", DataType::kUInt8},   {"UINT16", DataType::kUInt16},
      {"UINT32", DataType::kUInt32}, {"UINT64", DataType::kUInt64}, {"INT8", DataType::kInt8},
      {"INT16", DataType::kInt16},   {"INT32", DataType::kInt32},   {"INT64", DataType::kInt64},
      {"FP16", DataType::kFloat16},  {"FP32", DataType::kFloat},    {"FP64", DataType::kDouble},
      {"BYTES", DataType::kString}};
  return m;
}

bool is_integral(DataType t) { return is_integer(t) || t == DataType::kBool; }

// A "parameters" object's field, or null.
const json& parameter(const json& obj, const char* name) {
  static const json none;
  if (!obj.is_object() || !obj.contains("parameters") || !obj["parameters"].is_object()) return none;
  const json& p = obj["parameters"];
  return p.contains(name) ? p[name] : none;
}

// The dims the request gives, checked against the model's input: the rank and every dim the
// model fixes (a symbolic dim takes any size).
std::vector<int64_t> dims_of(const json& in, const Value& v, const std::string& where) {
  if (!in.contains("shape") || !in["shape"].is_array()) fail(ErrorKind::kBadInput, "{}: no shape", where);
  std::vector<int64_t> dims;
  for (const json& d : in["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      fail(ErrorKind::kBadInput, "{}: shape {} is not of sizes", where, in["shape"].dump());
    dims.push_back(d.get<int64_t>());
  }
  if (v.type.shape) {
    const Shape& s = *v.type.shape;
    if (s.size() != dims.size())
      fail(ErrorKind::kBadInput, "{}: shape {} has rank {}, the model takes {}", where, dims_to_string(dims),
           dims.size(), v.type.to_string());
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i].is_known() && s[i].value() != dims[i])
        fail(ErrorKind::kBadInput, "{}: shape {}, the model takes {}", where, dims_to_string(dims), v.type.to_string());
  }
  return dims;
}

// Stores x (an integer JSON number, or a boolean) as a T; fails when it is out of T's range.
template <typename T>
void store_integer(T* at, const json& x, const std::string& where, int64_t i) {
  if (x.is_boolean()) {
    *at = static_cast<T>(x.get<bool>());
    return;
  }
  if (!x.is_number_integer()) fail(ErrorKind::kBadInput, "{}: data[{}] is not an integer", where, i);
  if (x.is_number_unsigned()) {
    const uint64_t u = x.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      fail(ErrorKind::kBadInput, "{}: data[{}] = {} is out of the datatype's range", where, i, u);
    *at = static_cast<T>(u);
    return;
  }
  const int64_t s = x.get<int64_t>();
  if ((std::is_unsigned_v<T> && s < 0) ||
      (std::is_signed_v<T> && (s < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
                               s > static_cast<int64_t>(std::numeric_limits<T>::max()))))
    fail(ErrorKind::kBadInput, "{}: data[{}] = {} is out of the datatype's range", where, i, s);
  *at = static_cast<T>(s);
}

// Fills t from a flat JSON array (its length checked already): integers for the integer
// datatypes (in range), numbers or booleans for BOOL (non-zero is true), numbers for FP16, FP32
// and FP64, strings for BYTES.
void fill_from_json(Tensor& t, const json& data, const std::string& where) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const json& x = data[static_cast<size_t>(i)];
    if (t.dtype() == DataType::kString) {
      if (!x.is_string()) fail(ErrorKind::kBadInput, "{}: data[{}] is not a string (BYTES)", where, i);
      t.strings()[i] = x.get<std::string>();
      continue;
    }
    if (!(x.is_number() || x.is_boolean())) fail(ErrorKind::kBadInput, "{}: data[{}] is not a number", where, i);
    switch (t.dtype()) {
      case DataType::kBool: t.data<uint8_t>()[i] = x.is_boolean() ? x.get<bool>() : x.get<double>() != 0; break;
      case DataType::kInt8: store_integer(t.data<int8_t>() + i, x, where, i); break;
      case DataType::kInt16: store_integer(t.data<int16_t>() + i, x, where, i); break;
      case DataType::kInt32: store_integer(t.data<int32_t>() + i, x, where, i); break;
      case DataType::kInt64: store_integer(t.data<int64_t>() + i, x, where, i); break;
      case DataType::kUInt8: store_integer(t.data<uint8_t>() + i, x, where, i); break;
      case DataType::kUInt16: store_integer(t.data<uint16_t>() + i, x, where, i); break;
      case DataType::kUInt32: store_integer(t.data<uint32_t>() + i, x, where, i); break;
      case DataType::kUInt64: store_integer(t.data<uint64_t>() + i, x, where, i); break;
      default:
        if (x.is_boolean()) fail(ErrorKind::kBadInput, "{}: data[{}] is a boolean, the datatype is a float", where, i);
        t.set_f64(i, x.get<double>());
    }
  }
}

// BYTES elements in the binary data extension: each a 4-byte little-endian length, then its bytes.
void read_bytes_elements(Tensor& t, std::string_view data, const std::string& where) {
  size_t at = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (data.size() - at < 4)
      fail(ErrorKind::kBadInput, "{}: BYTES element {} has no 4-byte length before the end of its binary data", where, i);
    const auto* p = reinterpret_cast<const unsigned char*>(data.data() + at);
    const size_t len = size_t(p[0]) | size_t(p[1]) << 8 | size_t(p[2]) << 16 | size_t(p[3]) << 24;
    at += 4;
    if (len > data.size() - at)
      fail(ErrorKind::kBadInput, "{}: BYTES element {} is {} bytes long, past the end of its binary data ({} left)",
           where, i, len, data.size() - at);
    t.strings()[i].assign(data.data() + at, len);
    at += len;
  }
  if (at != data.size())
    fail(ErrorKind::kBadInput, "{}: binary_data_size {} is not its {} BYTES elements' {} bytes", where, data.size(),
         t.numel(), at);
}

void append_bytes_elements(const Tensor& t, std::string* out) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const std::string& e = t.strings()[i];
    if (e.size() > 0xffffffffu)
      fail(ErrorKind::kUnsupported, "a BYTES element of {} bytes does not fit the protocol's 4-byte length", e.size());
    const auto len = static_cast<uint32_t>(e.size());
    const char b[4] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8 & 0xff),
                       static_cast<char>(len >> 16 & 0xff), static_cast<char>(len >> 24 & 0xff)};
    out->append(b, 4);
    out->append(e);
  }
}

// The input's tensor. Its size is checked against the data given (the JSON array's length, or
// binary_data_size and the bytes left) before anything is allocated, so that a shape claiming
// more than the request carries is refused without allocating it.
Tensor tensor_of(const json& in, const Value& v, std::string_view binary, size_t& binary_used) {
  const std::string where = "input '" + v.name + "'";
  if (!in.contains("datatype") || !in["datatype"].is_string()) fail(ErrorKind::kBadInput, "{}: no datatype", where);
  const auto dt = datatypes().find(in["datatype"].get<std::string>());
  if (dt == datatypes().end())
    fail(ErrorKind::kBadInput, "{}: datatype '{}' is not one kiln serves (BOOL, INT8..64, UINT8..64, FP16, FP32, FP64, BYTES)",
         where, in["datatype"].get<std::string>());
  if (!v.type.is_tensor() || dt->second != v.type.elem)
    fail(ErrorKind::kBadInput, "{}: datatype {}, the model takes {}", where, dt->first, v.type.to_string());
  const std::vector<int64_t> dims = dims_of(in, v, where);
  const auto numel = checked_product(dims);
  const auto bytes = numel ? checked_mul(*numel, static_cast<int64_t>(dtype_size(dt->second))) : std::nullopt;
  if (!bytes) fail(ErrorKind::kBadInput, "{}: shape {} is too large", where, dims_to_string(dims));
  const json& size = parameter(in, "binary_data_size");
  const bool strings = dt->second == DataType::kString;
  if (size.is_null()) {
    const json& data = in.contains("data") ? in["data"] : json();
    if (!data.is_array() || static_cast<int64_t>(data.size()) != *numel)
      fail(ErrorKind::kBadInput, "{}: data has {} values, shape {} holds {} (a flat array)", where,
           data.is_array() ? data.size() : 0, dims_to_string(dims), *numel);
    Tensor t(dt->second, dims);
    fill_from_json(t, data, where);
    return t;
  }
  if (in.contains("data")) fail(ErrorKind::kBadInput, "{}: both \"data\" and binary_data_size", where);
  if (!size.is_number_unsigned()) fail(ErrorKind::kBadInput, "{}: binary_data_size is not a size", where);
  const uint64_t n = size.get<uint64_t>();
  // BYTES: each element is its length (4 bytes) and its bytes, so n only bounds the count.
  if (strings && n / 4 < static_cast<uint64_t>(*numel))
    fail(ErrorKind::kBadInput, "{}: binary_data_size {} cannot hold {} BYTES elements (4 bytes of length each at least)",
         where, n, *numel);
  if (!strings && n != static_cast<uint64_t>(*bytes))
    fail(ErrorKind::kBadInput, "{}: binary_data_size {}, shape {} of {} is {} bytes", where, n, dims_to_string(dims),
         dt->first, *bytes);
  if (n > binary.size() - binary_used)
    fail(ErrorKind::kBadInput, "{}: binary_data_size {} is past the end of the body ({} bytes of binary data left)",
         where, n, binary.size() - binary_used);
  Tensor t(dt->second, dims);
  if (t.dtype() == DataType::kString) read_bytes_elements(t, binary.substr(binary_used, n), where);
  else if (n) std::memcpy(t.raw(), binary.data() + binary_used, n);
  binary_used += n;
  if (t.dtype() == DataType::kBool)
    for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = t.data<uint8_t>()[i] != 0;
  return t;
}

json data_of(const Tensor& t) {
  json out = json::array();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DataType::kString) out.push_back(t.strings()[i]);
    else if (t.dtype() == DataType::kBool) out.push_back(t.data<uint8_t>()[i] != 0);
    else if (t.dtype() == DataType::kUInt64) out.push_back(t.data<uint64_t>()[i]);
    else if (is_integral(t.dtype())) out.push_back(t.get_i64(i));
    else out.push_back(t.get_f64(i));
  }
  return out;
}

}  // namespace

std::string datatype_name(DataType t) {
  for (const auto& [name, dt] : datatypes())
    if (dt == t) return name;
  fail(ErrorKind::kUnsupported, "element type {} has no Open Inference Protocol datatype kiln serves", dtype_name(t));
}

std::optional<DataType> datatype_of(const std::string& name) {
  const auto it = datatypes().find(name);
  if (it == datatypes().end()) return std::nullopt;
  return it->second;
}

InferRequest read_infer_request(const std::vector<const Value*>& inputs, const std::vector<const Value*>& outputs,
                                const json& request, std::string_view binary) {
  if (!request.is_object() || !request.contains("inputs") || !request["inputs"].is_array())
    fail(ErrorKind::kBadInput, "the request has no \"inputs\" array");
  std::map<std::string, const json*> given;
  for (const json& in : request["inputs"]) {
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string())
      fail(ErrorKind::kBadInput, "an input without a name");
    if (!given.emplace(in["name"].get<std::string>(), &in).second)
      fail(ErrorKind::kBadInput, "input '{}' is given twice", in["name"].get<std::string>());
  }
  // Binary data is consumed in the order the request lists its inputs.
  std::map<std::string, Tensor> read;
  size_t binary_used = 0;
  for (const json& in : request["inputs"]) {
    const std::string name = in["name"].get<std::string>();
    const Value* v = nullptr;
    for (const Value* i : inputs)
      if (i->name == name) v = i;
    if (!v) fail(ErrorKind::kBadInput, "'{}' is not an input of the model", name);
    read.emplace(name, tensor_of(in, *v, binary, binary_used));
  }
  if (binary_used != binary.size())
    fail(ErrorKind::kBadInput, "the body has {} bytes of binary data, the inputs' binary_data_size add up to {}",
         binary.size(), binary_used);
  InferRequest r;
  for (const Value* v : inputs) {
    auto it = read.find(v->name);
    if (it == read.end()) fail(ErrorKind::kBadInput, "input '{}' was not given", v->name);
    r.feeds.push_back(std::move(it->second));
  }
  const json& all_binary = parameter(request, "binary_data_output");
  if (!all_binary.is_null() && !all_binary.is_boolean())
    fail(ErrorKind::kBadInput, "the parameter binary_data_output is not true or false");
  r.all_binary = all_binary.is_boolean() && all_binary.get<bool>();
  if (request.contains("outputs")) {
    if (!request["outputs"].is_array()) fail(ErrorKind::kBadInput, "\"outputs\" is not an array");
    for (const json& o : request["outputs"]) {
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string())
        fail(ErrorKind::kBadInput, "an output without a name");
      const std::string name = o["name"].get<std::string>();
      bool known = false;
      for (const Value* v : outputs) known |= v->name == name;
      if (!known) fail(ErrorKind::kBadInput, "'{}' is not an output of the model", name);
      r.wanted.insert(name);
      const json& b = parameter(o, "binary_data");
      if (!b.is_null() && !b.is_boolean())
        fail(ErrorKind::kBadInput, "output '{}': the parameter binary_data is not true or false", name);
      if (b.is_boolean() ? b.get<bool>() : r.all_binary) r.binary_outputs.insert(name);
    }
  }
  return r;
}

json infer_response(const std::vector<const Value*>& outputs, const std::vector<RtValue>& results,
                    const InferRequest& request, std::string* binary) {
  json out = json::array();
  for (size_t i = 0; i < results.size() && i < outputs.size(); ++i) {
    const std::string& name = outputs[i]->name;
    if (!request.wanted.empty() && !request.wanted.contains(name)) continue;
    if (!results[i].is_tensor())
      fail(ErrorKind::kUnsupported, "output '{}' is a {}: kiln serves tensors", name, results[i].describe());
    const Tensor& t = results[i].tensor;
    json o = {{"name", name}, {"datatype", datatype_name(t.dtype())}, {"shape", t.dims()}};
    const bool as_binary = request.wanted.empty() ? request.all_binary : request.binary_outputs.contains(name);
    if (as_binary && binary) {
      const size_t before = binary->size();
      if (t.dtype() == DataType::kString) append_bytes_elements(t, binary);
      else binary->append(static_cast<const char*>(t.raw()), t.nbytes());
      o["parameters"] = {{"binary_data_size", binary->size() - before}};
    } else {
      o["data"] = data_of(t);
    }
    out.push_back(std::move(o));
  }
  return {{"outputs", out}};
}

}  // namespace kiln::serve
