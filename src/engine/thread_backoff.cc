#include "engine/thread_backoff.h"

#include <algorithm>

namespace kiln::engine {

int ThreadBackoff::threads_for_next(int full) {
  if (full <= 1 || !backed_off_) return full;
  return Clock::now() < until_ ? 1 : full;  // past the while: one run tries the threads again
}

void ThreadBackoff::back_off(Clock::time_point now) {
  // Soon after the last time: the stalls came back (another process tried its threads again),
  // so a longer while; long after it: a new episode.
  while_ = backed_off_once_ && now - last_back_off_ < kMemory ? std::min(while_ * 2, kLongestWhile) : kFirstWhile;
  backed_off_ = backed_off_once_ = true;
  last_back_off_ = now;
  until_ = now + while_;
}

void ThreadBackoff::ran(int threads, int full, double ms, double best_ms) {
  if (full <= 1 || best_ms <= 0) return;
  const auto now = Clock::now();
  if (threads == 1) {  // backed off
    ++runs_on_one_;
    return;
  }
  if (ms <= kStall * best_ms || ms - best_ms < kMinStallMs) {
    stalls_ = 0;
    backed_off_ = false;  // (a try) the threads are free again
    return;
  }
  ++stalls_;
  // A try that stalls, or a stall soon after backing off, backs off at once; else two in a row.
  if (backed_off_ || stalls_ >= 2 || (backed_off_once_ && now - last_back_off_ < kMemory)) back_off(now);
}

}  // namespace kiln::engine
