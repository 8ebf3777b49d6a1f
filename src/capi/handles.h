// What the C API's opaque handles are (include/kiln/kiln.h): options, sessions, their tensor
// info. C++ only; the C header declares them as incomplete structs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "artifact/load/artifact.h"
#include "engine/compiled_model.h"
#include "engine/engine_options.h"
#include "kiln/kiln.h"

struct kiln_options {
  kiln::engine::EngineOptions engine{.optimize_level = 2};
  std::vector<std::pair<std::string, int64_t>> fixed_dims;  // kiln_options_set_dim, in order
  std::string external_data_dir;                            // "": the current directory
};

struct kiln_tensor_info {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_UNDEFINED;
  bool is_tensor = false;
  int64_t rank = -1;                   // -1: not known
  std::vector<int64_t> dims;           // -1: symbolic or unknown
  std::vector<std::string> dim_names;  // the symbol, "" for a known or unnamed dim
};

struct kiln_session {
  // An ONNX model's session owns its CompiledModel; an artifact's, the artifact (its mapping and
  // the CompiledModel made from it). `model` is the one that runs, either way.
  std::unique_ptr<kiln::engine::CompiledModel> onnx_model;
  std::unique_ptr<kiln::artifact::Artifact> artifact;
  kiln::engine::CompiledModel* model = nullptr;
  std::vector<kiln_tensor_info> inputs;
  std::vector<kiln_tensor_info> outputs;
};
