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

// Whether other work keeps the cores busy: the minute's load average above 1.5 times the cores.
// A sustained signal on purpose: sampling the running count misfired whenever a process started
// next to kiln (the other end of a pipe, the last benchmark's exit), and with the short spin
// every parallel region then paid a wake-up (PP-OCR's classifier 0.55 -> 1.8 ms). kiln's own two
// threads and a benchmark alternating with ONNX Runtime keep the load near the core count.
bool machine_is_quiet() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  std::ifstream f("/proc/loadavg");
  double load1 = 0;
  return !(f >> load1) || load1 <= 1.5 * static_cast<double>(cores);
}
}  // namespace

int threads_for_work(double flops) { return flops < kSmallWork ? 1 : kPlanThreads; }
int threads_for_bytes(double bytes) { return bytes < kSmallBytes ? 1 : kPlanThreads; }

int current_threads() { return omp_get_max_threads(); }

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
