// kiln run: a model on input_N.pb files, writing output_N.pb files.
#include <filesystem>
#include <iostream>

#include "onnx/tensor_proto.h"
#include "runtime/session.h"
#include "support/error.h"
#include "tools/commands.h"
#include "tools/test_data.h"

namespace kiln::tools {

Action add_run(CLI::App& app) {
  auto model = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::string>();
  auto outputs = std::make_shared<std::string>();
  app.add_option("model", *model, "ONNX model file")->required();
  app.add_option("--inputs", *inputs, "Folder of input_N.pb (TensorProto) files")->required();
  app.add_option("--outputs", *outputs, "Folder to write output_N.pb files into")->required();
  return [=]() {
    auto session = Session::load(*model);
    auto feeds = read_values(*inputs, "input", session->inputs());
    auto results = session->run(feeds);
    std::filesystem::create_directories(*outputs);
    for (size_t i = 0; i < results.size(); ++i) {
      const auto path = std::filesystem::path(*outputs) / fmt::format("output_{}.pb", i);
      write_value_file(path, results[i], session->outputs()[i]->name);
    }
    std::cout << fmt::format("wrote {} outputs to {}\n", results.size(), *outputs);
    return 0;
  };
}

}  // namespace kiln::tools
