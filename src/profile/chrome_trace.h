// A profile as Chrome trace JSON (chrome://tracing, Perfetto): an array of complete events, one
// "Session" event per phase and per run, one "Node" event per executed node per run, with the args
// ONNX Runtime's profiler writes (op_name, provider, node_index, activation_size, parameter_size,
// output_size, input_type_shape, output_type_shape) so tools that read its traces read these.
#pragma once

#include <nlohmann/json.hpp>

#include "profile/profile_data.h"

namespace kiln {

// `pid` and `tid` label the events (kiln runs every node on the thread that called run).
nlohmann::ordered_json chrome_trace(const ProfileData& data, int64_t pid, int64_t tid);

// ONNX Runtime's shape list: [{"float":[1,3,224,224]}, ...], absent operands left out.
nlohmann::ordered_json type_shape_list(const std::vector<OperandShape>& operands);

}  // namespace kiln
