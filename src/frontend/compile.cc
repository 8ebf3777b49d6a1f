#include "frontend/compile.h"

#include "onnx/import.h"
#include "ops/infer.h"
#include "opt/pipeline.h"
#include "runtime/session.h"

namespace kiln::frontend {

std::unique_ptr<engine::CompiledModel> compile_model(Model model, const engine::EngineOptions& opts) {
  if (opts.optimize_level <= 0) return std::make_unique<engine::CompiledModel>(std::move(model), opts);
  prepare_model(model, {.allocation_cap = opts.allocation_cap, .allow_newer_opset = opts.allow_newer_opset});
  opt::optimize(model, opt::level_pipeline(opts.optimize_level));
  infer_shapes(model);
  return std::make_unique<engine::CompiledModel>(std::move(model), opts, engine::CompiledModel::Checked{});
}

std::unique_ptr<engine::CompiledModel> compile_file(const std::filesystem::path& path,
                                                    const engine::EngineOptions& opts) {
  return compile_model(load_model(path), opts);
}

}  // namespace kiln::frontend
