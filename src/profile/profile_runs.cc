#include "profile/profile_target.h"
#include "profile/recorder.h"
#include "support/error.h"

namespace kiln {

ProfileData profile_runs(ProfileTarget& target, const std::vector<RtValue>& feeds,
                         const RunCounts& counts) {
  KILN_CHECK(counts.runs >= 1 && counts.warmup >= 0, ErrorKind::kBadInput,
             "profile: {} runs and {} warmup runs; need at least one run", counts.runs,
             counts.warmup);
  target.prepare(feeds);
  ProfileData data;
  data.engine = target.engine();
  data.phases = target.phases();
  if (target.plan()) {
    data.plan_steps = target.plan()->steps;
    data.plan_kernels = target.plan()->kernels;
  }
  for (int i = 0; i < counts.warmup; ++i) {
    const int64_t start = steady_now_ns();
    target.run(feeds, nullptr);
    data.warmup_runs.push_back({start, steady_now_ns()});
  }
  ProfileRecorder recorder(data);
  for (int i = 0; i < counts.runs; ++i) {
    recorder.begin_run();
    target.run(feeds, &recorder);
    recorder.end_run();
  }
  return data;
}

}  // namespace kiln
