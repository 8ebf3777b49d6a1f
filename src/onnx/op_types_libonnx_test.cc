// The generated rows of libonnx 1.12's registry (src/spec/op_types_libonnx.cc) against the registry
// itself: kiln judges types, counts and attributes with the rows and builds no registry, so they
// must say what the registry says, version for version.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <string>

#include "spec/op_types.h"

namespace kiln {
namespace {

std::string without_spaces(std::string s) {
  std::erase(s, ' ');
  return s;
}

// A formal as the registry gives it: name aside, its type parameter, arity and allowed types.
std::string describe(const onnx::OpSchema& s, const onnx::OpSchema::FormalParameter& f) {
  std::string out = without_spaces(f.GetTypeStr()) + (f.GetOption() == onnx::OpSchema::Optional ? "?" : "") +
                    (f.GetOption() == onnx::OpSchema::Variadic ? (f.GetIsHomogeneous() ? "*" : "+") : "") + ":";
  std::vector<std::string> types;
  for (const auto& c : s.typeConstraintParams())
    if (c.type_param_str == f.GetTypeStr()) types = c.allowed_type_strs;
  if (types.empty()) types = {f.GetTypeStr()};
  for (const auto& t : types) out += " " + without_spaces(t);
  return out;
}

std::string describe(const FormalTypes& f) {
  std::string out = f.type_str + (f.optional && !f.variadic ? "?" : "") + (f.variadic ? (f.homogeneous ? "*" : "+") : "") + ":";
  for (const auto& t : f.types) out += " " + t;
  return out;
}

TEST(OpTypesLibonnx, TheRowsSayWhatTheRegistrySays) {
  int compared = 0;
  for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    const std::string what = s.Name() + "-" + std::to_string(s.SinceVersion()) + " (" + s.domain() + ")";
    const OpTypes* t = find_op_types(s.domain(), s.Name(), s.SinceVersion());
    if (s.deprecated()) {
      EXPECT_EQ(t, nullptr) << what;
      continue;
    }
    ASSERT_NE(t, nullptr) << what;
    ASSERT_EQ(t->since, s.SinceVersion()) << what;
    if (t->source != "libonnx") {  // the spec's errata: Erf-13, GridSample-16
      EXPECT_TRUE((s.Name() == "Erf" && s.SinceVersion() == 13) ||
                  (s.Name() == "GridSample" && s.SinceVersion() == 16)) << what << " from " << t->source;
      continue;
    }
    ASSERT_EQ(t->inputs.size(), s.inputs().size()) << what;
    ASSERT_EQ(t->outputs.size(), s.outputs().size()) << what;
    for (size_t i = 0; i < s.inputs().size(); ++i)
      EXPECT_EQ(describe(t->inputs[i]), describe(s, s.inputs()[i])) << what << " input " << i;
    for (size_t i = 0; i < s.outputs().size(); ++i)
      EXPECT_EQ(describe(t->outputs[i]), describe(s, s.outputs()[i])) << what << " output " << i;
    EXPECT_EQ(formal_counts(t->inputs), std::make_pair(s.min_input(), s.max_input())) << what;
    EXPECT_EQ(formal_counts(t->outputs), std::make_pair(s.min_output(), s.max_output())) << what;
    std::string theirs, ours;
    for (const auto& [name, a] : s.attributes())
      theirs += name + ":" + std::string(attr_kind_name(static_cast<AttrKind>(a.type))) + (a.required ? "! " : " ");
    for (const AttributeSpec& a : t->attributes)
      ours += a.name + ":" + std::string(attr_kind_name(a.kind)) + (a.required ? "! " : " ");
    EXPECT_EQ(ours, theirs) << what;
    ++compared;
  }
  EXPECT_GT(compared, 400);  // libonnx 1.12 has 444 versions, a few deprecated
}

}  // namespace
}  // namespace kiln
