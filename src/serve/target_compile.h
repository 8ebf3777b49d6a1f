// One target of a compile job, compiled in a child process: `kiln worker --compile-target DIR`
// reads DIR/request.json and the model it names and writes DIR/artifact.kiln and DIR/result.json.
//
// Why a child: a compile caps kiln's kernels and oneDNN at its target's ISA for the whole process
// (artifact::apply_isa_cap; oneDNN only before its first primitive), so two targets cannot be
// compiled, planned and measured right in one process; and a model that hangs the optimizer,
// crashes a kernel or eats the memory then costs one child, killed at the job's time limit, not
// the worker and the lease of every job after it. It is exec'd (not only forked) so that the
// child starts clean of the worker's threads (OpenMP, libpq, the HTTP pool).
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::serve {

// The child's side: compiles as DIR/request.json says ({"options": CompileRequest JSON, "target",
// "model": the .onnx file, DIR/model.onnx when not given}); with "measure": an artifact file, it
// only measures that artifact against the model (under the target's ISA caps, as the compile
// would) and writes {"measured", "notes"}.
// Returns the exit code (0, or 2 with {"error"} in result.json).
int compile_target_in_dir(const std::filesystem::path& dir);

// How a child process ended.
struct ChildExit {
  int code = -1;             // its exit status when it exited
  int signal = 0;            // the signal it died on, else 0
  bool timed_out = false;    // killed at the time limit
  bool abandoned = false;    // killed because *abandon turned true
  double seconds = 0;
};

// Runs `exe args...` in a process group of its own (it dies with this process), stdout and
// stderr into `log`; kills the group after `timeout_s` or as soon as `*abandon` turns true.
ChildExit run_child(const std::filesystem::path& exe, const std::vector<std::string>& args,
                    const std::filesystem::path& log, int timeout_s, const std::atomic<bool>* abandon);
// The last line of a child's log (300 characters at most), for its one-line error.
std::string last_log_line(const std::filesystem::path& log);
// A file a child process writes (its result, log or report): its bytes, or empty when the child
// did not write it (it died first).
std::string read_child_output(const std::filesystem::path& p);

struct ChildOutcome {
  bool ok = false;           // result.json and artifact.kiln are there
  nlohmann::json result;     // {"manifest", "notes"} or {"error"}
  std::string artifact;      // the bytes, when ok
  std::string error;         // why not, one line
  double seconds = 0;
};

// The parent's side of "measure": the artifact `artifact` of `model` measured in a child in `dir`;
// the manifest's "measured" JSON, or an error.
struct MeasureOutcome {
  nlohmann::json measured;  // null when not measured
  std::string error;
};
MeasureOutcome measure_in_child(const std::filesystem::path& kiln_exe, const std::filesystem::path& dir,
                                const nlohmann::json& options, const std::string& target,
                                const std::filesystem::path& model, const std::filesystem::path& artifact,
                                int timeout_s, const std::atomic<bool>* abandon);

// The parent's side: runs `kiln_exe worker --compile-target DIR`, its output into DIR/log.txt,
// killed (its whole process group) after `timeout_s` or as soon as `*abandon` turns true.
ChildOutcome compile_in_child(const std::filesystem::path& kiln_exe, const std::filesystem::path& dir, int timeout_s,
                              const std::atomic<bool>* abandon);

}  // namespace kiln::serve
