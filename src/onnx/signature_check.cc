#include "onnx/signature_check.h"

#include <onnx/defs/schema.h>

#include <algorithm>

#include "ir/walk.h"
#include "spec/op_types.h"
#include "support/error.h"

namespace kiln {

namespace {

std::string count_range(int lo, int hi) {
  return hi == std::numeric_limits<int>::max() || hi < 0 ? fmt::format("{} or more", lo)
                                                         : fmt::format("{}..{}", lo, hi);
}

// Counts and empty names of one side (inputs or outputs) against the formals.
void check_side(const Node& n, const std::vector<Value*>& values, const std::vector<FormalTypes>& formals,
                int lo, int hi, const char* side, const std::string& version) {
  const int count = static_cast<int>(values.size());
  KILN_CHECK(count >= lo && count <= hi, ErrorKind::kBadModel, "{}{} {}s, {} takes {}", n.where(),
             count, side, version, count_range(lo, hi));
  for (int i = 0; i < count && !formals.empty(); ++i) {
    const FormalTypes& f = formals[std::min<size_t>(i, formals.size() - 1)];
    KILN_CHECK(values[i] != nullptr || f.optional || f.variadic, ErrorKind::kBadModel,
               "{}{} {} is empty, but {} requires it", n.where(), side, i, version);
  }
}

// The file-form counts a formal list allows: optional formals may be left out at the end, a
// variadic one takes one or more.
std::pair<int, int> counts_of(const std::vector<FormalTypes>& formals) {
  int lo = 0, hi = 0;
  for (size_t i = 0; i < formals.size(); ++i) {
    if (formals[i].variadic) {
      if (!formals[i].optional) lo = static_cast<int>(i) + 1;
      return {lo, std::numeric_limits<int>::max()};
    }
    ++hi;
    if (!formals[i].optional) lo = hi;
  }
  return {lo, hi};
}

std::string names_of(const std::map<std::string, onnx::OpSchema::Attribute>& attrs) {
  std::string out;
  for (const auto& [name, _] : attrs) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

// A schema may allow only some counts within its range (NumOutputs({1, 5})), which libonnx does
// not expose: the one such op, BatchNormalization, gives Y alone or every output (five before
// opset 14, three since), the outputs of test and training mode.
void check_allowed_outputs(const Node& n, const onnx::OpSchema& s, const std::string& version) {
  if (!n.domain.empty() || n.op_type != "BatchNormalization") return;
  const int all = s.SinceVersion() >= 14 ? 3 : 5;
  const int count = n.num_outputs();
  KILN_CHECK(count == 1 || count == all, ErrorKind::kBadModel,
             "{}{} outputs, {} takes 1 (test mode) or {} (training mode)", n.where(), count,
             version, all);
}

void check_libonnx(const Node& n, const onnx::OpSchema& s, const OpTypes& types) {
  const std::string version = fmt::format("{}-{}", n.op_type, s.SinceVersion());
  check_side(n, n.inputs, types.inputs, s.min_input(), s.max_input(), "input", version);
  check_side(n, n.outputs, types.outputs, s.min_output(), s.max_output(), "output", version);
  check_allowed_outputs(n, s, version);
  for (const Attribute& a : n.attrs) {
    if (a.name.starts_with("__")) continue;  // ONNX's internal symbols
    const auto it = s.attributes().find(a.name);
    KILN_CHECK(it != s.attributes().end(), ErrorKind::kBadModel,
               "{}unknown attribute '{}' ({} has: {})", n.where(), a.name, version,
               names_of(s.attributes()));
    KILN_CHECK(!a.ref_attr_name.empty() || static_cast<int>(a.kind) == static_cast<int>(it->second.type),
               ErrorKind::kBadModel, "{}attribute '{}' is {}, {} takes {}", n.where(), a.name,
               attr_kind_name(a.kind), version,
               attr_kind_name(static_cast<AttrKind>(it->second.type)));
  }
  for (const auto& [name, spec] : s.attributes())
    KILN_CHECK(!spec.required || n.attr(name), ErrorKind::kBadModel,
               "{}required attribute '{}' is missing ({})", n.where(), name, version);
}

void check_node(const Node& n, const Model& m) {
  if (m.find_function(n.domain, n.op_type)) return;  // a call of a local function
  const OpTypes* types = find_op_types(n.domain, n.op_type, n.opset);
  if (!types) return;
  if (types->source == "libonnx") {
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    const auto range = ranges.find(n.domain);
    if (range == ranges.end()) return;
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(
        n.op_type, std::min(n.opset, range->second.second), n.domain);
    if (s) check_libonnx(n, *s, *types);
    return;
  }
  // A version newer than libonnx knows: the spec's formals give the counts.
  const std::string version = fmt::format("{}-{}", n.op_type, types->since);
  const auto [in_lo, in_hi] = counts_of(types->inputs);
  const auto [out_lo, out_hi] = counts_of(types->outputs);
  check_side(n, n.inputs, types->inputs, in_lo, in_hi, "input", version);
  check_side(n, n.outputs, types->outputs, out_lo, out_hi, "output", version);
}

}  // namespace

void check_signatures(const Model& m) {
  for_each_node(m, [&](const Node& n) { check_node(n, m); });
}

}  // namespace kiln
