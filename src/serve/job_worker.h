// A worker of kiln serve's compile jobs: claims a job with a lease, keeps the lease alive with
// heartbeats while it works, compiles each target in a child process (target_compile.h) or takes
// it from the compile cache, stores the artifacts in the content store and commits the results
// only while it still holds the lease (job_queue.h says why that is exactly once). `kiln serve`
// runs --workers of these in threads; `kiln worker` runs them alone.
//
// Test-only: KILN_TEST_JOB_SLEEP_MS=N makes the worker wait N ms after each claim (heartbeating),
// so that a test can kill or stop it mid-job deterministically. Nothing else reads it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "artifact/cache.h"
#include "serve/compile_request.h"
#include "serve/job_queue.h"
#include "serve/service_stores.h"

namespace kiln::serve {

struct WorkerOptions {
  std::filesystem::path kiln_exe;  // the executable the compiles run in: kiln itself
  std::string name;                // in the job's log and the store: host:pid:index
  int lease_s = 30;                // heartbeats every third of it
  int job_timeout_s = 900;         // the time limit of one target's compile
  int poll_ms = 250;               // the wait between claims when the queue is empty
  uint64_t cache_bytes = artifact::kDefaultCacheBytes;
  // Called with each target's result of a job this worker committed (the server's metrics).
  std::function<void(const nlohmann::json& target_result)> on_target;
};

class JobWorker {
 public:
  JobWorker(const ServiceStores& stores, WorkerOptions o);
  // Claims and runs one job; false when there was none to claim.
  bool run_one();
  // Runs jobs until `stop`; errors of the store (a database restarting) are said on stderr and
  // retried.
  void run(const std::atomic<bool>& stop);

 private:
  // One target of `model` (the job's .onnx, or its quantized model), of content sha256 `model_sha256`.
  nlohmann::json run_target(const std::string& target, const CompileRequest& r, const std::filesystem::path& model,
                            const std::string& model_sha256, const std::filesystem::path& work,
                            const std::atomic<bool>& lost, std::string& log);
  // kiln analyze's HTML page of the model for the job's targets (a child process), in the content
  // store: {"analyze": sha256}; empty when it could not be made (said in the log).
  nlohmann::json analyze_report(const std::filesystem::path& model, const CompileRequest& r,
                                const std::filesystem::path& work, const std::atomic<bool>& lost, std::string& log);
  void say(const std::string& line) const;

  const ServiceStores& stores_;
  WorkerOptions o_;
  std::unique_ptr<JobQueue> queue_;
};

// "host:pid:index".
std::string default_worker_name(int index);
// The job's state from its targets' states: failed if any failed, else fell-back if any fell back.
JobState job_state_of(const nlohmann::json& targets);

}  // namespace kiln::serve
