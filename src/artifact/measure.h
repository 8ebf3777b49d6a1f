// What `kiln compile` measures when the target runs here: the artifact as the loader reads it back
// against the original .onnx on the fast engine, on the same seeded random inputs: session creation,
// p50 latency of runs taking turns, and per output the error against the original (at -O0).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/compile.h"

namespace kiln::artifact {

nlohmann::json measure_artifact(const std::string& artifact, const std::string& onnx,
                                const std::filesystem::path& dir, const CompileOptions& o,
                                std::vector<std::string>& notes);

}  // namespace kiln::artifact
