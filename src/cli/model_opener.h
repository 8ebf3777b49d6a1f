// Opening a model for run/bench/profile: a compiled artifact (by its magic) or an .onnx file.
#pragma once

#include <memory>
#include <string>

#include "engine/runner.h"

namespace kiln::cli {

std::unique_ptr<engine::ModelRunner> open_runner(const std::string& path, engine::EngineKind kind,
                                                 const engine::EngineOptions& opts);

}  // namespace kiln::cli
