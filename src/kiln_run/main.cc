// kiln-run: the runtime alone. Loads a compiled artifact (.kiln) and runs it on a folder of
// input_N.pb files, writing output_N.pb files, as `kiln run ARTIFACT` does; no optimizer, no
// compile, no command-line library. It is what the aarch64 build makes (`make aarch64`,
// docs/artifact.md "aarch64"), and scripts/run-aarch64.sh runs it under qemu.
//
//   kiln-run ARTIFACT --inputs DIR --outputs DIR [--threads N]
//
// Exit codes as kiln's: 0 success, 2 bad input or an artifact this machine cannot run (one line on
// stderr), 3 an internal error.
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>

#include "artifact/load/artifact.h"
#include "cli/test_data.h"
#include "engine/threads.h"
#include "spec/tensor_file.h"
#include "support/error.h"

namespace {

constexpr const char* kUsage = "usage: kiln-run ARTIFACT --inputs DIR --outputs DIR [--threads N]";

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

struct Args {
  std::string artifact, inputs, outputs;
  int threads = 0;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      KILN_CHECK(i + 1 < argc, kiln::ErrorKind::kBadInput, "{} needs a value ({})", arg, kUsage);
      return argv[++i];
    };
    if (arg == "--inputs") {
      a.inputs = value();
    } else if (arg == "--outputs") {
      a.outputs = value();
    } else if (arg == "--threads") {
      const std::string v = value();
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), a.threads);
      KILN_CHECK(ec == std::errc() && end == v.data() + v.size() && a.threads >= 0 && a.threads <= 1024,
                 kiln::ErrorKind::kBadInput, "--threads '{}': expected a count from 0 (all cores) to 1024", v);
    } else if (arg.starts_with("-")) {
      kiln::fail(kiln::ErrorKind::kBadInput, "unknown option '{}' ({})", arg, kUsage);
    } else {
      KILN_CHECK(a.artifact.empty(), kiln::ErrorKind::kBadInput, "a second artifact '{}' ({})", arg, kUsage);
      a.artifact = arg;
    }
  }
  KILN_CHECK(!a.artifact.empty() && !a.inputs.empty() && !a.outputs.empty(), kiln::ErrorKind::kBadInput,
             "{}", kUsage);
  return a;
}

int run(const Args& a) {
  KILN_CHECK(std::filesystem::is_regular_file(a.artifact), kiln::ErrorKind::kBadInput,
             "'{}' is not a file", a.artifact);
  KILN_CHECK(kiln::artifact::is_artifact_file(a.artifact), kiln::ErrorKind::kBadInput,
             "'{}' is not a compiled artifact (kiln compile MODEL --target aarch64-linux -o X.kiln "
             "makes one; kiln-run does not run .onnx files)",
             a.artifact);
  auto runner = kiln::artifact::open_artifact_runner(a.artifact, kiln::engine::EngineKind::kFast,
                                                     {.threads = a.threads});
  auto feeds = kiln::cli::read_values(a.inputs, "input", runner->inputs());
  auto results = runner->run(feeds);
  std::filesystem::create_directories(a.outputs);
  for (size_t i = 0; i < results.size(); ++i) {
    const auto path = std::filesystem::path(a.outputs) / fmt::format("output_{}.pb", i);
    kiln::write_value_file(path, results[i], runner->outputs()[i]->name);
  }
  std::cout << fmt::format("wrote {} outputs to {}\n", results.size(), a.outputs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  kiln::engine::set_openmp_wait_policy(argv);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << kUsage << "\n";
      return 0;
    }
  try {
    return run(parse_args(argc, argv));
  } catch (const kiln::Error& e) {
    if (e.kind() == kiln::ErrorKind::kInternal) {
      std::cerr << "kiln-run: " << one_line(e.what()) << " (please report it)\n";
      return 3;
    }
    std::cerr << "kiln-run: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "kiln-run: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "kiln-run: " << one_line(e.what()) << " (please report it)\n";
    return 3;
  }
}
