// ONNX models into the fast engine: the full preparation (runtime/session.h's prepare_model), the
// portable optimizer's -O level (src/opt), then a CompiledModel. This layer sits above the engine
// and the optimizer, so that the runtime below it (what loads and runs a compiled artifact:
// kiln-run, the aarch64 build) links neither the optimizer nor protobuf.
#pragma once

#include <filesystem>
#include <memory>

#include "engine/compiled_model.h"
#include "engine/engine_options.h"
#include "ir/graph.h"

namespace kiln::frontend {

// The model checked, inlined, inferred and its types judged, optimized at opts.optimize_level
// (none at 0), and compiled by the engine (plans made now when every input dim is known).
std::unique_ptr<engine::CompiledModel> compile_model(Model model, const engine::EngineOptions& opts = {});
// The same for an .onnx file (src/onnx's load_model: external data beside it).
std::unique_ptr<engine::CompiledModel> compile_file(const std::filesystem::path& path,
                                                    const engine::EngineOptions& opts = {});

}  // namespace kiln::frontend
