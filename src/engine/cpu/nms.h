// NonMaxSuppression of float32 boxes: ONNX's greedy selection, with the same decisions as the
// reference kernel (src/ops, IoU in double) but checking each candidate only against the kept
// boxes whose x-extent can overlap it (a grid of cells along x), instead of all of them. Detection
// exports (torchvision's batched NMS shifts each class's boxes apart) select thousands of boxes,
// where the reference kernel's all-pairs check takes hundreds of milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::cpu {

struct NmsOptions {
  int64_t max_output_boxes_per_class = 0;  // ONNX's default 0 selects nothing
  double iou_threshold = 0;
  std::optional<double> score_threshold;  // candidates need a score above it
  bool center_point_box = false;          // boxes as [x_center, y_center, w, h], else corners
};

// boxes [batches, num_boxes, 4], scores [batches, classes, num_boxes]. Returns the selected
// (batch, class, box) triples, flattened, in ONNX's order: by batch, class, then selection.
std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores, int64_t batches,
                                         int64_t classes, int64_t num_boxes, const NmsOptions& o);

}  // namespace kiln::cpu
