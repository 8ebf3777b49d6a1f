// kiln test: ONNX backend test cases, each run in a child process so that one crash or hang
// cannot take the others with it.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "backend/engine_placement.h"
#include "cli/commands.h"
#include "cli/test_data.h"
#include "engine/runner.h"
#include "frontend/runners.h"
#include "ir/walk.h"
#include "ops/op.h"
#include "runtime/compare.h"
#include "spec/type_constraints.h"
#include "support/error.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

void find_cases(const fs::path& p, std::vector<fs::path>& out, int depth = 0) {
  if (fs::exists(p / "model.onnx")) {
    out.push_back(p);
    return;
  }
  KILN_CHECK(fs::is_directory(p), ErrorKind::kBadInput, "'{}' is not a test case or a folder of them",
             p.string());
  if (depth > 4) return;
  std::vector<fs::path> children;
  for (const auto& e : fs::directory_iterator(p))
    if (e.is_directory()) children.push_back(e.path());
  std::sort(children.begin(), children.end());
  for (const auto& c : children) find_cases(c, out, depth + 1);
}

bool has_random_ops(const Graph& g) {
  bool random = false;
  for_each_nested_node(g, [&](const Node& n) {
    const OpSchema* s = OpRegistry::global().find(n.domain, n.op_type);
    random |= s && !s->deterministic;
  });
  return random;
}

// Runs one case; returns "" on success or the reason it failed.
std::string run_case(const fs::path& dir, const Tolerance& tol, engine::EngineKind kind,
                     bool allow_newer_opset, const BackendFlags& backends) {
  try {
    auto session = frontend::open_model(
        dir / "model.onnx", kind,
        {.allow_newer_opset = allow_newer_opset,
         .placement = backend::make_placement(backends.backends, backends.strict, 0)});
    const bool shape_only = has_random_ops(*session->model().graph);
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) return "no test_data_set_N folder";
    for (const auto& set : sets) {
      auto feeds = read_values(set, "input", session->inputs());
      auto expected = read_values(set, "output", session->outputs());
      auto actual = session->run(feeds);
      for (size_t i = 0; i < expected.size(); ++i) {
        Comparison c = compare_values(actual[i], expected[i], tol, shape_only);
        if (!c.equal)
          return fmt::format("{}: output {} '{}': {}", set.filename().string(), i,
                             session->outputs()[i]->name, c.reason);
      }
    }
    return "";
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("internal error: ") + e.what();
  }
}

// Forks, runs the case in the child, reads its verdict through a pipe; kills it after `timeout_s`.
std::string run_case_isolated(const fs::path& dir, const Tolerance& tol, int timeout_s,
                              engine::EngineKind kind, bool allow_newer_opset,
                              const BackendFlags& backends) {
  int fds[2];
  if (pipe(fds) != 0) return run_case(dir, tol, kind, allow_newer_opset, backends);
  std::cout.flush();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string r = run_case(dir, tol, kind, allow_newer_opset, backends);
    if (r.empty()) r = "\x01";  // success marker: an empty message would read as a crash
    (void)!write(fds[1], r.data(), r.size());
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) { timed_out = true; break; }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000))) <= 0) continue;
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got <= 0) break;
    msg.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) return fmt::format("timed out after {} s", timeout_s);
  if (WIFSIGNALED(status)) return fmt::format("crashed with signal {}", WTERMSIG(status));
  if (msg.empty()) return "the case produced no verdict";
  return msg == "\x01" ? "" : msg;
}

std::map<std::string, std::string> read_manifest(const std::string& path) {
  std::map<std::string, std::string> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  KILN_CHECK(in.good(), ErrorKind::kBadInput, "cannot read '{}'", path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find_first_of(" \t");
    std::string name = line.substr(0, sp);
    std::string reason = sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t#", sp));
    out[name] = reason;
  }
  return out;
}

}  // namespace

Action add_test(CLI::App& app) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto tol = std::make_shared<Tolerance>();
  auto manifest = std::make_shared<std::string>();
  auto write_failures = std::make_shared<std::string>();
  auto timeout = std::make_shared<int>(120);
  auto verbose = std::make_shared<bool>(false);
  auto newer_opset = std::make_shared<bool>(false);
  auto engine_name = std::make_shared<std::string>("fast");
  app.add_option("paths", *paths, "Test case folders, or folders holding them")->required();
  app.add_option("--rtol", tol->rtol, "Relative tolerance (default 1e-3)");
  app.add_option("--atol", tol->atol, "Absolute tolerance (default 1e-7)");
  app.add_option("--expected-failures", *manifest,
                 "File of case names expected to fail, each with its reason");
  app.add_option("--write-failures", *write_failures, "Write the names of failing cases here");
  app.add_option("--timeout", *timeout, "Seconds one case may take (default 120)");
  app.add_flag("-v,--verbose", *verbose, "Print every case");
  app.add_option("--engine", *engine_name, "fast (default: oneDNN and CPU kernels) or reference");
  add_allow_newer_opset(app, *newer_opset);
  auto placement = std::make_shared<BackendFlags>();
  add_backend_flags(app, *placement);
  return [=]() {
    const auto kind = engine::parse_engine_kind(*engine_name);
    std::vector<fs::path> cases;
    for (const auto& p : *paths) find_cases(p, cases);
    const auto expected = read_manifest(*manifest);
    load_onnx_schemas();  // once here, not in every forked case
    int passed = 0, failed = 0, xfail = 0;
    std::vector<std::string> failing;
    for (const auto& c : cases) {
      const std::string name = c.filename().string();
      const std::string why = run_case_isolated(c, *tol, *timeout, kind, *newer_opset, *placement);
      const bool listed = expected.contains(name);
      if (why.empty() && !listed) {
        ++passed;
        if (*verbose) std::cout << "ok   " << name << "\n";
      } else if (why.empty()) {
        ++failed;
        std::cout << "XPASS " << name << ": passes but is listed in the expected failures\n";
      } else if (listed) {
        ++xfail;
        failing.push_back(name);
        if (*verbose) std::cout << "xfail " << name << ": " << why << "\n";
      } else {
        ++failed;
        failing.push_back(name);
        std::string line = why;
        for (char& ch : line)
          if (ch == '\n') ch = ' ';
        std::cout << "FAIL " << name << ": " << line << "\n";
      }
      std::cout.flush();
    }
    if (!write_failures->empty()) {
      std::ofstream out(*write_failures);
      for (const auto& f : failing) out << f << "\n";
    }
    std::cout << fmt::format("{} passed, {} failed", passed, failed)
              << (xfail ? fmt::format(", {} skipped", xfail) : "") << "\n";
    return failed ? 1 : 0;
  };
}

}  // namespace kiln::cli
