#include "ops/attrs.h"

#include "ops/op.h"
#include "support/error.h"

namespace kiln {

namespace {
const Attribute* get(const Node& n, std::string_view name, AttrKind kind) {
  const Attribute* a = n.attr(name);
  if (!a) return nullptr;
  KILN_CHECK(a->kind == kind, ErrorKind::kBadModel, "{}attribute '{}' is {}, expected {}",
             n.where(), name, attr_kind_name(a->kind), attr_kind_name(kind));
  return a;
}

// The default the node's schema declares for `name`, of `kind`.
const Attribute& schema_default(const Node& n, std::string_view name, AttrKind kind) {
  const OpSchema* s = OpRegistry::global().find(n.domain, n.op_type);
  const AttrSpec* spec = s ? s->find_attr(name) : nullptr;
  KILN_ASSERT(spec && spec->kind == kind && spec->default_value,
              fmt::format("{}attribute '{}' read as {} with the schema's default, which has none",
                          n.where(), name, attr_kind_name(kind)));
  return *spec->default_value;
}
}  // namespace

int64_t attr_int(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kInt);
  return a ? a->i : schema_default(n, name, AttrKind::kInt).i;
}
float attr_float(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kFloat);
  return a ? a->f : schema_default(n, name, AttrKind::kFloat).f;
}
std::string attr_string(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kString);
  return a ? a->s : schema_default(n, name, AttrKind::kString).s;
}

int64_t attr_int(const Node& n, std::string_view name, int64_t dflt) {
  const Attribute* a = get(n, name, AttrKind::kInt);
  return a ? a->i : dflt;
}
float attr_float(const Node& n, std::string_view name, float dflt) {
  const Attribute* a = get(n, name, AttrKind::kFloat);
  return a ? a->f : dflt;
}
std::string attr_string(const Node& n, std::string_view name, std::string dflt) {
  const Attribute* a = get(n, name, AttrKind::kString);
  return a ? a->s : dflt;
}
std::vector<int64_t> attr_ints(const Node& n, std::string_view name, std::vector<int64_t> dflt) {
  const Attribute* a = get(n, name, AttrKind::kInts);
  return a ? a->ints : dflt;
}
std::vector<float> attr_floats(const Node& n, std::string_view name, std::vector<float> dflt) {
  const Attribute* a = get(n, name, AttrKind::kFloats);
  return a ? a->floats : dflt;
}
std::vector<std::string> attr_strings(const Node& n, std::string_view name,
                                      std::vector<std::string> dflt) {
  const Attribute* a = get(n, name, AttrKind::kStrings);
  return a ? a->strings : dflt;
}
std::optional<int64_t> attr_int_opt(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kInt);
  return a ? std::optional(a->i) : std::nullopt;
}
std::optional<float> attr_float_opt(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kFloat);
  return a ? std::optional(a->f) : std::nullopt;
}
std::optional<std::vector<int64_t>> attr_ints_opt(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kInts);
  return a ? std::optional(a->ints) : std::nullopt;
}
int64_t attr_int_req(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kInt);
  KILN_CHECK(a, ErrorKind::kBadModel, "{}required attribute '{}' is missing", n.where(), name);
  return a->i;
}
const Tensor& attr_tensor_req(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kTensor);
  KILN_CHECK(a, ErrorKind::kBadModel, "{}required attribute '{}' is missing", n.where(), name);
  return a->t;
}
const Tensor* attr_tensor_opt(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kTensor);
  return a ? &a->t : nullptr;
}
const Graph& attr_graph_req(const Node& n, std::string_view name) {
  const Attribute* a = get(n, name, AttrKind::kGraph);
  KILN_CHECK(a && a->g, ErrorKind::kBadModel, "{}required attribute '{}' is missing", n.where(),
             name);
  return *a->g;
}

int normalize_axis(const Node& n, int64_t axis, int rank) {
  KILN_CHECK(axis >= -rank && axis < std::max(rank, 1), ErrorKind::kBadModel,
             "{}axis {} out of range for rank {}", n.where(), axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace kiln
