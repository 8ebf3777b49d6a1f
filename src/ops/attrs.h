// Typed access to a node's attributes, with defaults and clear errors on a wrong kind.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln {

// An absent attribute reads as the default given; a present one of another kind fails (kBadModel,
// naming the node).
int64_t attr_int(const Node& n, std::string_view name, int64_t dflt);
float attr_float(const Node& n, std::string_view name, float dflt);
std::string attr_string(const Node& n, std::string_view name, std::string dflt);
std::vector<int64_t> attr_ints(const Node& n, std::string_view name, std::vector<int64_t> dflt = {});
std::vector<float> attr_floats(const Node& n, std::string_view name, std::vector<float> dflt = {});
std::vector<std::string> attr_strings(const Node& n, std::string_view name,
                                      std::vector<std::string> dflt = {});
// The same with ONNX's default, as the op's schema declares it (OpSchema::attr(name, kind,
// default)): one statement of each default for kernels, inference, passes and the engine alike.
// Asking for an attribute whose schema gives no default is a bug in kiln (kInternal).
int64_t attr_int(const Node& n, std::string_view name);
float attr_float(const Node& n, std::string_view name);
std::string attr_string(const Node& n, std::string_view name);
std::optional<int64_t> attr_int_opt(const Node& n, std::string_view name);
std::optional<float> attr_float_opt(const Node& n, std::string_view name);
std::optional<std::vector<int64_t>> attr_ints_opt(const Node& n, std::string_view name);
// Required attributes: fail (kBadModel) naming the node when missing.
int64_t attr_int_req(const Node& n, std::string_view name);
const Tensor& attr_tensor_req(const Node& n, std::string_view name);
const Graph& attr_graph_req(const Node& n, std::string_view name);
const Tensor* attr_tensor_opt(const Node& n, std::string_view name);

// Normalizes an axis in [-rank, rank) to [0, rank); fails naming the node when out of range.
int normalize_axis(const Node& n, int64_t axis, int rank);

}  // namespace kiln
