#include "serve/job_queue.h"

#include "support/error.h"

namespace kiln::serve {

const char* job_state_name(JobState s) {
  switch (s) {
    case JobState::kQueued: return "queued";
    case JobState::kRunning: return "running";
    case JobState::kSucceeded: return "succeeded";
    case JobState::kFailed: return "failed";
    case JobState::kFellBack: return "fell-back";
  }
  return "queued";
}

JobState parse_job_state(const std::string& s) {
  for (JobState st : {JobState::kQueued, JobState::kRunning, JobState::kSucceeded, JobState::kFailed, JobState::kFellBack})
    if (s == job_state_name(st)) return st;
  fail(ErrorKind::kRuntime, "job store: unknown job state '{}'", s);
}

}  // namespace kiln::serve
