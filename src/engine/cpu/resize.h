// Resize of the last two axes (H and W) of float32 tensors: nearest or linear, with every ONNX
// coordinate_transformation_mode except tf_crop_and_resize. Cubic, antialias and exclude_outside
// stay with the reference kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::cpu {

enum class ResizeMode : uint8_t { kNearest, kLinear };
enum class ResizeCoord : uint8_t {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
};
enum class NearestRound : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

// The attribute strings of ONNX Resize; nullopt for values these kernels do not take.
std::optional<ResizeMode> parse_resize_mode(std::string_view mode);  // "linear" includes "bilinear"
std::optional<ResizeCoord> parse_resize_coord(std::string_view coordinate_transformation_mode);
std::optional<NearestRound> parse_nearest_round(std::string_view nearest_mode);  // "simple": opset < 11

struct ResizeOptions {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  NearestRound nearest = NearestRound::kRoundPreferFloor;
  // The op's scale per axis: the given scale, or output / input size when sizes are given.
  double scale_h = 1, scale_w = 1;
};

// y[p, :, :, :] ([out_h, out_w, inner]) = x[p, :, :, :] ([h, w, inner]) resized along h and w,
// for planes p: row-major NCHW is N * C planes with inner 1, channels-last N planes with inner C,
// 16-channel blocks N * C/16 planes with inner 16. An axis with scale 1 and the same size is
// copied, as ONNX says.
void resize_2d(const float* x, int64_t planes, int64_t h, int64_t w, float* y, int64_t out_h,
               int64_t out_w, const ResizeOptions& o, int64_t inner = 1);

}  // namespace kiln::cpu
