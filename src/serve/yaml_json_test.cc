#include "serve/yaml_json.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "support/error.h"

namespace kiln::serve {
namespace {

using json = nlohmann::json;

std::string error_of(const std::string& text) {
  try {
    yaml_to_json(text, "p.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

TEST(YamlJson, PipelineBlockAndFlowStyles) {
  const json j = yaml_to_json(R"(# a kiln ci pipeline
model: models/mlp.onnx
targets: [x86-64, "x86-64-v3"]
compile:
  runs: 20
  shapes:
    - batch=1..8
  quantize: {mode: dynamic}
tolerance:
  max_abs: 1e-3
  min_cosine: 0.999
latency_regression: .10
alias: production
)",
                              "p.yaml");
  const json want = json::parse(R"({"model": "models/mlp.onnx", "targets": ["x86-64", "x86-64-v3"],
    "compile": {"runs": 20, "shapes": ["batch=1..8"], "quantize": {"mode": "dynamic"}},
    "tolerance": {"max_abs": 0.001, "min_cosine": 0.999}, "latency_regression": 0.1, "alias": "production"})");
  EXPECT_EQ(j, want) << j.dump();
  EXPECT_TRUE(j["compile"]["runs"].is_number_integer());
}

TEST(YamlJson, CoreSchemaScalars) {
  const json j = yaml_to_json(R"(
a: null
b: ~
c:
d: true
e: FALSE
f: yes
g: -17
h: 0x1F
i: 0o17
j: +3.5e2
k: "42"
l: '-1'
m: !!str 7
n: !!float 2
o: 1.2.3
p: 9223372036854775807
q: .5
)",
                              "p.yaml");
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_TRUE(j["b"].is_null());
  EXPECT_TRUE(j["c"].is_null());
  EXPECT_EQ(j["d"], json(true));
  EXPECT_EQ(j["e"], json(false));
  EXPECT_EQ(j["f"], json("yes"));  // YAML 1.1's booleans are strings in 1.2's core schema
  EXPECT_EQ(j["g"], json(-17));
  EXPECT_EQ(j["h"], json(31));
  EXPECT_EQ(j["i"], json(15));
  EXPECT_EQ(j["j"], json(350.0));
  EXPECT_EQ(j["k"], json("42"));
  EXPECT_EQ(j["l"], json("-1"));
  EXPECT_EQ(j["m"], json("7"));
  EXPECT_TRUE(j["n"].is_number_float());
  EXPECT_EQ(j["o"], json("1.2.3"));
  EXPECT_EQ(j["p"], json(INT64_MAX));
  EXPECT_EQ(j["q"], json(0.5));
}

TEST(YamlJson, EmptyDocumentIsNull) {
  EXPECT_TRUE(yaml_to_json("", "p.yaml").is_null());
  EXPECT_TRUE(yaml_to_json("# only a comment\n", "p.yaml").is_null());
}

TEST(YamlJson, RefusalsNameTheFileAndLine) {
  EXPECT_NE(error_of("model: a\ntargets: [x86-64\n").find("'p.yaml' line"), std::string::npos);
  EXPECT_NE(error_of("a: 1\nb:\n  c: 2\n  c: 3\n").find("line 4, column 3: key 'c' appears twice"),
            std::string::npos);
  EXPECT_NE(error_of("? [a, b]\n: 1\n").find("mapping key"), std::string::npos);
  EXPECT_NE(error_of("a: 99999999999999999999\n").find("64 bits"), std::string::npos);
  EXPECT_NE(error_of("a: .inf\n").find("infinities"), std::string::npos);
  EXPECT_NE(error_of("a: !!int x\n").find("not a value of its tag"), std::string::npos);
  EXPECT_NE(error_of("a: !custom 1\n").find("tag '!custom'"), std::string::npos);
  EXPECT_NE(error_of("a: 1\n---\nb: 2\n").find("line 2: a second YAML document"), std::string::npos);
  EXPECT_NE(error_of("a: 1\n...\n").find("line 2: a second YAML document"), std::string::npos);
  EXPECT_EQ(yaml_to_json("# c\n---\na: 1\n", "p.yaml"), json({{"a", 1}}));  // one document, marked
  EXPECT_EQ(yaml_to_json("--- {a: 1}\n", "p.yaml"), json({{"a", 1}}));
  EXPECT_EQ(yaml_to_json("a: |\n  ---\n", "p.yaml"), json({{"a", "---\n"}}));  // inside a value
  EXPECT_TRUE(yaml_to_json(",\n", "p.yaml").is_null());  // yaml-cpp's LoadAll never ended on it
  EXPECT_NE(error_of("a: [1\n").find("not YAML"), std::string::npos);
}

TEST(YamlJson, DeepNestingIsRefused) {
  std::string deep;
  for (int i = 0; i < kMaxYamlDepth + 2; ++i) deep += "[";
  for (int i = 0; i < kMaxYamlDepth + 2; ++i) deep += "]";
  EXPECT_NE(error_of(deep).find("deeper than"), std::string::npos);
  // Deeper than yaml-cpp's own guard: its refusal, not a stack overflow.
  EXPECT_NE(error_of(std::string(100000, '[')).find("'p.yaml' line"), std::string::npos);
}

TEST(YamlJson, AliasBombIsRefusedNotExpanded) {
  // Each level holds the previous one ten times: 10^9 values if expanded.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char p = static_cast<char>(c - 1);
    bomb += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n", c, p);
  }
  EXPECT_NE(error_of(bomb).find("aliases expanded"), std::string::npos);
  // A few aliases are read as the values they stand for.
  const json j = yaml_to_json("base: &t [x86-64]\ntargets: *t\n", "p.yaml");
  EXPECT_EQ(j["targets"], json::array({"x86-64"}));
}

// Random edits of a pipeline (bytes replaced, inserted, deleted; YAML's indicators favoured) end
// in a value or a kiln::Error, never in another exception, a crash or a hang: a pipeline file may
// come from anyone's repository.
TEST(YamlJson, RandomEditsEndInAValueOrAnError) {
  const std::string seed =
      "# pipeline\nmodel: m.onnx\ntargets: [x86-64, \"x86-64-v3\"]\ncompile:\n  runs: 20\n  quantize: {mode: "
      "dynamic}\n  shapes:\n    - batch=1..8\nbase: &b {max_abs: 1e-3}\ntolerance: *b\nnote: |\n  two\n  lines\n";
  const std::string alphabet = "[]{}:,-?&*!|>'\"#%@` \n\t\\abcxyz019.~";
  std::mt19937 rng(15);
  int values = 0, errors = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string t = seed;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      const size_t at = rng() % t.size();
      const char c = rng() % 4 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng() % 256);
      switch (rng() % 3) {
        case 0: t[at] = c; break;
        case 1: t.insert(at, 1, c); break;
        default: t.erase(at, 1 + rng() % 4); break;
      }
    }
    try {
      yaml_to_json(t, "p.yaml");
      ++values;
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
      ++errors;
    } catch (const std::exception& e) {
      FAIL() << "not a kiln::Error: " << e.what() << " on:\n" << t;
    }
  }
  EXPECT_GT(values, 100);
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace kiln::serve
