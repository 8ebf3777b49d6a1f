// The dispatch lists against their text in dispatch_lists_golden.txt: a change of which
// implementation is tried first for an op is a change of that file, seen in review.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/kernel_table.h"

namespace kiln::engine {
namespace {

constexpr const char* kGolden = KILN_SOURCE_DIR "/src/engine/dispatch_lists_golden.txt";

TEST(DispatchLists, MatchTheGoldenText) {
  std::ifstream in(kGolden);
  ASSERT_TRUE(in) << "cannot read " << kGolden;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(golden.str(), KernelTable::global().describe())
      << "The dispatch lists changed. If that is meant, regenerate the golden text with\n"
      << "  build/kiln inspect --impls > src/engine/dispatch_lists_golden.txt\n"
      << "and let the diff be reviewed.";
}

TEST(DispatchLists, DescribeOneOp) {
  const std::string conv = KernelTable::global().describe("Conv");
  EXPECT_NE(conv.find("Conv float\n  onednn.quant_conv          producers\n  cpu.depthwise_conv"), std::string::npos) << conv;
  EXPECT_EQ(conv.find("ConvTranspose"), std::string::npos) << conv;
  // an op without implementations of its own runs on the reference kernel
  const std::string other = KernelTable::global().describe("Hardmax");
  EXPECT_NE(other.find("Hardmax any type\n  reference\n"), std::string::npos) << other;
}

}  // namespace
}  // namespace kiln::engine
