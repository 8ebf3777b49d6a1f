// kiln: the command line. Exit codes: 0 success, 1 a check failed, 2 bad input (one line on stderr),
// 3 an internal error: a bug in kiln, not in what it was given.
#include <cstdio>
#include <iostream>

#include "cli/ci_command.h"
#include "cli/commands.h"
#include "cli/serve_command.h"
#include "cli/token_command.h"
#include "cli/worker_command.h"
#include "engine/threads.h"
#include "support/error.h"

namespace {

// A bug in kiln (KILN_ASSERT, ErrorKind::kInternal), kept apart from bad input (2) so that a
// caller, the hostile corpus or a fuzzer's driver, can tell the two apart.
constexpr int kExitInternal = 3;

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  kiln::engine::set_openmp_wait_policy(argv);
  CLI::App app{"kiln: ONNX optimizing compiler and CPU runtime"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, kiln::cli::Action>> commands;
  auto add = [&](const char* name, const char* help, auto fn) {
    CLI::App* sub = app.add_subcommand(name, help);
    commands.emplace_back(sub, fn(*sub));
  };
  add("inspect", "Inputs, outputs, opsets, op histogram, parameters, FLOPs and problems of a model",
      kiln::cli::add_inspect);
  add("analyze", "Op support and placement per target and backend: reasons, partitions, boundary copies",
      kiln::cli::add_analyze);
  add("run", "Run a model on input_N.pb files and write output_N.pb files", kiln::cli::add_run);
  add("optimize", "Optimize a model into a portable ONNX file, with a rewrite record and verification",
      kiln::cli::add_optimize);
  add("profile", "Run a model N times and report where the time goes (table, JSON, trace, HTML)",
      kiln::cli::add_profile);
  add("bench", "Session creation time, latency percentiles, throughput and peak memory of a model",
      kiln::cli::add_bench);
  add("compile", "Compile a model into an artifact for a target (x86-64 levels, aarch64): optimized "
      "graph, pre-packed weights, declared shapes, manifest",
      kiln::cli::add_compile);
  add("quantize", "Quantize a model: int8 (dynamic, static QDQ or QOperator), fp16 or bf16, with its error and speed",
      kiln::cli::add_quantize);
  add("test", "Run ONNX backend test cases (CASE/model.onnx + CASE/test_data_set_N/)",
      kiln::cli::add_test);
  add("serve", "Serve a model registry over HTTP: upload, inspect, run and compile models (docs/service.md)",
      kiln::cli::add_serve);
  add("worker", "Run kiln serve's compile jobs (from --db or --data) without serving HTTP (docs/service.md)",
      kiln::cli::add_worker);
  add("ci", "Gate a model in CI: compile for the pipeline's targets, verify accuracy, compare latency with "
      "the alias's version, exit 0/1, promote (docs/service.md)",
      kiln::cli::add_ci);
  add("token", "Access tokens of kiln serve: kiln token create --data DIR --scope read|write|admin",
      kiln::cli::add_token);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kiln: " << one_line(e.what()) << " (see kiln --help)\n";
    return 2;
  }
  try {
    for (auto& [sub, action] : commands)
      if (sub->parsed()) return action();
  } catch (const kiln::Error& e) {
    if (e.kind() == kiln::ErrorKind::kInternal) {
      std::cerr << "kiln: " << one_line(e.what()) << " (please report it)\n";
      return kExitInternal;
    }
    std::cerr << "kiln: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "kiln: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {  // no kiln::Error: something kiln did not check for
    std::cerr << "kiln: internal error (a bug in kiln): " << one_line(e.what())
              << " (please report it)\n";
    return kExitInternal;
  }
  return 0;
}
