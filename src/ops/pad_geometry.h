// Where each element of Pad's output comes from: the output dims and, per axis, the input index
// every output position reads (-1: the constant value), for the four modes and negative pads
// (which crop). The reference kernel (tensor_pad.cc) and the engine's cpu.pad both read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// "constant", "reflect", "edge", "wrap"; nullopt for anything else.
std::optional<PadMode> parse_pad_mode(const std::string& mode);

// The (begin, end) pads of each of `rank` axes from Pad's pads input over its axes input (all axes
// when absent); nullopt with *error saying why when they do not fit.
std::optional<std::vector<std::pair<int64_t, int64_t>>> pads_per_axis(
    const std::vector<int64_t>& pads, const std::optional<std::vector<int64_t>>& axes, int rank,
    std::string* error);

struct PadGeometry {
  std::vector<int64_t> out_dims;
  std::vector<std::vector<int64_t>> src;  // per axis, per output position: input index or -1
};

// The geometry of padding an input of `dims`; nullopt with *error when a dim would become
// negative or a non-constant mode has to pad an axis left empty.
std::optional<PadGeometry> pad_geometry(PadMode mode, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& pads,
                                        const std::optional<std::vector<int64_t>>& axes,
                                        std::string* error);

}  // namespace kiln
