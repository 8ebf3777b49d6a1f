// docs/ops.md carries an index of every op kiln knows and the file that holds it, made from the
// registry (OpSchema::file). This test fails when the index is stale; KILN_UPDATE_DOCS=1 rewrites it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "ops/op.h"

namespace kiln {
namespace {

constexpr const char* kBegin = "<!-- op index: made by src/ops/op_index_test.cc; KILN_UPDATE_DOCS=1 rewrites it -->";
constexpr const char* kEnd = "<!-- end of op index -->";

// One line per file: "| `ops/nms.cc` | NonMaxSuppression |", ops sorted, domains named.
std::string op_index() {
  std::map<std::string, std::vector<std::string>> by_file;
  for (const auto& s : OpRegistry::global().all())
    by_file[s->file].push_back(s->domain.empty() ? s->name : s->domain + "." + s->name);
  std::string out = "| file | ops |\n| --- | --- |\n";
  for (auto& [file, ops] : by_file) {
    std::sort(ops.begin(), ops.end());
    out += fmt::format("| `src/{}` | {} |\n", file, fmt::join(ops, ", "));
  }
  return out;
}

TEST(OpIndex, DocsOpsMdListsEveryOpInTheFileThatHoldsIt) {
  const std::string path = std::string(KILN_SOURCE_DIR) + "/docs/ops.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const size_t begin = doc.find(kBegin), end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "docs/ops.md has no op index section";
  ASSERT_NE(end, std::string::npos);
  const size_t body = begin + std::string(kBegin).size() + 1;
  const std::string want = op_index();
  if (doc.substr(body, end - body) == want) return;
  if (const char* update = std::getenv("KILN_UPDATE_DOCS"); update && std::string(update) == "1") {
    std::ofstream(path) << doc.substr(0, body) << want << doc.substr(end);
    GTEST_SKIP() << "rewrote the op index of " << path;
  }
  FAIL() << "docs/ops.md's op index is stale; rewrite it with KILN_UPDATE_DOCS=1 "
            "build/tests/kiln_unit_tests --gtest_filter='OpIndex.*'. It should read:\n"
         << want;
}

TEST(OpIndex, EveryOpKnowsItsFile) {
  for (const auto& s : OpRegistry::global().all()) {
    EXPECT_TRUE(s->file.starts_with("ops/") && s->file.ends_with(".cc")) << s->name << ": " << s->file;
  }
}

}  // namespace
}  // namespace kiln
