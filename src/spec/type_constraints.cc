#include "spec/type_constraints.h"

#include <algorithm>
#include <map>
#include <string>

#include "ir/walk.h"
#include "spec/normalize.h"
#include "spec/op_types.h"
#include "support/error.h"

namespace kiln {

namespace {

// ONNX's spelling of a type, as libonnx's DataTypeUtils writes it ("tensor(float)",
// "seq(tensor(int64))", "map(string,tensor(float))"), or "" where any part is not known.
std::string onnx_type_string(const TypeInfo& t) {
  using Kind = TypeInfo::Kind;
  switch (t.kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor:
      if (t.elem == DataType::kUndefined) return "";
      return fmt::format("{}({})", t.kind == Kind::kTensor ? "tensor" : "sparse_tensor",
                         dtype_name(t.elem));
    case Kind::kSequence:
    case Kind::kOptional:
    case Kind::kMap: {
      const std::string inner = t.inner ? onnx_type_string(*t.inner) : "";
      if (inner.empty()) return "";
      if (t.kind == Kind::kSequence) return "seq(" + inner + ")";
      if (t.kind == Kind::kOptional) return "optional(" + inner + ")";
      if (t.map_key == DataType::kUndefined) return "";
      return fmt::format("map({},{})", dtype_name(t.map_key), inner);
    }
    case Kind::kUnknown:
      break;
  }
  return "";
}

// How a type reads in a message: a plain tensor by its element type ("int32").
std::string shown(const std::string& onnx_type) {
  constexpr std::string_view prefix = "tensor(";
  if (onnx_type.starts_with(prefix) && onnx_type.ends_with(')') &&
      onnx_type.find('(', prefix.size()) == std::string::npos)
    return onnx_type.substr(prefix.size(), onnx_type.size() - prefix.size() - 1);
  return onnx_type;
}

// The formal parameter that takes position i (the last one repeats when it is variadic).
const FormalTypes* formal_at(const std::vector<FormalTypes>& formals, size_t i) {
  if (i < formals.size()) return &formals[i];
  if (!formals.empty() && formals.back().variadic) return &formals.back();
  return nullptr;
}

std::string allowed_list(const FormalTypes& f) {
  std::string out;
  for (const auto& t : f.types) out += (out.empty() ? "" : ", ") + shown(t);
  return out;
}

class NodeTypes {
 public:
  explicit NodeTypes(const Node& n) : n_(n) {}

  void check(const std::vector<const Value*>& values, const std::vector<FormalTypes>& formals,
             std::string_view role) {
    for (size_t i = 0; i < values.size(); ++i) {
      const Value* v = values[i];
      if (!v) continue;
      const FormalTypes* f = formal_at(formals, i);
      KILN_CHECK(f, ErrorKind::kBadModel, "{}{} {} '{}': {} in opset {} takes {} {}s",
                 n_.where(), role, i, v->name, n_.op_type, n_.opset, formals.size(), role);
      check_one(*v, *f, fmt::format("{} {} '{}'", role, i, v->name));
    }
  }

 private:
  void check_one(const Value& v, const FormalTypes& f, const std::string& what) {
    const std::string type = onnx_type_string(v.type);
    if (type.empty()) return;  // not known: nothing to judge
    KILN_CHECK(std::ranges::find(f.types, type) != f.types.end(), ErrorKind::kBadModel,
               "{}{} has type {}, allowed: {}", n_.where(), what, shown(type), allowed_list(f));
    if (!f.homogeneous) return;  // a heterogeneous variadic (Loop's V): each its own type
    const auto [it, first] = bound_.try_emplace(f.type_str, type, what);
    KILN_CHECK(first || it->second.first == type, ErrorKind::kBadModel,
               "{}{} has type {}, but {} is {} ({})", n_.where(), what, shown(type), f.type_str,
               shown(it->second.first), it->second.second);
  }

  const Node& n_;
  std::map<std::string, std::pair<std::string, std::string>> bound_;  // param -> type, who bound it
};

// False where the node's op version has no signature kiln knows.
bool check_node(const Node& n, const Model& m) {
  if (m.find_function(n.domain, n.op_type)) return true;  // a local function: untyped formals
  const OpTypes* op = find_op_types(n.domain, n.op_type, n.opset);
  if (!op) return false;
  NodeTypes types(n);
  // The signature describes the file's form: older ops' attributes that import moved to inputs go
  // back to being attributes.
  types.check(denormalize(n).inputs, op->inputs, "input");
  types.check({n.outputs.begin(), n.outputs.end()}, op->outputs, "output");
  return true;
}

}  // namespace

std::vector<std::string> check_type_constraints(const Model& m) {
  std::vector<std::string> unjudged;
  for_each_node(m, [&](const Node& n) {
    if (!check_node(n, m))
      unjudged.push_back(fmt::format("{}no signature known in opset {}", n.where(), n.opset));
  });
  return unjudged;
}

void load_onnx_schemas() { load_op_types(); }

}  // namespace kiln
