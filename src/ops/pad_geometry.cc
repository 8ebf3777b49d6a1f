#include "ops/pad_geometry.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/checked_math.h"
#include "support/limits.h"

namespace kiln {

namespace {

// Where output position o of an axis reads from: a source index, or -1 for the constant.
int64_t pad_source(PadMode mode, int64_t o, int64_t begin, int64_t lo, int64_t len) {
  int64_t i = o - begin;  // position in the cropped input [lo, lo + len)
  if (i >= 0 && i < len) return lo + i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return lo + (i < 0 ? 0 : len - 1);
    case PadMode::kWrap: return lo + ((i % len) + len) % len;
    case PadMode::kReflect: {
      if (len == 1) return lo;
      const int64_t period = 2 * (len - 1);
      int64_t m = ((i % period) + period) % period;
      return lo + (m < len ? m : period - m);
    }
  }
  return -1;
}

}  // namespace

std::optional<PadMode> parse_pad_mode(const std::string& m) {
  if (m == "constant") return PadMode::kConstant;
  if (m == "reflect") return PadMode::kReflect;
  if (m == "edge") return PadMode::kEdge;
  if (m == "wrap") return PadMode::kWrap;
  return std::nullopt;
}

std::optional<std::vector<std::pair<int64_t, int64_t>>> pads_per_axis(
    const std::vector<int64_t>& pads, const std::optional<std::vector<int64_t>>& axes, int rank,
    std::string* error) {
  std::vector<int64_t> ax;
  if (axes) {
    ax = *axes;
  } else {
    for (int k = 0; k < rank; ++k) ax.push_back(k);
  }
  if (pads.size() != 2 * ax.size()) {
    *error = fmt::format("pads has {} entries for {} axes", pads.size(), ax.size());
    return std::nullopt;
  }
  std::vector<std::pair<int64_t, int64_t>> out(rank, {0, 0});
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < ax.size(); ++i) {
    if (ax[i] < -rank || ax[i] >= rank) {
      *error = fmt::format("axis {} out of range for rank {}", ax[i], rank);
      return std::nullopt;
    }
    const int k = static_cast<int>(ax[i] < 0 ? ax[i] + rank : ax[i]);
    if (seen[k]) {
      *error = fmt::format("axis {} given twice", ax[i]);
      return std::nullopt;
    }
    seen[k] = true;
    out[k] = {pads[i], pads[i + ax.size()]};
  }
  return out;
}

std::optional<PadGeometry> pad_geometry(PadMode mode, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& pads,
                                        const std::optional<std::vector<int64_t>>& axes,
                                        std::string* error) {
  const int rank = static_cast<int>(dims.size());
  const auto per_axis = pads_per_axis(pads, axes, rank, error);
  if (!per_axis) return std::nullopt;
  PadGeometry g;
  g.out_dims.resize(rank);
  g.src.resize(rank);
  for (int k = 0; k < rank; ++k) {
    auto [b, e] = (*per_axis)[k];
    const int64_t d = dims[k];
    auto total = checked_add(d, b);
    if (total) total = checked_add(*total, e);
    if (!total || *total < 0) {
      *error = fmt::format("pads {} and {} do not fit dim {} of size {}", b, e, k, d);
      return std::nullopt;
    }
    // A table entry per output position: no more than one tensor may hold (the output itself is
    // checked against the allocation cap when it is made).
    if (*total > limits::kDefaultAllocationCap) {
      *error = fmt::format("pads make dim {} of size {} too large ({})", k, d, *total);
      return std::nullopt;
    }
    g.out_dims[k] = *total;
    // Negative pads crop first; the positive ones pad what is left.
    const int64_t crop_b = b >= 0 ? 0 : (b <= -d ? d : -b);
    const int64_t crop_e = e >= 0 ? 0 : (e <= -d ? d : -e);
    const int64_t lo = crop_b, len = std::max<int64_t>(0, d - crop_b - crop_e), begin = std::max<int64_t>(0, b);
    if (mode != PadMode::kConstant && len == 0 && g.out_dims[k] > 0) {
      *error = fmt::format("cannot pad an empty axis {} in this mode", k);
      return std::nullopt;
    }
    g.src[k].resize(g.out_dims[k]);
    for (int64_t o = 0; o < g.out_dims[k]; ++o) g.src[k][o] = pad_source(mode, o, begin, lo, len);
  }
  return g;
}

}  // namespace kiln
