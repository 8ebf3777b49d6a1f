#include "engine/resize_options.h"

#include <cmath>

#include "ops/attrs.h"

namespace kiln::engine {

std::optional<cpu::ResizeOptions> resize_options(const Node& n, int opset,
                                                 const std::vector<int64_t>& x_dims,
                                                 const Tensor* scales, const Tensor* sizes,
                                                 std::vector<int64_t>& out_dims) {
  const int rank = static_cast<int>(x_dims.size());
  if (rank < 2) return std::nullopt;
  for (int64_t d : x_dims)
    if (d <= 0) return std::nullopt;
  if (attr_int(n, "antialias", 0) != 0 || attr_int(n, "exclude_outside", 0) != 0 ||
      attr_ints_opt(n, "axes") ||
      attr_string(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return std::nullopt;
  const bool legacy = opset < 11;
  const auto mode = cpu::parse_resize_mode(attr_string(n, "mode", "nearest"));
  const auto coord = cpu::parse_resize_coord(
      attr_string(n, "coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel"));
  const auto nearest =
      cpu::parse_nearest_round(attr_string(n, "nearest_mode", legacy ? "simple" : "round_prefer_floor"));
  if (!mode || !coord || !nearest) return std::nullopt;
  const bool has_scales = scales && scales->numel() > 0;
  const bool has_sizes = sizes && sizes->numel() > 0;
  if (has_scales == has_sizes) return std::nullopt;
  std::vector<double> scale(rank, 1.0);
  out_dims = x_dims;
  if (has_scales) {
    if (scales->dtype() != DataType::kFloat || scales->numel() != rank) return std::nullopt;
    for (int a = 0; a < rank; ++a) {
      scale[a] = scales->get_f64(a);
      const double o = std::floor(scale[a] * static_cast<double>(x_dims[a]));
      if (!(scale[a] > 0) || !(o >= 1 && o < 1e12)) return std::nullopt;
      out_dims[a] = static_cast<int64_t>(o);
    }
  } else {
    if (sizes->dtype() != DataType::kInt64 || sizes->numel() != rank) return std::nullopt;
    for (int a = 0; a < rank; ++a) {
      out_dims[a] = sizes->get_i64(a);
      if (out_dims[a] <= 0) return std::nullopt;
      scale[a] = static_cast<double>(out_dims[a]) / static_cast<double>(x_dims[a]);
    }
  }
  for (int a = 0; a < rank - 2; ++a)
    if (scale[a] != 1.0 || out_dims[a] != x_dims[a]) return std::nullopt;
  return cpu::ResizeOptions{.mode = *mode, .coord = *coord, .nearest = *nearest,
                            .scale_h = scale[rank - 2], .scale_w = scale[rank - 1]};
}

}  // namespace kiln::engine
