// The load-time checks that make kiln's checker a superset of ONNX's (docs/checker.md); the
// differential test (tests/checker/differential.py) covers them by mutation.
#include <gtest/gtest.h>

#include "onnx/text_format.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "support/error.h"

namespace kiln {
namespace {

// The message of the error loading (and checking, and inferring) `text` gives; "" when it loads.
std::string load_error(std::string_view text, CheckOptions opts = {}) {
  try {
    Model m = parse_model_text(text);
    check_model(m, opts);
    infer_shapes(m);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string relu(const char* header, const char* x = "float[2] x", const char* y = "float[2] y") {
  return fmt::format("<{}> agraph ({}) => ({}) {{ y = Relu(x) }}", header, x, y);
}

TEST(Checker, AValidModelLoads) {
  EXPECT_EQ(load_error(relu("ir_version: 8, opset_import: [\"\" : 17]")), "");
}

TEST(Checker, RefusesAnOpsetNewerThanKilnKnows) {
  const std::string text = relu("ir_version: 8, opset_import: [\"\" : 30]");
  EXPECT_NE(load_error(text).find("model imports ai.onnx opset 30; kiln knows up to 28"),
            std::string::npos)
      << load_error(text);
  // Allowed explicitly, it loads with a warning.
  Model m = parse_model_text(text);
  const auto warnings = check_model(m, {.allow_newer_opset = true});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("opset 30"), std::string::npos);
  // A domain kiln does not know is not judged by its version.
  EXPECT_EQ(check_model(parse_model_text(relu("ir_version: 8, opset_import: [\"\" : 17, "
                                              "\"com.example\" : 99]")))
                .size(),
            0u);
}

TEST(Checker, RefusesUndefinedElementTypes) {
  // The textual syntax has no spelling for UNDEFINED; an output of unknown type is the closest
  // (it has no type at all), which the main graph may not have either.
  const std::string e = load_error(relu("ir_version: 8, opset_import: [\"\" : 17]", "float[2] x", "y"));
  EXPECT_NE(e.find("graph output 'y' has no type"), std::string::npos) << e;
}

TEST(Checker, RefusesUnknownAttributesOfTheOpVersion) {
  const std::string e = load_error(
      "<ir_version: 8, opset_import: [\"\" : 13]> agraph (float[2] x) => (float[2] y) "
      "{ y = Relu<bogus = 1>(x) }");
  EXPECT_NE(e.find("node producing 'y' (Relu): unknown attribute 'bogus' (Relu-13 has: none)"),
            std::string::npos)
      << e;
}

TEST(Checker, JudgesAttributesAsTheFileWroteThem) {
  // Squeeze-11 takes axes as an attribute (normalization moves it to an input afterwards) ...
  EXPECT_EQ(load_error("<ir_version: 6, opset_import: [\"\" : 11]> agraph (float[1,2] x) => "
                       "(float[2] y) { y = Squeeze<axes = [0]>(x) }"),
            "");
  // ... Squeeze-13 does not.
  const std::string e = load_error(
      "<ir_version: 8, opset_import: [\"\" : 13]> agraph (float[1,2] x) => (float[2] y) "
      "{ y = Squeeze<axes = [0]>(x) }");
  EXPECT_NE(e.find("unknown attribute 'axes' (Squeeze-13"), std::string::npos) << e;
}

TEST(Checker, RefusesInputCountsTheOpVersionDoesNotTake) {
  const std::string e = load_error(
      "<ir_version: 8, opset_import: [\"\" : 9]> agraph (float[2] x, float[2] z) => (float[2] y) "
      "{ y = Relu(x, z) }");
  EXPECT_NE(e.find("2 inputs, Relu-6 takes 1..1"), std::string::npos) << e;
}

TEST(Checker, RefusesADeclaredOutputTypeInferenceContradicts) {
  const std::string e = load_error(relu("ir_version: 8, opset_import: [\"\" : 17]", "float[2] x",
                                        "float[3] y"));
  EXPECT_NE(e.find("output 'y' is float[2], the graph declares it float[3]"), std::string::npos)
      << e;
  EXPECT_EQ(load_error(relu("ir_version: 8, opset_import: [\"\" : 17]", "float[2] x",
                            "float[N] y")),
            "");
}

TEST(Checker, RefusesReassigningAnOuterName) {
  const std::string e = load_error(
      "<ir_version: 8, opset_import: [\"\" : 17]> agraph (bool c, float[2] x) => (float[2] y) {"
      "  t = Relu(x)"
      "  y = If(c) <then_branch = g1 () => (float[2] t) { t = Neg(x) },"
      "             else_branch = g2 () => (float[2] e) { e = Neg(x) }>"
      "}");
  EXPECT_NE(e.find("output 't' is already defined in an enclosing graph"), std::string::npos) << e;
}

}  // namespace
}  // namespace kiln
