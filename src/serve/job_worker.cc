#include "serve/job_worker.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "artifact/load/artifact.h"
#include "serve/compile_request.h"
#include "serve/model_quantize.h"
#include "serve/target_compile.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "support/read_file.h"

namespace kiln::serve {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

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
                     {"inputs", x.value("inputs", json::object())},
                     {"plan", x.value("plan", json::object())}};
    // A latency made of the reference kernels says so: no fast kernel took those nodes at this
    // target's ISA (e.g. int8 MatMulInteger without VNNI), which the p50 alone does not tell.
    const json kernels = x.value("plan", json::object()).value("kernels", json::object());
    if (const int slow = kernels.value("reference", 0); slow > 0)
      r["notes"].push_back(fmt::format("measured with {} of {} plan steps on the reference kernels (no fast kernel "
                                       "takes their nodes at this target's ISA): its latency is theirs",
                                       slow, x["plan"].value("steps", 0)));
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

json JobWorker::run_target(const std::string& target, const CompileRequest& r, const fs::path& model,
                           const std::string& model_sha256, const fs::path& work, const std::atomic<bool>& lost,
                           std::string& log) {
  const auto t0 = Clock::now();
  const artifact::CompileOptions opts = compile_options(r, target, model.string());
  const std::string key = artifact::compile_key(model_sha256, opts);
  artifact::ArtifactCache cache(stores_.cache_dir, o_.cache_bytes);
  std::string bytes;
  json manifest, notes = json::array();
  bool hit = false;
  if (auto path = cache.lookup(key)) {
    bytes = read_file(*path);
    manifest = artifact::inspect_artifact(*path).manifest.json;
    hit = true;
    if (r.measure_hits && r.runs > 0 && manifest.value("runs_here", false)) {  // measured again, now
      const fs::path dir = work / (target + "-measure");
      fs::create_directories(dir);
      write_file_atomically(dir / "artifact.kiln", bytes);
      const MeasureOutcome m = measure_in_child(o_.kiln_exe, dir, compile_request_json(r), target, model,
                                                dir / "artifact.kiln", o_.job_timeout_s, &lost);
      if (!m.measured.is_null()) {
        manifest["measured"] = m.measured;
        manifest["measured_again"] = true;
      } else {
        log += target + ": not measured again: " + m.error + "\n";
      }
    }
  } else {
    const fs::path dir = work / target;
    fs::create_directories(dir);
    write_file_atomically(dir / "request.json", json{{"target", target}, {"model", fs::absolute(model).string()},
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
  if (manifest.value("measured_again", false)) res["measured"]["again"] = true;  // not the compile's figures
  res["cache_key"] = key;
  res["seconds"] = seconds_since(t0);
  res["artifact"] = {{"sha256", sha}, {"bytes", bytes.size()}};
  log += fmt::format("{}: {} in {:.2f} s{}, {} bytes\n", target, res["state"].get<std::string>(),
                     res["seconds"].get<double>(), hit ? " (compile cache hit)" : "", bytes.size());
  return res;
}

json JobWorker::analyze_report(const fs::path& model, const CompileRequest& r, const fs::path& work,
                               const std::atomic<bool>& lost, std::string& log) {
  std::string targets;
  for (const std::string& t : r.targets) targets += (targets.empty() ? "" : ",") + t;
  const fs::path html = work / "analyze.html";
  const ChildExit e = run_child(o_.kiln_exe,
                                {"analyze", model.string(), "--targets", targets, "-O", std::to_string(r.level),
                                 "--html", html.string()},
                                work / "analyze.log", o_.job_timeout_s, &lost);
  std::error_code ec;
  if (e.code != 0 || !fs::exists(html, ec)) {
    log += "no analyze report: " + last_log_line(work / "analyze.log") + "\n";
    return json::object();
  }
  return {{"analyze", stores_.content->put(read_file(html))}};
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
    fs::path model = work / "model.onnx";
    std::string model_sha = job.spec.model_sha256;
    std::optional<QuantizedModel> quantized;
    if (r.quantize) {  // the targets compile the quantized model
      quantized = quantize_for_job(stores_, o_.kiln_exe, model_sha, r, work, o_.job_timeout_s, &lost);
      log += fmt::format("quantized ({}) in {:.2f} s{}: model {}\n", r.quantize->mode, quantized->seconds,
                         quantized->cache_hit ? " (cached)" : "", quantized->sha256.substr(0, 16));
      model = work / "quantized.onnx";
      model_sha = quantized->sha256;
      write_file_atomically(model, stores_.content->get(model_sha));
    }
    const json reports = analyze_report(model, r, work, lost, log);
    for (const std::string& t : r.targets) {
      if (lost) break;
      json res = run_target(t, r, model, model_sha, work, lost, log);
      if (!reports.empty()) res["reports"] = reports;
      if (quantized) {
        res["quantize"] = quantize_result_json(*quantized, *r.quantize);
        if (res.contains("accuracy"))
          res["accuracy"]["against"] = "the quantized .onnx on the fast engine at -O0 (quantize.accuracy: "
                                       "the quantized model against the float original)";
      }
      targets.push_back(std::move(res));
    }
  } catch (const Error& e) {
    log += std::string("the job failed: ") + e.what() + "\n";
    // Every target not done fails with the reason (the quantization refused, the model missing ...).
    const json named = job.spec.request.value("targets", json::array());
    const size_t done_targets = targets.size();
    for (size_t i = done_targets; i < named.size(); ++i)
      if (named[i].is_string()) targets.push_back({{"target", named[i]}, {"state", "failed"}, {"error", e.what()}});
    if (targets.empty()) targets.push_back({{"state", "failed"}, {"error", e.what()}});
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
