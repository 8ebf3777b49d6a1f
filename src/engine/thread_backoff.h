// Runs on one thread while the cores are oversubscribed. libgomp's workers spin between parallel
// regions (GOMP_SPINCOUNT: engine/threads.h) and every region ends in a barrier, so where more
// threads want the cores than there are (a second kiln process of as many threads beside this
// one), a region waits for a thread the OS has preempted while a spinning one holds its core:
// PP-OCR's classifier beside another kiln process of 2 threads on 2 cores ran 88-96 ms where it
// runs 0.6 (docs/benchmarks.md, "Beside another process"). One thread has no region to wait in.
//
// A run at the model's threads taking more than kStall times its plan's best, and kMinStallMs
// more, counts as a stall (a preempted thread costs the OS's time slice, a millisecond or so; a
// run of 10 us that an interrupt made 30 is not one: before that floor the MLP went to one thread
// in 40-85% of its runs on a quiet machine);
// two in a row put the next runs on one thread. After a while one run tries the threads again:
// back to them when it is not a stall. Two processes backing off take turns finding the cores
// free, so within kMemory of the last backing off one stall is enough and the while doubles
// (0.1 s up to 5 s): under lasting contention a stall costs a run every few seconds. On a quiet
// machine no run is 3x its best and nothing changes.
#pragma once

#include <chrono>
#include <cstdint>

namespace kiln::engine {

class ThreadBackoff {
 public:
  static constexpr double kStall = 3.0;
  static constexpr double kMinStallMs = 0.5;

  // The threads for the next run: `full` (the model's), or 1 while backing off.
  int threads_for_next(int full);
  // A run took `ms` on `threads` of `full`; `best_ms` is its plan's fastest on `full` so far (0:
  // none yet).
  void ran(int threads, int full, double ms, double best_ms);
  int64_t runs_on_one() const { return runs_on_one_; }  // runs backing off put on one thread

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kFirstWhile{100}, kLongestWhile{5000}, kMemory{10000};
  void back_off(Clock::time_point now);

  bool backed_off_ = false;
  bool backed_off_once_ = false;
  Clock::time_point last_back_off_{};
  int stalls_ = 0;                 // stalls in a row on the full threads
  std::chrono::milliseconds while_ = kFirstWhile;
  Clock::time_point until_{};      // backed off: when to try the threads again
  int64_t runs_on_one_ = 0;
};

}  // namespace kiln::engine
