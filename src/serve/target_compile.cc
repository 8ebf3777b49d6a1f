#include "serve/target_compile.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "artifact/compile.h"
#include "artifact/measure.h"
#include "target/target.h"
#include "serve/compile_request.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "support/read_file.h"

namespace kiln::serve {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {


std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const auto nl = t.rfind('\n');
  std::string line = nl == std::string::npos ? t : t.substr(nl + 1);
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace

int compile_target_in_dir(const fs::path& dir) {
  json result;
  int code = 0;
  try {
    const json req = json::parse(read_child_output(dir / "request.json"), nullptr, false);
    KILN_CHECK(req.is_object() && req.contains("options") && req.contains("target"), ErrorKind::kBadInput,
               "--compile-target '{}': no request.json of a compile job there", dir.string());
    const CompileRequest r = parse_compile_request(req["options"]);
    if (req.contains("measure")) {  // an artifact of the cache, measured again
      const std::string target = req["target"].get<std::string>(), model = req.value("model", (dir / "model.onnx").string());
      std::vector<std::string> notes;
      KILN_CHECK(missing_on_host(find_target(target)).empty(), ErrorKind::kBadInput,
                 "target {} does not run here: nothing to measure", target);
      if (std::string p = apply_isa_cap(find_target(target)); !p.empty()) notes.push_back(p);
      const json m = artifact::measure_artifact(read_file(req["measure"].get<std::string>()), read_file(model),
                                                fs::path(model).parent_path(), compile_options(r, target, model), notes);
      write_file_atomically(dir / "result.json", json{{"measured", m}, {"notes", notes}}.dump());
      return 0;
    }
    const artifact::CompileResult c =
        artifact::compile(compile_options(r, req["target"].get<std::string>(),
                                          req.value("model", (dir / "model.onnx").string())));
    write_file_atomically(dir / "artifact.kiln", c.bytes);
    result = {{"manifest", c.manifest.json}, {"notes", c.notes}, {"runs_here", c.runs_here}};
  } catch (const Error& e) {
    result = {{"error", e.what()}, {"internal", e.kind() == ErrorKind::kInternal}};
    code = 2;
  } catch (const std::exception& e) {
    result = {{"error", std::string("internal error (a bug in kiln): ") + e.what()}, {"internal", true}};
    code = 3;
  }
  write_file_atomically(dir / "result.json", result.dump(-1, ' ', false, json::error_handler_t::replace));
  return code;
}

ChildExit run_child(const fs::path& exe, const std::vector<std::string>& args, const fs::path& log_path, int timeout_s,
                    const std::atomic<bool>* abandon) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  ChildExit out;
  const std::string exe_s = exe.string(), log = log_path.string();
  std::vector<char*> argv = {const_cast<char*>(exe_s.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) fail(ErrorKind::kRuntime, "cannot start a child process: {}", std::strerror(errno));
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the worker killed: its child goes too
    if (getppid() != parent) _exit(127);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(exe_s.c_str(), argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    const bool late = Clock::now() - t0 > std::chrono::seconds(timeout_s);
    const bool give_up = abandon && abandon->load();
    if ((late || give_up) && !out.timed_out && !out.abandoned) {
      kill(-pid, SIGKILL);
      out.timed_out = late;
      out.abandoned = !late;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  if (WIFEXITED(status)) out.code = WEXITSTATUS(status);
  return out;
}

std::string last_log_line(const fs::path& log) { return last_line(read_child_output(log)); }

std::string read_child_output(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) ? read_file(p) : std::string();
}

MeasureOutcome measure_in_child(const fs::path& kiln_exe, const fs::path& dir, const json& options, const std::string& target,
                                const fs::path& model, const fs::path& artifact, int timeout_s,
                                const std::atomic<bool>* abandon) {
  MeasureOutcome out;
  fs::create_directories(dir);
  write_file_atomically(dir / "request.json",
                        json{{"target", target}, {"model", fs::absolute(model).string()},
                             {"measure", fs::absolute(artifact).string()}, {"options", options}}.dump());
  const ChildExit e = run_child(kiln_exe, {"worker", "--compile-target", dir.string()}, dir / "log.txt", timeout_s, abandon);
  const json r = json::parse(read_child_output(dir / "result.json"), nullptr, false);
  if (e.timed_out || e.abandoned || e.signal || !r.is_object())
    out.error = "the measurement did not finish: " + last_line(read_child_output(dir / "log.txt"));
  else if (r.contains("error"))
    out.error = r["error"].get<std::string>();
  else
    out.measured = r["measured"];
  return out;
}

ChildOutcome compile_in_child(const fs::path& kiln_exe, const fs::path& dir, int timeout_s, const std::atomic<bool>* abandon) {
  ChildOutcome out;
  const ChildExit e = run_child(kiln_exe, {"worker", "--compile-target", dir.string()}, dir / "log.txt", timeout_s, abandon);
  out.seconds = e.seconds;
  if (e.timed_out) {
    out.error = "the compile ran past the job time limit (" + std::to_string(timeout_s) + " s) and was stopped";
    return out;
  }
  if (e.abandoned) {
    out.error = "the compile was stopped: this worker lost the job's lease";
    return out;
  }
  out.result = json::parse(read_child_output(dir / "result.json"), nullptr, false);
  if (e.signal) {
    out.error = "the compile process died on signal " + std::to_string(e.signal) + " (" + strsignal(e.signal) + ")";
    return out;
  }
  if (out.result.is_discarded() || !out.result.is_object()) {
    out.error = "the compile process exited " + std::to_string(e.code) + " without a result: " +
                last_line(read_child_output(dir / "log.txt"));
    return out;
  }
  if (out.result.contains("error")) {
    out.error = out.result["error"].get<std::string>();
    return out;
  }
  out.artifact = read_child_output(dir / "artifact.kiln");
  out.ok = !out.artifact.empty();
  if (!out.ok) out.error = "the compile process wrote no artifact";
  return out;
}

}  // namespace kiln::serve
