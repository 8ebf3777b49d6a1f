// kiln: the command line. Exit codes: 0 success, 1 a check failed, 2 bad input (one line on stderr).
#include <cstdio>
#include <iostream>

#include "engine/threads.h"
#include "support/error.h"
#include "tools/commands.h"

namespace {

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
  std::vector<std::pair<CLI::App*, kiln::tools::Action>> commands;
  auto add = [&](const char* name, const char* help, auto fn) {
    CLI::App* sub = app.add_subcommand(name, help);
    commands.emplace_back(sub, fn(*sub));
  };
  add("inspect", "Inputs, outputs, opsets, op histogram, parameters, FLOPs and problems of a model",
      kiln::tools::add_inspect);
  add("run", "Run a model on input_N.pb files and write output_N.pb files", kiln::tools::add_run);
  add("optimize", "Optimize a model into a portable ONNX file, with a rewrite record and verification",
      kiln::tools::add_optimize);
  add("profile", "Run a model N times and report where the time goes (table, JSON, trace, HTML)",
      kiln::tools::add_profile);
  add("bench", "Session creation time, latency percentiles, throughput and peak memory of a model",
      kiln::tools::add_bench);
  add("test", "Run ONNX backend test cases (CASE/model.onnx + CASE/test_data_set_N/)",
      kiln::tools::add_test);
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
    std::cerr << "kiln: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "kiln: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "kiln: internal error: " << one_line(e.what()) << "\n";
    return 2;
  }
  return 0;
}
