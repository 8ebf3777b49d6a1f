#include "profile/chrome_trace.h"

#include <gtest/gtest.h>

#include <set>

#include "profile/profile_target.h"
#include "profile/profile_test_util.h"

namespace kiln {
namespace {

using nlohmann::json;

// A real profile of the tiny model, written and read back as JSON text.
json trace_of_runs(int runs) {
  auto target = std::make_unique<ProfileTarget>(testing::tiny_mlp(), "reference", 1,
      std::vector<SessionPhase>{{"model_loading_uri", {100, 2100}}});
  const ProfileData d =
      profile_runs(*target, {testing::float_input({2, 4})}, {.warmup = 1, .runs = runs});
  const std::string text = chrome_trace(d, 42, 7).dump();
  return json::parse(text);  // throws if the writer made invalid JSON
}

TEST(ChromeTrace, OneCompleteNodeEventPerNodePerRun) {
  const json t = trace_of_runs(3);
  ASSERT_TRUE(t.is_array());
  std::multiset<std::string> names;
  std::set<int> runs;
  for (const json& e : t) {
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["pid"], 42);
    EXPECT_EQ(e["tid"], 7);
    EXPECT_TRUE(e["ts"].is_number());
    EXPECT_GE(e["dur"].get<double>(), 0);
    EXPECT_TRUE(e["args"].is_object());
    if (e["cat"] == "Node") {
      names.insert(e["name"].get<std::string>());
      runs.insert(e["args"]["run"].get<int>());
    }
  }
  EXPECT_EQ(names.count("fc"), 3u);
  EXPECT_EQ(names.count("relu"), 3u);
  EXPECT_EQ(names.count("softmax"), 3u);
  EXPECT_EQ(names.size(), 9u);
  EXPECT_EQ(runs, (std::set<int>{0, 1, 2}));
}

TEST(ChromeTrace, SessionEventsForPhasesAndRuns) {
  const json t = trace_of_runs(2);
  std::vector<std::string> session;
  for (const json& e : t)
    if (e["cat"] == "Session") session.push_back(e["name"]);
  EXPECT_EQ(session, (std::vector<std::string>{"model_loading_uri", "session_initialization",
                                               "warmup_run", "model_run", "model_run"}));
  // Timestamps are microseconds from the first phase: loading began at 0 and took 2 us.
  EXPECT_DOUBLE_EQ(t[0]["ts"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(t[0]["dur"].get<double>(), 2);
}

TEST(ChromeTrace, NodeArgsInOnnxRuntimeForm) {
  const json t = trace_of_runs(1);
  const json* fc = nullptr;
  for (const json& e : t)
    if (e["cat"] == "Node" && e["name"] == "fc") fc = &e;
  ASSERT_TRUE(fc);
  const json& a = (*fc)["args"];
  EXPECT_EQ(a["op_name"], "MatMul");
  EXPECT_EQ(a["provider"], "reference");
  EXPECT_EQ(a["kernel"], "reference");
  EXPECT_EQ(a["node_index"], "0");
  EXPECT_EQ(a["input_type_shape"], json::parse(R"([{"float":[2,4]},{"float":[4,3]}])"));
  EXPECT_EQ(a["output_type_shape"], json::parse(R"([{"float":[2,3]}])"));
  EXPECT_EQ(a["activation_size"], "32");  // x: 8 floats
  EXPECT_EQ(a["parameter_size"], "48");   // w: 12 floats, an initializer
  EXPECT_EQ(a["output_size"], "24");
  EXPECT_DOUBLE_EQ(a["flops"].get<double>(), 2.0 * 2 * 3 * 4);
  EXPECT_EQ(a["depth"], 0);
}

TEST(ChromeTrace, NodeEventsLieInsideTheirRun) {
  const json t = trace_of_runs(2);
  std::vector<std::pair<double, double>> runs;
  for (const json& e : t)
    if (e["name"] == "model_run")
      runs.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  ASSERT_EQ(runs.size(), 2u);
  for (const json& e : t) {
    if (e["cat"] != "Node") continue;
    const auto& [begin, end] = runs.at(e["args"]["run"].get<size_t>());
    EXPECT_GE(e["ts"].get<double>(), begin);
    EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(), end + 1e-3);
  }
}

TEST(ChromeTrace, TypeShapeListSkipsAbsentOperands) {
  OperandShape a;
  a.present = true;
  a.dtype = DataType::kInt64;
  a.dims = {3};
  const OperandShape absent;
  EXPECT_EQ(type_shape_list({a, absent}).dump(), R"([{"int64":[3]}])");
}

}  // namespace
}  // namespace kiln
