// ThreadBackoff (engine/thread_backoff.h): the threads stay on a quiet machine; two stalled runs
// in a row put the next on one thread, and a later try goes back when the threads are free again.
#include "engine/thread_backoff.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kiln::engine {
namespace {

constexpr int kFull = 2;

void wait_out_the_first_while() { std::this_thread::sleep_for(std::chrono::milliseconds(120)); }

// Two stalls in a row (PP-OCR's classifier beside another kiln: 90 ms for its best 0.6), then the
// first while waited out: the next run is the try of the threads.
void back_off_and_wait_for_the_try(ThreadBackoff& b) {
  b.ran(kFull, kFull, 90.0, 0.6);
  b.ran(kFull, kFull, 95.0, 0.6);
  ASSERT_EQ(b.threads_for_next(kFull), 1);
  wait_out_the_first_while();
  ASSERT_EQ(b.threads_for_next(kFull), kFull);
}

TEST(ThreadBackoff, RunsNearTheirBestKeepTheThreads) {
  ThreadBackoff b;
  for (double ms : {1.0, 2.9, 1.2, 2.5, 1.0}) {
    EXPECT_EQ(b.threads_for_next(kFull), kFull);
    b.ran(kFull, kFull, ms, 1.0);
  }
  b.ran(kFull, kFull, 50.0, 1.0);  // one stall alone is noise
  EXPECT_EQ(b.threads_for_next(kFull), kFull);
  b.ran(kFull, kFull, 50.0, 0.0);  // no best yet: nothing to compare with
  EXPECT_EQ(b.threads_for_next(kFull), kFull);
  EXPECT_EQ(b.runs_on_one(), 0);
}

TEST(ThreadBackoff, TwoStallsInARowGoToOneThreadUntilATryFindsTheThreadsFree) {
  ThreadBackoff b;
  b.ran(kFull, kFull, 90.0, 0.6);
  b.ran(kFull, kFull, 95.0, 0.6);
  ASSERT_EQ(b.threads_for_next(kFull), 1);
  b.ran(1, kFull, 1.1, 0.6);
  EXPECT_EQ(b.threads_for_next(kFull), 1);
  EXPECT_EQ(b.runs_on_one(), 1);
  wait_out_the_first_while();
  ASSERT_EQ(b.threads_for_next(kFull), kFull);  // the try
  b.ran(kFull, kFull, 0.7, 0.6);
  EXPECT_EQ(b.threads_for_next(kFull), kFull);
}

TEST(ThreadBackoff, AStalledTryBacksOffLonger) {
  ThreadBackoff b;
  back_off_and_wait_for_the_try(b);
  b.ran(kFull, kFull, 80.0, 0.6);  // still oversubscribed: a while twice as long
  wait_out_the_first_while();
  EXPECT_EQ(b.threads_for_next(kFull), 1);
}

// Two processes backing off take turns finding the cores free: soon after backing off, the
// stall that says the other one is back on its threads is enough.
TEST(ThreadBackoff, SoonAfterBackingOffOneStallIsEnough) {
  ThreadBackoff b;
  back_off_and_wait_for_the_try(b);
  b.ran(kFull, kFull, 0.7, 0.6);  // free again
  ASSERT_EQ(b.threads_for_next(kFull), kFull);
  b.ran(kFull, kFull, 85.0, 0.6);
  EXPECT_EQ(b.threads_for_next(kFull), 1);
}

// A run of 10 us that an interrupt made 40 is 4x its best but no oversubscription: a preempted
// thread costs a time slice. (Before this floor the MLP, 10 us a run, went to one thread in
// 40-85% of its runs on a quiet machine.)
TEST(ThreadBackoff, ShortRunsSlowedByLessThanATimeSliceAreNoStall) {
  ThreadBackoff b;
  for (int i = 0; i < 10; ++i) b.ran(kFull, kFull, 0.04, 0.01);
  EXPECT_EQ(b.threads_for_next(kFull), kFull);
  b.ran(kFull, kFull, 3.0, 0.01);  // a stall of milliseconds is one, however short the run
  b.ran(kFull, kFull, 3.0, 0.01);
  EXPECT_EQ(b.threads_for_next(kFull), 1);
}

TEST(ThreadBackoff, OneThreadModelsAreLeftAlone) {
  ThreadBackoff b;
  b.ran(1, 1, 90.0, 0.6);
  b.ran(1, 1, 95.0, 0.6);
  EXPECT_EQ(b.threads_for_next(1), 1);
  EXPECT_EQ(b.runs_on_one(), 0);
}

}  // namespace
}  // namespace kiln::engine
