#include "serve/job_worker.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

#include "artifact/artifact.h"
#include "serve/compile_request.h"
#include "serve/target_compile.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln::serve {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Sleeps `ms` in small steps; returns early when `cut` turns true.
void sleep_unless(int64_t ms, const std::atomic<bool>& cut) {
  const auto end = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < end && !cut) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// A target's result from its artifact's manifest: the metrics, the placement and its state.
json target_result(const std::string& target, const json& m, const json& notes) {
  json r = {{"target", target},
            {"compile_seconds", m.value("compile_seconds", 0.0)},
            {"size_bytes", m.value("size_bytes", uint64_t{0})},
            {"backends", m.value("backends", json::array())},
            {"placement", m.value("placement", json::object())},
            {"predicted", m.value("predicted", json::object())},
            {"pipeline", m.value("pipeline", json::array())},
            {"runs_here", m.value("runs_here", false)},
            {"notes", notes},
            {"fallback", nullptr}};
  std::string state = "succeeded";
  if (m.contains("measured")) {
    const json& x = m["measured"];
    r["measured"] = {{"latency_p50_ms", x.value("artifact_p50_ms", 0.0)},
                     {"onnx_p50_ms", x.value("onnx_p50_ms", 0.0)},
                     {"session_creation_ms", x.value("artifact_creation_ms", 0.0)},
                     {"onnx_creation_ms", x.value("onnx_creation_ms", 0.0)},
                     {"runs", x.value("runs", 0)},
                     {"inputs", x.value("inputs", json::object())}};
    r["accuracy"] = {{"outputs_match", x.value("outputs_match", false)},
                     {"outputs", x.value("outputs", json::array())},
                     {"against", "the original .onnx on the fast engine at -O0"}};
    if (!x.value("outputs_match", false)) {
      state = "failed";
      r["error"] = "the artifact's outputs differ from the original model's (see accuracy.outputs)";
    }
  }
  const json fallbacks = m.value("placement", json::object()).value("fallbacks", json::array());
  if (fallbacks.is_array() && !fallbacks.empty()) {  // a backend gave partitions back, as the manifest records it
    r["fallback"] = {{"reason", fallbacks[0].value("reason", std::string())}, {"partitions", fallbacks}};
    if (state == "succeeded") state = "fell-back";
  } else if (!m.value("runs_here", false)) {
    r["fallback"] = {{"reason", m.value("note", std::string("the target does not run on this worker"))}};
    state = "fell-back";
  } else if (m.contains("not_measured")) {
    r["fallback"] = {{"reason", "not measured: " + m["not_measured"].get<std::string>()}};
    state = "fell-back";
  }
  r["state"] = state;
  return r;
}

}  // namespace

std::string default_worker_name(int index) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + std::to_string(index);
}

JobState job_state_of(const json& targets) {
  bool fell_back = false;
  for (const json& t : targets) {
    const std::string s = t.value("state", "failed");
    if (s == "failed") return JobState::kFailed;
    fell_back = fell_back || s == "fell-back";
  }
  return fell_back ? JobState::kFellBack : JobState::kSucceeded;
}

JobWorker::JobWorker(const ServiceStores& stores, WorkerOptions o)
    : stores_(stores), o_(std::move(o)), queue_(stores.open_queue()) {}

void JobWorker::say(const std::string& line) const {
  std::cerr << "kiln worker " + o_.name + ": " + line + "\n" << std::flush;
}

