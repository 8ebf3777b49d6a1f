#include "frontend/runners.h"

#include "frontend/compile.h"
#include "onnx/import.h"
#include "opt/pipeline.h"

namespace kiln::frontend {

std::unique_ptr<engine::ModelRunner> make_runner(Model model, engine::EngineKind kind,
                                                 const engine::EngineOptions& opts) {
  if (kind == engine::EngineKind::kFast) return engine::fast_runner(compile_model(std::move(model), opts));
  engine::EngineOptions as_given = opts;
  if (opts.optimize_level > 0) {  // checked and inferred first, as the optimizer needs
    prepare_model(model, {.allocation_cap = opts.allocation_cap, .allow_newer_opset = opts.allow_newer_opset});
    opt::optimize(model, opt::level_pipeline(opts.optimize_level));
    as_given.optimize_level = 0;
  }
  return engine::make_runner(std::move(model), kind, as_given);
}

std::unique_ptr<engine::ModelRunner> open_model(const std::filesystem::path& path, engine::EngineKind kind,
                                                const engine::EngineOptions& opts) {
  return frontend::make_runner(load_model(path), kind, opts);
}

std::unique_ptr<Session> load_session(const std::filesystem::path& path, const SessionOptions& opts) {
  return std::make_unique<Session>(load_model(path), opts);
}

}  // namespace kiln::frontend
