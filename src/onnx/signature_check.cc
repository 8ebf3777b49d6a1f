#include "onnx/signature_check.h"

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

std::string names_of(const std::vector<AttributeSpec>& attrs) {
  std::string out;
  for (const AttributeSpec& a : attrs) out += (out.empty() ? "" : ", ") + a.name;
  return out.empty() ? "none" : out;
}

// A schema may allow only some counts within its range (NumOutputs({1, 5})), which the formals do
// not say: the one such op, BatchNormalization, gives Y alone or every output (five before opset
// 14, three since), the outputs of test and training mode.
void check_allowed_outputs(const Node& n, const OpTypes& types, const std::string& version) {
  if (!n.domain.empty() || n.op_type != "BatchNormalization") return;
  const int all = types.since >= 14 ? 3 : 5;
  const int count = n.num_outputs();
  KILN_CHECK(count == 1 || count == all, ErrorKind::kBadModel,
             "{}{} outputs, {} takes 1 (test mode) or {} (training mode)", n.where(), count,
             version, all);
}

void check_attributes(const Node& n, const OpTypes& types, const std::string& version) {
  for (const Attribute& a : n.attrs) {
    if (a.name.starts_with("__")) continue;  // ONNX's internal symbols
    const auto it = std::find_if(types.attributes.begin(), types.attributes.end(),
                                 [&](const AttributeSpec& s) { return s.name == a.name; });
    KILN_CHECK(it != types.attributes.end(), ErrorKind::kBadModel,
               "{}unknown attribute '{}' ({} has: {})", n.where(), a.name, version,
               names_of(types.attributes));
    KILN_CHECK(!a.ref_attr_name.empty() || a.kind == it->kind, ErrorKind::kBadModel,
               "{}attribute '{}' is {}, {} takes {}", n.where(), a.name, attr_kind_name(a.kind),
               version, attr_kind_name(it->kind));
  }
  for (const AttributeSpec& spec : types.attributes)
    KILN_CHECK(!spec.required || n.attr(spec.name), ErrorKind::kBadModel,
               "{}required attribute '{}' is missing ({})", n.where(), spec.name, version);
}

void check_node(const Node& n, const Model& m) {
  if (m.find_function(n.domain, n.op_type)) return;  // a call of a local function
  const OpTypes* types = find_op_types(n.domain, n.op_type, n.opset);
  if (!types) return;
  const std::string version = fmt::format("{}-{}", n.op_type, types->since);
  const auto [in_lo, in_hi] = formal_counts(types->inputs);
  const auto [out_lo, out_hi] = formal_counts(types->outputs);
  check_side(n, n.inputs, types->inputs, in_lo, in_hi, "input", version);
  check_side(n, n.outputs, types->outputs, out_lo, out_hi, "output", version);
  check_allowed_outputs(n, *types, version);
  check_attributes(n, *types, version);
}

}  // namespace

void check_signatures(const Model& m) {
  for_each_node(m, [&](const Node& n) { check_node(n, m); });
}

}  // namespace kiln
