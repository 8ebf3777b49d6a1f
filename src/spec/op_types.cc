#include "spec/op_types.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <tuple>

#include "spec/op_types_table.h"

namespace kiln {

namespace {

// -- the rows' text form

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
    f.optional = type.ends_with('?');
    if (f.optional) type.remove_suffix(1);
    if (type.ends_with('*') || type.ends_with('+')) {
      f.variadic = true;
      f.homogeneous = type.back() == '*';
      type.remove_suffix(1);
    }
    f.type_str = type;
    const auto p = params.find(type);
    f.types = p != params.end() ? p->second : std::vector<std::string>{f.type_str};
    formals.push_back(std::move(f));
  }
  return formals;
}

AttrKind attr_kind_named(std::string_view name) {
  for (int k = 1; k <= static_cast<int>(AttrKind::kTypeProtos); ++k)
    if (attr_kind_name(static_cast<AttrKind>(k)) == name) return static_cast<AttrKind>(k);
  return AttrKind::kUndefined;
}

// "axis:int kernel_shape:ints! mode:string", sorted by name
std::vector<AttributeSpec> parse_attributes(std::string_view text) {
  std::vector<AttributeSpec> attrs;
  for (std::string_view entry : split(text, ' ')) {
    const size_t colon = entry.find(':');
    std::string_view kind = entry.substr(colon + 1);
    const bool required = kind.ends_with('!');
    if (required) kind.remove_suffix(1);
    attrs.push_back({std::string(entry.substr(0, colon)), attr_kind_named(kind), required});
  }
  return attrs;
}

// (domain, op) -> since -> signature; a deprecated version maps to null.
using TableIndex =
    std::map<std::pair<std::string, std::string>, std::map<int, std::unique_ptr<OpTypes>>>;

TableIndex index_rows(std::span<const OpTypesRow> rows, const char* source) {
  TableIndex idx;
  for (const OpTypesRow& row : rows) {
    std::unique_ptr<OpTypes>& slot = idx[{row.domain, row.op_type}][row.since];
    if (row.deprecated) continue;
    const TypeParams params = parse_type_params(row.type_params);
    slot = std::make_unique<OpTypes>(OpTypes{.source = source,
                                             .since = row.since,
                                             .inputs = parse_formals(row.inputs, params),
                                             .outputs = parse_formals(row.outputs, params),
                                             .attributes = parse_attributes(row.attributes)});
  }
  return idx;
}

// kiln's table from the spec (the versions after libonnx 1.12, and its errata).
const TableIndex& spec_index() {
  static const TableIndex index = index_rows(op_types_table(), "kiln's table");
  return index;
}

// libonnx 1.12's registry as rows (op_types_libonnx.cc): the versions it knows.
const TableIndex& libonnx_index() {
  static const TableIndex index = index_rows(op_types_libonnx_table(), "libonnx");
  return index;
}

// A version of an op from one source: `since` 0 where the source has none in the opset; `types`
// null for a deprecated version.
struct Found {
  int since = 0;
  const OpTypes* types = nullptr;
};

Found find_in(const TableIndex& idx, const std::string& domain, const std::string& op_type,
              int opset) {
  const auto op = idx.find({domain, op_type});
  if (op == idx.end()) return {};
  auto v = op->second.upper_bound(opset);
  if (v == op->second.begin()) return {};
  --v;
  return {v->first, v->second.get()};
}

// Whether `opset` of `domain` is one the table's spec describes.
bool spec_knows(const std::string& domain, int opset) {
  for (const OpTypesDomain& d : op_types_table_domains())
    if (d.domain == domain) return opset <= d.newest;
  return false;
}

}  // namespace

std::pair<int, int> formal_counts(const std::vector<FormalTypes>& formals) {
  int lo = 0, hi = 0;
  for (size_t i = 0; i < formals.size(); ++i) {
    if (formals[i].variadic) return {hi + (formals[i].optional ? 0 : 1), std::numeric_limits<int>::max()};
    ++hi;
    if (!formals[i].optional) lo = hi;
  }
  return {lo, hi};
}

const OpTypes* find_op_types(const std::string& domain, const std::string& op_type, int opset) {
  if (!spec_knows(domain, opset)) return nullptr;
  // The newer version of the two sources' wins; on a tie (a version whose types libonnx has
  // wrong, which the table holds too) the table's.
  const Found table = find_in(spec_index(), domain, op_type, opset);
  const Found libonnx = find_in(libonnx_index(), domain, op_type, opset);
  return table.since >= libonnx.since && table.since > 0 ? table.types : libonnx.types;
}

int newest_known_opset(const std::string& domain) {
  for (const OpTypesDomain& d : op_types_table_domains())
    if (d.domain == domain) return d.newest;
  return 0;
}

void load_op_types() {
  spec_index();
  libonnx_index();
}

}  // namespace kiln
