#include "serve/inference.h"

#include <set>

#include "support/error.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;

// The protocol's datatype names for the tensor types JSON carries as numbers.
const std::map<std::string, DataType>& datatypes() {
  static const std::map<std::string, DataType> m = {
      {"BOOL", DataType::kBool},     {"UINT8", DataType::kUInt8},   {"UINT16", DataType::kUInt16},
      {"UINT32", DataType::kUInt32}, {"UINT64", DataType::kUInt64}, {"INT8", DataType::kInt8},
      {"INT16", DataType::kInt16},   {"INT32", DataType::kInt32},   {"INT64", DataType::kInt64},
      {"FP32", DataType::kFloat},    {"FP64", DataType::kDouble}};
  return m;
}

std::string datatype_name(DataType t) {
  for (const auto& [name, dt] : datatypes())
    if (dt == t) return name;
  fail(ErrorKind::kUnsupported, "element type {} has no Open Inference Protocol datatype kiln serves", dtype_name(t));
}

bool is_integral(DataType t) { return is_integer(t) || t == DataType::kBool; }

Tensor tensor_of(const json& in, const Value& v) {
  const std::string where = "input '" + v.name + "'";
  if (!in.contains("datatype") || !in["datatype"].is_string()) fail(ErrorKind::kBadInput, "{}: no datatype", where);
  const auto dt = datatypes().find(in["datatype"].get<std::string>());
  if (dt == datatypes().end())
    fail(ErrorKind::kBadInput, "{}: datatype '{}' is not one kiln serves (BOOL, INT8..64, UINT8..64, FP32, FP64)",
         where, in["datatype"].get<std::string>());
  if (!v.type.is_tensor() || dt->second != v.type.elem)
    fail(ErrorKind::kBadInput, "{}: datatype {}, the model takes {}", where, dt->first, v.type.to_string());
  if (!in.contains("shape") || !in["shape"].is_array()) fail(ErrorKind::kBadInput, "{}: no shape", where);
  std::vector<int64_t> dims;
  for (const json& d : in["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) fail(ErrorKind::kBadInput, "{}: shape {} is not of sizes", where, in["shape"].dump());
    dims.push_back(d.get<int64_t>());
  }
  Tensor t(dt->second, dims);
  const json& data = in.contains("data") ? in["data"] : json();
  if (!data.is_array() || static_cast<int64_t>(data.size()) != t.numel())
    fail(ErrorKind::kBadInput, "{}: data has {} values, shape {} holds {} (a flat array)", where,
         data.is_array() ? data.size() : 0, dims_to_string(dims), t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const json& x = data[static_cast<size_t>(i)];
    if (!(x.is_number() || x.is_boolean())) fail(ErrorKind::kBadInput, "{}: data[{}] is not a number", where, i);
    if (t.dtype() == DataType::kInt64) t.data<int64_t>()[i] = x.is_boolean() ? x.get<bool>() : x.get<int64_t>();
    else if (t.dtype() == DataType::kUInt64) t.data<uint64_t>()[i] = x.get<uint64_t>();
    else if (t.dtype() == DataType::kBool) t.data<uint8_t>()[i] = x.is_boolean() ? x.get<bool>() : x.get<double>() != 0;
    else t.set_f64(i, x.get<double>());
  }
  return t;
}

json data_of(const Tensor& t) {
  json out = json::array();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DataType::kBool) out.push_back(t.data<uint8_t>()[i] != 0);
    else if (t.dtype() == DataType::kUInt64) out.push_back(t.data<uint64_t>()[i]);
    else if (is_integral(t.dtype())) out.push_back(t.get_i64(i));
    else out.push_back(t.get_f64(i));
  }
  return out;
}

}  // namespace

engine::CompiledModel& InferenceSessions::get(const std::string& name, int64_t version,
                                              const std::function<Model()>& load) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = sessions_[{name, version}];
  if (!slot) slot = std::make_unique<engine::CompiledModel>(load(), engine::EngineOptions{.optimize_level = 2});
  return *slot;
}

json infer(engine::CompiledModel& model, const json& request) {
  if (!request.is_object() || !request.contains("inputs") || !request["inputs"].is_array())
    fail(ErrorKind::kBadInput, "the request has no \"inputs\" array");
  std::map<std::string, const json*> given;
  for (const json& in : request["inputs"]) {
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string())
      fail(ErrorKind::kBadInput, "an input without a name");
    given[in["name"].get<std::string>()] = &in;
  }
  std::vector<RtValue> feeds;
  for (const Value* v : model.inputs()) {
    auto it = given.find(v->name);
    if (it == given.end()) fail(ErrorKind::kBadInput, "input '{}' was not given", v->name);
    feeds.push_back(RtValue::of(tensor_of(*it->second, *v)));
    given.erase(it);
  }
  if (!given.empty()) fail(ErrorKind::kBadInput, "'{}' is not an input of the model", given.begin()->first);
  std::set<std::string> wanted;
  if (request.contains("outputs") && request["outputs"].is_array())
    for (const json& o : request["outputs"])
      if (o.is_object() && o.contains("name") && o["name"].is_string()) wanted.insert(o["name"].get<std::string>());
  const std::vector<RtValue> results = model.run(feeds);
  json outputs = json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = model.outputs()[i]->name;
    if (!wanted.empty() && !wanted.contains(name)) continue;
    if (!results[i].is_tensor()) fail(ErrorKind::kUnsupported, "output '{}' is a {}: kiln serves tensors", name, results[i].describe());
    const Tensor& t = results[i].tensor;
    outputs.push_back({{"name", name}, {"datatype", datatype_name(t.dtype())}, {"shape", t.dims()}, {"data", data_of(t)}});
  }
  return {{"outputs", outputs}};
}

}  // namespace kiln::serve
