// Writing the IR back to .onnx, in the model's own opsets, optionally with external data.
#pragma once

#include <filesystem>

#include "ir/graph.h"

namespace kiln {

struct SaveOptions {
  // Write tensors of at least `external_threshold` bytes to `<file>.data` beside the model. Forced
  // on when the model would not fit a protobuf message (2 GB).
  bool external_data = false;
  int64_t external_threshold = 1024;
  bool write_inferred_types = false;  // value_info for every typed intermediate value
};

struct SavedModel {
  std::filesystem::path data_path;    // the external data file, empty when none was written
  bool external_data_forced = false;  // the model was too large for one file (needs_external_data)
};

// True when the model's constants pass what one protobuf message can hold (2 GB).
bool needs_external_data(const Model& m);
SavedModel save_model(const Model& m, const std::filesystem::path& path, const SaveOptions& opts = {});
// The serialized ModelProto (no external data).
std::string serialize_model(const Model& m);

}  // namespace kiln
