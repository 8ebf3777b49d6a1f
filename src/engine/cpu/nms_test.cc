// NonMaxSuppression against the reference kernel: the same selected triples, in the same order,
// for clustered boxes (torchvision's per-class shift), both box formats, ties, degenerate and
// inverted boxes, non-finite coordinates, zero boxes, thresholds and output limits.
#include "engine/cpu/nms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "engine/cpu/reference_op.h"

namespace kiln::cpu {
namespace {

struct NmsCase {
  int64_t batches, classes, boxes;
  bool center;
  int64_t max_out;
  float iou;
  std::optional<float> score_threshold;
  int clusters;        // boxes spread over this many shifted clusters (1: one image)
  bool odd_boxes;      // some degenerate, inverted, duplicated and non-finite boxes
};

Tensor make_boxes(const NmsCase& c, std::mt19937& rng) {
  Tensor t(DataType::kFloat, {c.batches, c.boxes, 4});
  std::uniform_real_distribution<float> pos(0, 300), size(1, 120), unit(0, 1);
  std::uniform_int_distribution<int> cluster(0, c.clusters - 1);
  float* p = t.data<float>();
  for (int64_t i = 0; i < c.batches * c.boxes; ++i) {
    const float shift = 321.0f * cluster(rng);
    const float x = pos(rng) + shift, y = pos(rng) + shift, w = size(rng), h = size(rng);
    float* b = p + i * 4;
    if (c.center) {
      b[0] = x, b[1] = y, b[2] = w, b[3] = h;
    } else {
      b[0] = y, b[1] = x, b[2] = y + h, b[3] = x + w;
      if (unit(rng) < 0.2f) std::swap(b[0], b[2]);  // corners in any order
    }
    if (!c.odd_boxes || i == 0) continue;
    const float r = unit(rng);
    if (r < 0.05f) {
      std::copy(b - 4, b, b);  // a duplicate: IoU 1
    } else if (r < 0.08f) {
      b[2] = b[0];  // zero area
    } else if (r < 0.1f) {
      b[1] = std::numeric_limits<float>::quiet_NaN();
    } else if (r < 0.12f) {
      b[3] = std::numeric_limits<float>::infinity();
    } else if (r < 0.14f && c.center) {
      b[2] = -b[2];  // negative width
    }
  }
  return t;
}

Tensor make_scores(const NmsCase& c, std::mt19937& rng) {
  Tensor t(DataType::kFloat, {c.batches, c.classes, c.boxes});
  std::uniform_int_distribution<int> coarse(0, 20);  // ties, which the order must keep stable
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = coarse(rng) / 20.0f;
  return t;
}

Tensor scalar1(float v) {
  Tensor t(DataType::kFloat, {1});
  t.data<float>()[0] = v;
  return t;
}

TEST(CpuNms, MatchesTheReference) {
  const int64_t all = std::numeric_limits<int64_t>::max();
  const NmsCase cases[] = {
      {1, 1, 2000, false, all, 0.5f, std::nullopt, 40, false},  // torchvision's batched NMS
      {1, 1, 2000, false, all, 0.5f, std::nullopt, 1, false},   // one image: one dense cell
      {2, 3, 301, false, 10, 0.3f, 0.25f, 5, true},
      {2, 3, 301, true, 7, 0.6f, std::nullopt, 5, true},
      {1, 2, 777, true, all, 0.0f, 0.5f, 13, false},
      {1, 1, 1, false, 1, 0.5f, std::nullopt, 1, false},
      {1, 1, 5, false, 0, 0.5f, std::nullopt, 1, false},  // max 0 selects nothing
      {1, 1, 0, false, all, 0.5f, std::nullopt, 1, false},  // no boxes
      {0, 2, 4, false, all, 0.5f, std::nullopt, 1, false},  // no batches
      {1, 0, 4, false, all, 0.5f, std::nullopt, 1, false},  // no classes
      {1, 1, 500, false, all, 1.0f, std::nullopt, 3, true},  // IoU threshold 1: all kept
  };
  std::mt19937 rng(5);
  for (const NmsCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.batches << "x" << c.classes << "x" << c.boxes
                                      << " center " << c.center << " max " << c.max_out
                                      << " iou " << c.iou << " clusters " << c.clusters
                                      << " odd " << c.odd_boxes);
    const Tensor boxes = make_boxes(c, rng);
    const Tensor scores = make_scores(c, rng);
    ReferenceOp ref("NonMaxSuppression", 11);
    ref.attr("center_point_box", int64_t{c.center});
    Tensor thr;
    if (c.score_threshold) thr = scalar1(*c.score_threshold);
    const Tensor want = ref.run1({boxes, scores, Tensor::from_int64s(std::vector<int64_t>{c.max_out}),
                                  scalar1(c.iou), thr});
    const NmsOptions o{.max_output_boxes_per_class = c.max_out, .iou_threshold = c.iou,
                       .score_threshold = c.score_threshold, .center_point_box = c.center};
    const std::vector<int64_t> got = non_max_suppression(
        boxes.data<float>(), scores.data<float>(), c.batches, c.classes, c.boxes, o);
    ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel());
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_EQ(got[i], want.data<int64_t>()[i]) << "element " << i;
  }
}

}  // namespace
}  // namespace kiln::cpu
