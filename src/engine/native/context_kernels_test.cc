// The fast kernels of KernelContext form: NonMaxSuppression in the main graph is a cpu.nms step,
// and inside an If's branch (which the interpreter runs) the engine's override runs it too;
// Resize is a cpu.resize step, which hands what resize_2d does not run to the reference kernel.
// All give the reference Session's outputs.
#include "engine/native/context_kernels.h"

#include <gtest/gtest.h>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using testing::expect_same_as_reference;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::steps_of;

// Boxes [1, n, 4] with x2 > x1, y2 > y1 (so many overlap), scores [1, 1, n].
std::vector<Tensor> nms_feeds(int64_t n) {
  Tensor boxes = random_tensor({1, n, 4}, 7, 0, 10);
  float* b = boxes.data<float>();
  for (int64_t i = 0; i < n; ++i) b[i * 4 + 2] += b[i * 4], b[i * 4 + 3] += b[i * 4 + 1];
  return {boxes, random_tensor({1, 1, n}, 8, 0, 1)};
}

// Appends NonMaxSuppression's max_output_boxes_per_class and iou_threshold inputs.
void nms_thresholds(ModelBuilder& b, std::vector<Value*>& ins) {
  ins.push_back(b.constant("max", testing::int64_tensor({1}, {1000})));
  Tensor iou(DataType::kFloat, {1});
  iou.data<float>()[0] = 0.4f;
  ins.push_back(b.constant("iou", iou));
}

TEST(ContextKernels, NmsInTheMainGraph) {
  const auto make = [] {
    ModelBuilder b(11);
    std::vector<Value*> ins{b.input("boxes", {1, 200, 4}), b.input("scores", {1, 1, 200})};
    nms_thresholds(b, ins);
    b.output(b.op("NonMaxSuppression", ins));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, nms_feeds(200));
  EXPECT_EQ(steps_of(s, "cpu.nms"), 1);
  EXPECT_EQ(steps_of(s, "reference"), 0);
}

// A Resize of H and W by sizes (linear) or scales (nearest), and a cubic one (reference kernel).
TEST(ContextKernels, Resize) {
  struct Case {
    std::string mode;
    bool by_sizes;
  };
  for (const Case& c : {Case{"linear", true}, Case{"nearest", false}, Case{"cubic", true}}) {
    SCOPED_TRACE(c.mode);
    const auto make = [&] {
      ModelBuilder b(13);
      Value* x = b.input("x", {1, 3, 7, 9});
      Value* roi = b.constant("roi", Tensor(DataType::kFloat, {0}));
      std::vector<Value*> ins{x, roi};
      if (c.by_sizes) {
        ins.push_back(nullptr);
        ins.push_back(b.constant("sizes", testing::int64_tensor({4}, {1, 3, 15, 4})));
      } else {
        Tensor scales(DataType::kFloat, {4});
        const float v[4] = {1, 1, 2.5f, 0.5f};
        std::copy(v, v + 4, scales.data<float>());
        ins.push_back(b.constant("scales", scales));
      }
      b.output(b.op("Resize", ins, {testing::attr("mode", c.mode)}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor({1, 3, 7, 9}, 4)});
    EXPECT_EQ(steps_of(s, "cpu.resize"), 1);
  }
}

class KernelNames : public RunObserver {
 public:
  void on_node(const NodeEvent& e) override {
    names.push_back(std::string(e.kernel) + "@" + std::to_string(e.depth));
  }
  std::vector<std::string> names;
};

TEST(ContextKernels, NmsInsideAnIfBranch) {
  const auto make = [] {
    ModelBuilder b(11);
    std::vector<Value*> ins{b.input("boxes", {1, 150, 4}), b.input("scores", {1, 1, 150})};
    Value* cond = b.input("cond", {}, DataType::kBool);
    nms_thresholds(b, ins);
    b.output(b.if_op(cond, {"NonMaxSuppression", ins}, {"Shape", {ins[0]}}));
    return b.take();
  };
  std::vector<Tensor> feeds = nms_feeds(150);
  Tensor cond(DataType::kBool, {});
  cond.set_f64(0, 1);
  feeds.push_back(cond);
  expect_same_as_reference(make, feeds);

  CompiledModel fast(make());
  std::vector<RtValue> values;
  for (const Tensor& t : feeds) values.push_back(RtValue::of(t));
  KernelNames seen;
  fast.run(values, &seen);
  EXPECT_NE(std::find(seen.names.begin(), seen.names.end(), "cpu.nms@1"), seen.names.end());
}

}  // namespace
}  // namespace kiln::engine
