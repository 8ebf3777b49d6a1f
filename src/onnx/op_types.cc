#include "onnx/op_types.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>

#include "onnx/op_types_table.h"

namespace kiln {

namespace {

// -- kiln's table (versions newer than libonnx knows)

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    const size_t end = std::min(s.find(sep), s.size());
    std::string_view part = s.substr(0, end);
    while (part.starts_with(' ')) part.remove_prefix(1);
    while (part.ends_with(' ')) part.remove_suffix(1);
    if (!part.empty()) parts.push_back(part);
    s.remove_prefix(std::min(end + 1, s.size()));
  }
  return parts;
}

using TypeParams = std::map<std::string_view, std::vector<std::string>, std::less<>>;

// "T: tensor(float) tensor(double); I: tensor(int64)"
TypeParams parse_type_params(std::string_view text) {
  TypeParams params;
  for (std::string_view param : split(text, ';')) {
    const size_t colon = param.find(':');
    std::vector<std::string>& types = params[param.substr(0, colon)];
    for (std::string_view t : split(param.substr(colon + 1), ' ')) types.emplace_back(t);
  }
  return params;
}

// "A:T B:tensor(int64)? inputs:V+"
std::vector<FormalTypes> parse_formals(std::string_view text, const TypeParams& params) {
  std::vector<FormalTypes> formals;
  for (std::string_view entry : split(text, ' ')) {
    std::string_view type = entry.substr(entry.find(':') + 1);
    FormalTypes f;
    if (type.ends_with('*') || type.ends_with('+')) {
      f.variadic = true;
      f.homogeneous = type.back() == '*';
    }
    f.optional = type.ends_with('?');
    if (f.variadic || f.optional) type.remove_suffix(1);
    f.type_str = type;
    const auto p = params.find(type);
    f.types = p != params.end() ? p->second : std::vector<std::string>{f.type_str};
    formals.push_back(std::move(f));
  }
  return formals;
}

// (domain, op) -> since -> signature; a deprecated version maps to null.
using TableIndex =
    std::map<std::pair<std::string, std::string>, std::map<int, std::unique_ptr<OpTypes>>>;

const TableIndex& table_index() {
  static const TableIndex index = [] {
    TableIndex idx;
    for (const OpTypesRow& row : op_types_table()) {
      std::unique_ptr<OpTypes>& slot = idx[{row.domain, row.op_type}][row.since];
      if (row.deprecated) continue;
      const TypeParams params = parse_type_params(row.type_params);
      slot = std::make_unique<OpTypes>(OpTypes{.source = "kiln's table",
                                               .since = row.since,
                                               .inputs = parse_formals(row.inputs, params),
                                               .outputs = parse_formals(row.outputs, params)});
    }
    return idx;
  }();
  return index;
}

// A version of an op from one source: `since` 0 where the source has none in the opset; `types`
// null for a deprecated version.
struct Found {
  int since = 0;
  const OpTypes* types = nullptr;
};

Found from_table(const std::string& domain, const std::string& op_type, int opset) {
  const TableIndex& idx = table_index();
  const auto op = idx.find({domain, op_type});
  if (op == idx.end()) return {};
  auto v = op->second.upper_bound(opset);
  if (v == op->second.begin()) return {};
  --v;
  return {v->first, v->second.get()};
}

// -- libonnx's registry (the versions it knows)

using onnx::OpSchema;

std::vector<FormalTypes> formals_of(const OpSchema& s,
                                    const std::vector<OpSchema::FormalParameter>& formals) {
  std::vector<FormalTypes> out;
  for (const auto& f : formals) {
    FormalTypes ft{.type_str = f.GetTypeStr(),
                   .types = {},
                   .variadic = f.GetOption() == OpSchema::Variadic,
                   .homogeneous = f.GetIsHomogeneous(),
                   .optional = f.GetOption() == OpSchema::Optional};
    // The constraint's list keeps the spec's order (f.GetTypes() is a hash set).
    for (const auto& c : s.typeConstraintParams())
      if (c.type_param_str == ft.type_str) ft.types = c.allowed_type_strs;
    if (ft.types.empty()) ft.types = {ft.type_str};  // the formal names one type directly
    out.push_back(std::move(ft));
  }
  return out;
}

Found from_libonnx(const std::string& domain, const std::string& op_type, int opset) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto range = ranges.find(domain);
  if (range == ranges.end()) return {};
  // An opset newer than libonnx knows has the op's newest version libonnx knows, unless the table
  // holds a newer one.
  const OpSchema* s =
      onnx::OpSchemaRegistry::Schema(op_type, std::min(opset, range->second.second), domain);
  if (!s) return {};
  if (s->deprecated()) return {s->SinceVersion(), nullptr};
  static std::mutex mu;
  static std::map<const OpSchema*, std::unique_ptr<OpTypes>> converted;
  const std::lock_guard lock(mu);
  std::unique_ptr<OpTypes>& slot = converted[s];
  if (!slot)
    slot = std::make_unique<OpTypes>(OpTypes{.source = "libonnx",
                                             .since = s->SinceVersion(),
                                             .inputs = formals_of(*s, s->inputs()),
                                             .outputs = formals_of(*s, s->outputs())});
  return {s->SinceVersion(), slot.get()};
}

// Whether `opset` of `domain` is one the table's spec describes.
bool spec_knows(const std::string& domain, int opset) {
  for (const OpTypesDomain& d : op_types_table_domains())
    if (d.domain == domain) return opset <= d.newest;
  return false;
}

}  // namespace

const OpTypes* find_op_types(const std::string& domain, const std::string& op_type, int opset) {
  if (!spec_knows(domain, opset)) return nullptr;
  // The newer version of the two sources' wins; on a tie (a version whose types libonnx has
  // wrong, which the table holds too) the table's.
  const Found table = from_table(domain, op_type, opset);
  const Found libonnx = from_libonnx(domain, op_type, opset);
  return table.since >= libonnx.since && table.since > 0 ? table.types : libonnx.types;
}

int newest_known_opset(const std::string& domain) {
  for (const OpTypesDomain& d : op_types_table_domains())
    if (d.domain == domain) return d.newest;
  return 0;
}

void load_op_types() {
  table_index();
  onnx::OpSchemaRegistry::Schema("Relu", 1);
}

}  // namespace kiln
