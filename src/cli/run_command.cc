// kiln run: a model on input_N.pb files, writing output_N.pb files.
#include <filesystem>
#include <iostream>

#include "backend/engine_placement.h"
#include "cli/commands.h"
#include "cli/model_opener.h"
#include "cli/test_data.h"
#include "engine/runner.h"
#include "spec/tensor_file.h"
#include "support/error.h"

namespace kiln::cli {

Action add_run(CLI::App& app) {
  auto model = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::string>();
  auto outputs = std::make_shared<std::string>();
  auto engine_name = std::make_shared<std::string>("fast");
  auto threads = std::make_shared<int>(0);
  auto level = std::make_shared<int>(2);
  auto newer_opset = std::make_shared<bool>(false);
  app.add_option("model", *model, "ONNX model file or compiled artifact (.kiln)")->required();
  app.add_option("--inputs", *inputs, "Folder of input_N.pb (TensorProto) files")->required();
  app.add_option("--outputs", *outputs, "Folder to write output_N.pb files into")->required();
  app.add_option("--engine", *engine_name, "fast (default: oneDNN and CPU kernels) or reference");
  app.add_option("--threads", *threads, "Threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_option("-O", *level, "Optimize the model first as kiln optimize -O N does (default 2; 0: as it is)")
      ->check(CLI::Range(0, 3));
  add_allow_newer_opset(app, *newer_opset);
  auto precision = std::make_shared<std::string>("fp32");
  add_precision(app, *precision);
  auto tune = std::make_shared<std::string>();
  add_tune(app, *tune);
  auto placement = std::make_shared<BackendFlags>();
  add_backend_flags(app, *placement);
  return [=]() {
    auto runner = open_runner(
        *model, engine::parse_engine_kind(*engine_name),
        {.threads = *threads, .optimize_level = *level, .allow_newer_opset = *newer_opset,
         .bf16 = *precision == "bf16",
         .placement = backend::make_placement(placement->backends, placement->strict, *threads),
         .tune = tune_mode(*tune)});
    auto feeds = read_values(*inputs, "input", runner->inputs());
    auto results = runner->run(feeds);
    std::filesystem::create_directories(*outputs);
    for (size_t i = 0; i < results.size(); ++i) {
      const auto path = std::filesystem::path(*outputs) / fmt::format("output_{}.pb", i);
      write_value_file(path, results[i], runner->outputs()[i]->name);
    }
    std::cout << fmt::format("wrote {} outputs to {}\n", results.size(), *outputs);
    return 0;
  };
}

void add_backend_flags(CLI::App& app, BackendFlags& flags) {
  app.add_option("--backends", flags.backends,
                 "Backends in order of preference, e.g. xnnpack,cpu (kiln analyze shows the placement); "
                 "cpu and reference take what the listed ones do not");
  app.add_flag("--strict", flags.strict,
               "Refuse any fallback (a node off the first backend, a failed compile), "
               "naming every such node");
}

}  // namespace kiln::cli
