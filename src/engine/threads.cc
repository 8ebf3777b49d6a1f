#include "engine/threads.h"

#include <omp.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace kiln::engine {

namespace {
// Below these a second thread does not pay for its wake-up (tens of microseconds on a quiet
// machine, far more on a loaded one).
constexpr double kSmallWork = 1 << 20;   // flops
constexpr double kSmallBytes = 1 << 20;  // bytes read and written
// libgomp's spin before a worker sleeps: long where the cores are ours (the next step's wake-up is
// then free), short where other processes want them (a spinning worker takes their core).
constexpr const char* kSpinQuiet = "200000";
constexpr const char* kSpinBusy = "2000";

// Whether no other process wants a core now: /proc/loadavg's running count (this process
// included) sampled a few times, and the minute's load average below the core count.
bool machine_is_quiet() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 0; i < 5; ++i) {
    std::ifstream f("/proc/loadavg");
    double load1 = 0, load5 = 0, load15 = 0;
    int running = 0;
    char slash = 0;
    if (!(f >> load1 >> load5 >> load15 >> running >> slash) || running > 1 || load1 >= cores)
      return false;
    usleep(2000);
  }
  return true;
}
}  // namespace

int threads_for_work(double flops) { return flops < kSmallWork ? 1 : 0; }
int threads_for_bytes(double bytes) { return bytes < kSmallBytes ? 1 : 0; }

ThreadScope::ThreadScope(int n) : previous_(omp_get_max_threads()) {
  if (n > 0) omp_set_num_threads(n);
}

ThreadScope::~ThreadScope() { omp_set_num_threads(previous_); }

void set_openmp_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (setenv("GOMP_SPINCOUNT", machine_is_quiet() ? kSpinQuiet : kSpinBusy, 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace kiln::engine
