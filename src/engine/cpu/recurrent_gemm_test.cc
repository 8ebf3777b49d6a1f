// recurrent_gemm.h: the StageScheduler runs every block of every stage once, after the whole
// stage before it, and a thread that comes late (as one the OS preempted does) finds its blocks
// taken; PackedRecurrent unpacks to the rows it was made from (the weight cache's contract).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "engine/cpu/recurrent_gemm.h"

namespace kiln::engine::cpu {
namespace {

constexpr int kThreads = 2;
constexpr int64_t kBlocks = 4, kStages = 200;

// Each block of a stage writes the sum of the whole last stage's values plus one: any block run
// before the last stage ended, or twice, shows in the final values.
struct Recurrence {
  std::vector<int64_t> value[2] = {std::vector<int64_t>(kBlocks, 0), std::vector<int64_t>(kBlocks, 0)};
  std::vector<int> runs_by_thread = std::vector<int>(kThreads, 0);

  void stage(int thread, int64_t s, int64_t blk) {
    int64_t sum = 0;
    for (int64_t v : value[s % 2]) sum += v;
    value[(s + 1) % 2][blk] = sum / kBlocks + 1;
    ++runs_by_thread[thread];  // each thread its own counter
  }
};

void run(Recurrence& rec, int late_thread, std::chrono::milliseconds lateness) {
  StageScheduler stages(kThreads, kBlocks);
  on_threads(kThreads, [&](int thread) {
    if (thread == late_thread) std::this_thread::sleep_for(lateness);
    for (int64_t s = 0; s < kStages; ++s)
      stages.run(thread, s, [&](int64_t blk) { rec.stage(thread, s, blk); });
  });
}

TEST(StageScheduler, EveryBlockOfEveryStageRunsOnceAfterTheStageBefore) {
  Recurrence rec;
  run(rec, -1, {});
  for (int64_t v : rec.value[kStages % 2]) EXPECT_EQ(v, kStages);
  EXPECT_EQ(rec.runs_by_thread[0] + rec.runs_by_thread[1], kStages * kBlocks);
}

TEST(StageScheduler, AThreadThatComesLateFindsItsBlocksTaken) {
  Recurrence rec;
  run(rec, 1, std::chrono::milliseconds(50));
  for (int64_t v : rec.value[kStages % 2]) EXPECT_EQ(v, kStages);
  EXPECT_EQ(rec.runs_by_thread[0] + rec.runs_by_thread[1], kStages * kBlocks);
  // 800 trivial blocks take thread 0 microseconds; a barrier per stage would have made it wait
  // for thread 1 and take only its own half.
  EXPECT_GT(rec.runs_by_thread[0], kStages * kBlocks / 2) << "thread 1 ran " << rec.runs_by_thread[1];
}

TEST(PackedRecurrent, UnpacksToTheRowsItWasMadeFrom) {
  for (const auto& [gates, hidden] : {std::pair<int64_t, int64_t>{4, 200}, {1, 37}, {2, 64}}) {
    std::vector<float> r(static_cast<size_t>(gates * hidden * hidden));
    for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(i % 1000) - 500.0f;
    const PackedRecurrent packed(r.data(), gates, hidden);
    std::vector<float> back(r.size(), -1.0f);
    packed.unpack(back.data());
    EXPECT_EQ(back, r) << gates << " gates of " << hidden;
  }
}

}  // namespace
}  // namespace kiln::engine::cpu