json JobWorker::run_target(const std::string& target, const CompileRequest& r, const Job& job, const fs::path& work,
                           const std::atomic<bool>& lost, std::string& log) {
  const auto t0 = Clock::now();
  const artifact::CompileOptions opts = compile_options(r, target, (work / "model.onnx").string());
  const std::string key = artifact::compile_key(job.spec.model_sha256, opts);
  artifact::ArtifactCache cache(stores_.cache_dir, o_.cache_bytes);
  std::string bytes;
  json manifest, notes = json::array();
  bool hit = false;
  if (auto path = cache.lookup(key)) {
    bytes = read_bytes(*path);
    manifest = artifact::inspect_artifact(*path).manifest.json;
    hit = true;
  } else {
    const fs::path dir = work / target;
    fs::create_directories(dir);
    write_file_atomically(dir / "request.json", json{{"target", target}, {"model", fs::absolute(work / "model.onnx").string()},
                                                    {"options", compile_request_json(r)}}.dump());
    const ChildOutcome c = compile_in_child(o_.kiln_exe, dir, o_.job_timeout_s, &lost);
    if (!c.ok) {
      log += target + ": failed after " + fmt::format("{:.2f}", c.seconds) + " s: " + c.error + "\n";
      return {{"target", target}, {"state", "failed"}, {"error", c.error}, {"cache_hit", false},
              {"seconds", seconds_since(t0)}};
    }
    bytes = c.artifact;
    manifest = c.result["manifest"];
    notes = c.result.value("notes", json::array());
    cache.store(key, bytes);
  }
  const std::string sha = stores_.content->put(bytes);
  json res = target_result(target, manifest, notes);
  res["cache_hit"] = hit;
  res["cache_key"] = key;
  res["seconds"] = seconds_since(t0);
  res["artifact"] = {{"sha256", sha}, {"bytes", bytes.size()}};
  log += fmt::format("{}: {} in {:.2f} s{}, {} bytes\n", target, res["state"].get<std::string>(),
                     res["seconds"].get<double>(), hit ? " (compile cache hit)" : "", bytes.size());
  return res;
}

bool JobWorker::run_one() {
  auto claimed = queue_->claim(o_.name, o_.lease_s);
  if (!claimed) return false;
  const Job job = claimed->first;
  const Lease lease = claimed->second;
  const std::string what = "job " + std::to_string(job.id) + " attempt " + std::to_string(lease.attempt);
  say(what + ": claimed");
  std::atomic<bool> lost{false}, done{false};
  std::thread heartbeat([&] {
    while (!done) {
      sleep_unless(std::max(200, o_.lease_s * 1000 / 3), done);
      if (done) break;
      try {
        if (!queue_->heartbeat(lease, o_.lease_s)) {
          lost = true;
          break;
        }
      } catch (const Error& e) {  // the store unreachable for a moment: the next beat tries again
        say(what + ": heartbeat failed: " + e.what());
      }
    }
  });
  const fs::path work = stores_.data / "work" /
                        fmt::format("job-{}-attempt-{}-{}", job.id, lease.attempt, getpid());
  json targets = json::array();
  std::string log;
  try {
    if (const char* ms = std::getenv("KILN_TEST_JOB_SLEEP_MS")) sleep_unless(std::atoll(ms), lost);
    const CompileRequest r = parse_compile_request(job.spec.request);
    fs::create_directories(work);
    write_file_atomically(work / "model.onnx", stores_.content->get(job.spec.model_sha256));
    for (const std::string& t : r.targets) {
      if (lost) break;
      targets.push_back(run_target(t, r, job, work, lost, log));
    }
  } catch (const Error& e) {
    log += std::string("the job failed: ") + e.what() + "\n";
    targets.push_back({{"state", "failed"}, {"error", e.what()}});
  }
  done = true;
  heartbeat.join();
  std::error_code ec;
  fs::remove_all(work, ec);
  if (lost) {
    say(what + ": lost its lease (taken over); its results are dropped");
    return true;
  }
  const JobState state = job_state_of(targets);
  log += std::string(job_state_name(state)) + " (" + o_.name + ")\n";
  if (queue_->finish(lease, state, {{"targets", targets}}, log)) {
    say(what + ": committed (" + job_state_name(state) + ")");
    if (o_.on_target)
      for (const json& t : targets) o_.on_target(t);
  } else {
    say(what + ": refused at commit: the lease was taken over; its results are dropped");
  }
  return true;
}

void JobWorker::run(const std::atomic<bool>& stop) {
  while (!stop) {
    bool worked = false;
    try {
      worked = run_one();
    } catch (const Error& e) {
      say(std::string("the job store failed: ") + e.what() + " (retrying)");
      sleep_unless(1000, stop);
    }
    if (!worked) sleep_unless(o_.poll_ms, stop);
  }
}

}  // namespace kiln::serve
