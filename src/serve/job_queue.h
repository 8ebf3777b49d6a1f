// The compile job queue of kiln serve: jobs queued by the server, claimed by workers with a lease,
// kept alive by heartbeats, finished with their results. Two implementations: SQLite (one machine,
// in-process workers; sqlite_job_queue.cc) and PostgreSQL (workers on several machines;
// postgres_job_queue.cc).
//
// Exactly once: every claim raises the job's attempt number, and a heartbeat or a finish names the
// attempt it holds (the lease); the store takes it only while that attempt is the job's current
// one and the job is running. A worker that dies (or stalls past its lease) loses the job to the
// next claim once the lease has expired, and whatever it sends afterwards is refused, so the
// results of exactly one attempt are committed. A job whose lease expired kMaxAttempts times
// (a model that kills its workers) fails instead of being claimed again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::serve {

inline constexpr int kMaxAttempts = 3;

enum class JobState { kQueued, kRunning, kSucceeded, kFailed, kFellBack };
const char* job_state_name(JobState s);  // "queued", "running", "succeeded", "failed", "fell-back"
JobState parse_job_state(const std::string& s);

// What a compile job is asked: a model version and its compile request (targets and options).
struct JobSpec {
  std::string model;
  int64_t version = 0;
  std::string model_sha256;
  nlohmann::json request;  // {"targets": [...], "shapes": [...], "level": 2, ...}
};

struct Job {
  int64_t id = 0;
  JobSpec spec;
  JobState state = JobState::kQueued;
  int64_t attempt = 0;           // claims so far
  std::string worker;            // the worker of the current (or last) attempt
  int64_t lease_expires_ms = 0;  // the store's clock, ms since the epoch; 0 when not running
  nlohmann::json results;        // per target, once finished
  std::string log;
  int64_t created = 0, started = 0, finished = 0;  // seconds since the epoch; 0: not yet
};

// A claim: the job and the attempt the worker holds.
struct Lease {
  int64_t job = 0;
  int64_t attempt = 0;
  std::string worker;
};

class JobQueue {
 public:
  virtual ~JobQueue() = default;
  virtual int64_t enqueue(const JobSpec& spec) = 0;
  // The newest `limit` jobs, newest first (the web page's list, GET /v1/jobs).
  virtual std::vector<Job> recent_jobs(int limit) = 0;
  // The oldest job that is queued or whose lease has expired, now running under a new attempt
  // held by `worker` for `lease_s` seconds; nullopt when there is none. Jobs whose lease expired
  // kMaxAttempts times are failed first (reclaim_expired).
  virtual std::optional<std::pair<Job, Lease>> claim(const std::string& worker, int lease_s) = 0;
  // Extends the lease; false when it is no longer the job's current attempt (taken over).
  virtual bool heartbeat(const Lease& lease, int lease_s) = 0;
  // Commits the results (and the attempt's log) when `lease` is still current; false (nothing
  // written) when it is not.
  virtual bool finish(const Lease& lease, JobState state, const nlohmann::json& results, const std::string& log) = 0;
  // Fails the running jobs whose lease expired after kMaxAttempts claims; returns how many.
  virtual int reclaim_expired() = 0;
  virtual std::optional<Job> job(int64_t id) = 0;
  // How many jobs are in each state now, by job_state_name (the metrics' queue depth).
  virtual std::map<std::string, int64_t> count_by_state() = 0;
};

}  // namespace kiln::serve
