#include "engine/threads.h"

#include <omp.h>
#include <unistd.h>

#include <cstdlib>

namespace kiln::engine {

namespace {
// Below these a second thread does not pay for its wake-up (tens of microseconds on a quiet
// machine, far more on a loaded one).
constexpr double kSmallWork = 1 << 20;   // flops
constexpr double kSmallBytes = 1 << 20;  // bytes read and written
constexpr const char* kSpinCount = "2000";
}  // namespace

int threads_for_work(double flops) { return flops < kSmallWork ? 1 : 0; }
int threads_for_bytes(double bytes) { return bytes < kSmallBytes ? 1 : 0; }

ThreadScope::ThreadScope(int n) : previous_(omp_get_max_threads()) {
  if (n > 0) omp_set_num_threads(n);
}

ThreadScope::~ThreadScope() { omp_set_num_threads(previous_); }

void set_openmp_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (setenv("GOMP_SPINCOUNT", kSpinCount, 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace kiln::engine
