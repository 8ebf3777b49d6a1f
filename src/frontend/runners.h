// The .onnx entry points of both executors (engine/runner.h's ModelRunner, the reference Session):
// a file read by src/onnx, the optimizer's -O level run first. Above the engine and the optimizer,
// like compile.h.
#pragma once

#include <filesystem>
#include <memory>

#include "engine/engine_options.h"
#include "engine/runner.h"
#include "ir/graph.h"
#include "runtime/session.h"

namespace kiln::frontend {

// The model optimized at opts.optimize_level, then run by the executor `kind` names.
std::unique_ptr<engine::ModelRunner> make_runner(Model model, engine::EngineKind kind,
                                                 const engine::EngineOptions& opts = {});
std::unique_ptr<engine::ModelRunner> open_model(const std::filesystem::path& path, engine::EngineKind kind,
                                                const engine::EngineOptions& opts = {});
// A reference Session over the .onnx file at `path`.
std::unique_ptr<Session> load_session(const std::filesystem::path& path, const SessionOptions& opts = {});

}  // namespace kiln::frontend
