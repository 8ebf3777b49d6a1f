// kiln.inspect / optimize / profile / quantization: the command line's own commands (src/cli), run in process on an
// argument list, their stdout and stderr captured, so Python gets exactly what `kiln ... --json`
// prints (python/kiln/tools.py parses it).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "errors.h"
#include "support/error.h"

namespace kiln::python {

namespace py = pybind11;

namespace {

std::mutex& stream_mutex() {
  static std::mutex mu;
  return mu;
}

// std::cout and std::cerr into strings while alive.
class Capture {
 public:
  Capture() : out_old_(std::cout.rdbuf(out_.rdbuf())), err_old_(std::cerr.rdbuf(err_.rdbuf())) {}
  ~Capture() {
    std::cout.flush();
    std::cout.rdbuf(out_old_);
    std::cerr.rdbuf(err_old_);
  }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::ostringstream out_, err_;
  std::streambuf* out_old_;
  std::streambuf* err_old_;
};

}  // namespace

// Runs `kiln ARGS...`; returns (exit code, stdout, stderr). Errors are thrown as the Python
// exceptions of errors.h with the command's message.
py::tuple run_cli(const std::vector<std::string>& args) {
  int rc = 0;
  std::string out, err;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(stream_mutex());
    CLI::App app{"kiln"};
    app.require_subcommand(1);
    std::vector<std::pair<CLI::App*, cli::Action>> commands;
    auto add = [&](const char* name, auto fn) {
      CLI::App* sub = app.add_subcommand(name, name);
      commands.emplace_back(sub, fn(*sub));
    };
    add("inspect", cli::add_inspect);
    add("optimize", cli::add_optimize);
    add("profile", cli::add_profile);
    add("quantize", cli::add_quantize);
    std::vector<std::string> argv_s = {"kiln"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    Capture capture;
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      throw OrtError(OrtCode::kInvalidArgument, std::string("kiln: ") + e.what());
    }
    translate(false, "", [&] {
      for (auto& [sub, action] : commands)
        if (sub->parsed()) rc = action();
    });
    out = capture.out();
    err = capture.err();
  }
  return py::make_tuple(rc, py::bytes(out), py::bytes(err));
}

void register_tools(py::module_& m) {
  m.def("run_cli", &run_cli, "Runs a kiln command in process: (exit code, stdout bytes, stderr bytes)");
}

}  // namespace kiln::python
