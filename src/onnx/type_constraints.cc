#include "onnx/type_constraints.h"

#include <onnx/defs/schema.h>

#include <map>
#include <string>

#include "ir/walk.h"
#include "onnx/normalize.h"
#include "support/error.h"

namespace kiln {

namespace {

using onnx::OpSchema;
using Formal = OpSchema::FormalParameter;

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

// The schema of the node's op in its opset, or null where libonnx cannot judge it: an opset newer
// than it knows (the op may have gained types since), an op it does not know, a deprecated op.
const OpSchema* schema_of(const Node& n) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto range = ranges.find(n.domain);
  if (range == ranges.end() || n.opset > range->second.second) return nullptr;
  const OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type, n.opset, n.domain);
  return s && !s->deprecated() ? s : nullptr;
}

// The formal parameter that takes position i (the last one repeats when it is variadic).
const Formal* formal_at(const std::vector<Formal>& formals, size_t i) {
  if (i < formals.size()) return &formals[i];
  if (!formals.empty() && formals.back().GetOption() == OpSchema::Variadic) return &formals.back();
  return nullptr;
}

std::string allowed_list(const OpSchema& s, const Formal& f) {
  for (const auto& c : s.typeConstraintParams()) {
    if (c.type_param_str != f.GetTypeStr()) continue;
    std::string out;
    for (const auto& t : c.allowed_type_strs) out += (out.empty() ? "" : ", ") + shown(t);
    return out;
  }
  return shown(f.GetTypeStr());  // the parameter names one type directly ("tensor(int64)")
}

class NodeTypes {
 public:
  NodeTypes(const Node& n, const OpSchema& s) : n_(n), s_(s) {}

  void check(const std::vector<const Value*>& values, const std::vector<Formal>& formals,
             std::string_view role) {
    for (size_t i = 0; i < values.size(); ++i) {
      const Value* v = values[i];
      if (!v) continue;
      const Formal* f = formal_at(formals, i);
      KILN_CHECK(f, ErrorKind::kBadModel, "{}{} {} '{}': {} in opset {} takes {} {}s",
                 n_.where(), role, i, v->name, n_.op_type, n_.opset, formals.size(), role);
      check_one(*v, *f, fmt::format("{} {} '{}'", role, i, v->name));
    }
  }

 private:
  void check_one(const Value& v, const Formal& f, const std::string& what) {
    const std::string type = onnx_type_string(v.type);
    if (type.empty()) return;  // not known: nothing to judge
    bool allowed = false;
    for (const std::string* t : f.GetTypes()) allowed = allowed || *t == type;
    KILN_CHECK(allowed, ErrorKind::kBadModel, "{}{} has type {}, allowed: {}", n_.where(), what,
               shown(type), allowed_list(s_, f));
    if (!f.GetIsHomogeneous()) return;  // a heterogeneous variadic (Loop's V): each its own type
    const auto [it, first] = bound_.try_emplace(f.GetTypeStr(), type, what);
    KILN_CHECK(first || it->second.first == type, ErrorKind::kBadModel,
               "{}{} has type {}, but {} is {} ({})", n_.where(), what, shown(type),
               f.GetTypeStr(), shown(it->second.first), it->second.second);
  }

  const Node& n_;
  const OpSchema& s_;
  std::map<std::string, std::pair<std::string, std::string>> bound_;  // param -> type, who bound it
};

void check_node(const Node& n, const Model& m) {
  if (m.find_function(n.domain, n.op_type)) return;  // a local function: untyped formals
  const OpSchema* s = schema_of(n);
  if (!s) return;
  NodeTypes types(n, *s);
  // The schema describes the file's form: older ops' attributes that import moved to inputs go
  // back to being attributes.
  types.check(denormalize(n).inputs, s->inputs(), "input");
  types.check({n.outputs.begin(), n.outputs.end()}, s->outputs(), "output");
}

}  // namespace

void check_type_constraints(const Model& m) {
  for_each_node(m, [&](const Node& n) { check_node(n, m); });
}

void load_onnx_schemas() { onnx::OpSchemaRegistry::Schema("Relu", 1); }

}  // namespace kiln
