// Reading and writing the input_N.pb / output_N.pb folders of ONNX test data.
#pragma once

#include <filesystem>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln::cli {

// The prefix_N.pb files of dir ("input" or "output"), sorted by N.
std::vector<std::filesystem::path> numbered_files(const std::filesystem::path& dir,
                                                  const std::string& prefix);
// Values for `values` (graph inputs or outputs) from dir's prefix_N.pb files, in order; a file
// whose tensor name matches a value's name goes to that value.
std::vector<RtValue> read_values(const std::filesystem::path& dir, const std::string& prefix,
                                 const std::vector<const Value*>& values);

}  // namespace kiln::cli
