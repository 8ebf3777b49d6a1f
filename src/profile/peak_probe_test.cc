#include "profile/peak_probe.h"

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "support/error.h"

#include <fstream>

namespace kiln {
namespace {

using engine::testing::CacheHome;
std::filesystem::path peak_file(const CacheHome& home) { return home.dir() / "kiln" / "peak.json"; }

TEST(PeakProbe, MeasuresComputeAndBandwidth) {
  const MachinePeak p = measure_peak(1);
  EXPECT_EQ(p.threads, 1);
  EXPECT_FALSE(p.isa.empty());
  EXPECT_FALSE(p.cpu.empty());
  EXPECT_GT(p.gflops, 0.5);  // even a scalar loop on a loaded machine does this
  EXPECT_GT(p.copy_gbps, 0.1);
  EXPECT_GT(p.triad_gbps, 0.1);
  // About 0.3 s on an idle machine in a release build; a Debug sanitizer build on a loaded CI
  // machine took 12 s. The bound only catches a probe that does not end (speed is not a test).
  EXPECT_LT(p.probe_seconds, 120.0);
  EXPECT_FALSE(p.from_cache);
  // int8 runs everywhere (at worst as the AVX2 sequence); bf16 only where it is native. Where
  // both exist they do more per instruction than fp32 FMA (on a loaded machine, at least half).
  EXPECT_FALSE(p.int8_isa.empty());
  if (p.int8_isa != "none") {
    EXPECT_GT(p.int8_gops, 0.5 * p.gflops);
  }
  EXPECT_EQ(p.bf16_native, !p.bf16_isa.empty());
  if (p.bf16_native) {
    EXPECT_GT(p.bf16_gflops, 0.5);
  } else {
    EXPECT_EQ(p.bf16_gflops, 0);
  }
  EXPECT_DOUBLE_EQ(p.roofline().gflops, p.gflops);
  EXPECT_DOUBLE_EQ(p.roofline().gbps, std::max(p.copy_gbps, p.triad_gbps));
}

TEST(PeakProbe, RejectsNonsenseThreadCounts) {
  EXPECT_THROW(measure_peak(0), Error);
}

TEST(PeakCache, MeasuresOnceThenReads) {
  CacheHome home("peak");
  ASSERT_EQ(peak_cache_path(), peak_file(home));
  const MachinePeak first = machine_peak(1, true);
  EXPECT_FALSE(first.from_cache);
  ASSERT_TRUE(std::filesystem::exists(peak_file(home)));
  const MachinePeak second = machine_peak(1, true);
  EXPECT_TRUE(second.from_cache);
  EXPECT_DOUBLE_EQ(second.gflops, first.gflops);
  EXPECT_DOUBLE_EQ(second.triad_gbps, first.triad_gbps);
  EXPECT_EQ(second.isa, first.isa);
  EXPECT_EQ(second.int8_isa, first.int8_isa);
  EXPECT_DOUBLE_EQ(second.int8_gops, first.int8_gops);
  EXPECT_EQ(second.bf16_isa, first.bf16_isa);
  EXPECT_FALSE(machine_peak(1, false).from_cache);  // --no-cache measures again
}

TEST(PeakCache, IgnoresACorruptFile) {
  CacheHome home("peak");
  std::filesystem::create_directories(peak_file(home).parent_path());
  std::ofstream(peak_file(home)) << "{ not json";
  const MachinePeak p = machine_peak(1, true);
  EXPECT_FALSE(p.from_cache);
  EXPECT_GT(p.gflops, 0);
  EXPECT_TRUE(machine_peak(1, true).from_cache);  // rewritten
}

}  // namespace
}  // namespace kiln
