// The target table: the x86-64 levels nest, native is this machine's row (caps included), what a
// capped machine lacks is named, and an unknown name lists the known ones.
#include "target/target.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include "engine/cpu/cpu_features.h"
#include "support/error.h"

namespace kiln {
namespace {

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(Targets, LevelsNestAndEveryRowIsComplete) {
  const Target& v1 = find_target("x86-64");
  const Target& v3 = find_target("x86-64-v3");
  const Target& v4 = find_target("x86-64-v4");
  for (const std::string& f : v1.features) EXPECT_TRUE(has(v3.features, f)) << f;
  for (const std::string& f : v3.features) EXPECT_TRUE(has(v4.features, f)) << f;
  EXPECT_TRUE(has(v3.features, "avx2") && has(v3.features, "fma"));
  EXPECT_TRUE(has(v4.features, "avx512f") && has(v4.features, "avx512vl"));
  for (const Target& t : targets()) {
    EXPECT_FALSE(t.kernel_isa.empty()) << t.name;
    EXPECT_FALSE(t.stages.empty()) << t.name;
    ASSERT_FALSE(t.backends.empty()) << t.name;
    EXPECT_EQ(t.backends.back(), "reference") << t.name;  // what takes every node, last
  }
  EXPECT_EQ(find_target("aarch64-linux").arch, "aarch64");
  EXPECT_EQ(target_pipeline(v3, {"fold"}).front(), "fold");
  EXPECT_EQ(target_pipeline(v3, {"fold"}).size(), 1 + v3.stages.size());
}

TEST(Targets, NativeIsThisMachinesRowAndRunsHere) {
  const Target& n = find_target("native");
  EXPECT_EQ(n.name, native_target().name);
  EXPECT_EQ(n.arch, host_arch());
  EXPECT_TRUE(missing_on_host(n).empty());
  EXPECT_EQ(n.level, host_level());
  const std::string other = host_arch() == "aarch64" ? "x86-64" : "aarch64-linux";
  EXPECT_EQ(missing_on_host(find_target(other)), std::vector<std::string>{"arch " + find_target(other).arch});
  EXPECT_NE(describe_targets().find("this machine: " + n.name), std::string::npos);
}

TEST(Targets, ACappedMachineLacksTheWiderLevelsFeatures) {
  if (host_arch() != "x86_64" || !cpu::isa_supported(cpu::Isa::kAvx2)) GTEST_SKIP() << "needs an AVX2 x86-64";
  const cpu::Isa before = cpu::set_active_isa(cpu::Isa::kAvx2);
  EXPECT_EQ(native_target().name, "x86-64-v3");
  const std::vector<std::string> missing = missing_on_host(find_target("x86-64-v4"));
  EXPECT_TRUE(has(missing, "avx512f")) << fmt::format("{}", fmt::join(missing, ","));
  EXPECT_FALSE(has(missing, "avx2"));
  EXPECT_TRUE(missing_on_host(find_target("x86-64")).empty());
  cpu::set_active_isa(before);
}

TEST(Targets, AnUnknownNameListsTheKnownOnes) {
  try {
    find_target("riscv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("x86-64-v3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("native"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
