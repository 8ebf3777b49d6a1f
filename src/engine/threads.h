// Threads: OpenMP (libgomp), one pool shared with oneDNN. Big steps use the plan's threads; small
// ones run on one, where a parallel region would cost more than it saves.
#pragma once

#include <cstdint>

namespace kiln::engine {

// A step's threads when it uses the plan's (all of them). Not 0: a step's 0 means it has not
// chosen, and Lowering::add then chooses by the bytes the step moves.
constexpr int kPlanThreads = -1;

// The threads for a step of `flops` arithmetic: 1 when small, else kPlanThreads.
int threads_for_work(double flops);
// The same for a memory-bound step moving `bytes`.
int threads_for_bytes(double bytes);

// The threads a parallel region would run on now (the plan's, or a ThreadScope's).
int current_threads();

// Sets the OpenMP thread count for a scope (n > 0), restoring the previous one after.
class ThreadScope {
 public:
  explicit ThreadScope(int n);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_ = 0;
};

// libgomp reads its wait policy once, before main. Spinning workers fight for the cores on a
// loaded machine (and lose there badly) but save a wake-up per step on a quiet one, so kiln
// looks: when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, the process re-executes itself
// once with GOMP_SPINCOUNT long unless the minute's load average is above 1.5x the cores. Call first
// thing in main; returns when nothing needs to change (or the re-execution failed).
void set_openmp_wait_policy(char** argv);

}  // namespace kiln::engine
