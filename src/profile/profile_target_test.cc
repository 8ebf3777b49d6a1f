#include "profile/profile_target.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "onnx/export.h"
#include "ops/infer.h"
#include "profile/profile_test_util.h"
#include "support/error.h"

namespace kiln {
namespace {

std::filesystem::path saved_tiny_mlp() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("kiln_profile_target_" + std::to_string(getpid()) + ".onnx");
  // Inferred first, so that the file declares its output's type (the loader asks for it).
  Model m = testing::tiny_mlp();
  infer_shapes(m);
  save_model(m, path);
  return path;
}

std::vector<std::string> phase_names(const ProfileTarget& t) {
  std::vector<std::string> names;
  for (const SessionPhase& p : t.phases()) names.push_back(p.name);
  return names;
}

TEST(ProfileTarget, LoadsRewritesAndOpensTimingEachPhase) {
  const auto path = saved_tiny_mlp();
  bool rewritten = false;
  auto target = load_target(path, "reference", 1, [&](Model& m) {
    m.graph->nodes()[1]->name = "renamed";
    rewritten = true;
  });
  std::filesystem::remove(path);
  EXPECT_TRUE(rewritten);
  EXPECT_EQ(phase_names(*target),
            (std::vector<std::string>{"model_loading_uri", "optimize", "session_initialization"}));
  EXPECT_EQ(target->model().graph->nodes()[1]->name, "renamed");  // what runs is the rewrite
  for (const SessionPhase& p : target->phases()) EXPECT_LE(p.span.start_ns, p.span.end_ns);
}

TEST(ProfileTarget, FastEnginePlansWhenPrepared) {
  const auto path = saved_tiny_mlp();
  auto target = load_target(path, "fast", 1);
  std::filesystem::remove(path);
  EXPECT_FALSE(target->plan());
  target->prepare({testing::float_input({3, 4})});
  ASSERT_TRUE(target->plan());
  EXPECT_GT(target->plan()->steps, 0);
  EXPECT_EQ(phase_names(*target).back(), "plan");
}

TEST(ProfileTarget, UnknownEngineOrFileFailsCleanly) {
  EXPECT_THROW(ProfileTarget(testing::tiny_mlp(), "turbo", 1), Error);
  EXPECT_THROW(load_target("/no/such/model.onnx", "fast", 1), Error);
  EXPECT_EQ(resolve_threads(3), 3);
  EXPECT_GE(resolve_threads(0), 1);
}

}  // namespace
}  // namespace kiln
