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

// The input sets in dir, as kiln run and kiln test read them: dir's own input_N.pb files (one set),
// or one set per test_data_set_*/ folder in it (sorted by name). Fails (kBadInput) naming dir when
// it has neither.
struct InputSet {
  std::string name;  // the folder the set came from
  std::vector<RtValue> values;
};
std::vector<InputSet> read_input_sets(const std::filesystem::path& dir,
                                      const std::vector<const Value*>& inputs);

}  // namespace kiln::cli
