// Loading .onnx files into the IR: parse, convert with every safety check, sort, normalize opsets.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace kiln {

// Loads a model file; external data is resolved inside the file's folder. Fails with kBadModel
// (or kBadInput for an unreadable path) and a one-line message naming what and where.
Model load_model(const std::filesystem::path& path);
Model load_model_from_bytes(std::string_view bytes, const std::filesystem::path& dir);

// The external data files the model's tensors name (initializers, sparse ones, tensor attributes,
// in subgraphs and functions too), resolved inside `dir`, sorted, each once. Names that would leave
// the folder, or files that do not exist, are left out: loading the model refuses them. Fails
// (kBadModel) only when the bytes are not a model.
std::vector<std::filesystem::path> external_data_files(std::string_view bytes, const std::filesystem::path& dir);

}  // namespace kiln
