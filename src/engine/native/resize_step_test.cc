// The planned cpu.resize step against the reference Resize: every coordinate mode and nearest
// rounding it takes, scales and sizes, up and down, on row-major input and on the layouts oneDNN
// steps make (channel blocks after oneDNN's Conv, channels-last after cpu.patch_deconv), which it
// keeps;
// what it does not take (a zero-size input, cubic, scales computed at run time) goes to the
// context kernel.
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

struct ResizeCase {
  V x;
  std::string mode, coord, nearest;
  std::vector<float> scales;  // H, W; empty: sizes
  V sizes;                    // H, W
};

// Resize's inputs after x: roi, then scales or sizes (constants).
std::vector<Value*> resize_inputs(ModelBuilder& b, Value* x, const ResizeCase& c) {
  std::vector<Value*> ins{x, b.constant("roi", Tensor(DataType::kFloat, {0}))};
  if (c.scales.empty()) {
    ins.push_back(nullptr);
    ins.push_back(b.constant("sizes", int64_tensor({4}, {c.x[0], c.x[1], c.sizes[0], c.sizes[1]})));
  } else {
    Tensor s(DataType::kFloat, {4});
    const float v[4] = {1, 1, c.scales[0], c.scales[1]};
    std::copy(v, v + 4, s.data<float>());
    ins.push_back(b.constant("scales", s));
  }
  return ins;
}

std::vector<Attribute> resize_attrs(const ResizeCase& c) {
  std::vector<Attribute> a{attr("mode", c.mode), attr("coordinate_transformation_mode", c.coord)};
  if (!c.nearest.empty()) a.push_back(attr("nearest_mode", c.nearest));
  return a;
}

const ResizeCase kCases[] = {
    {{1, 3, 13, 20}, "nearest", "asymmetric", "floor", {2, 2}, {}},
    {{2, 5, 17, 15}, "nearest", "half_pixel", "round_prefer_floor", {1.7f, 0.6f}, {}},
    {{1, 2, 9, 11}, "nearest", "half_pixel", "round_prefer_ceil", {}, {20, 5}},
    {{1, 2, 9, 11}, "nearest", "tf_half_pixel_for_nn", "ceil", {3, 1}, {}},
    {{1, 6, 6, 7}, "nearest", "align_corners", "round_prefer_floor", {}, {11, 3}},
    {{1, 3, 13, 20}, "linear", "half_pixel", "", {2, 2}, {}},
    {{2, 3, 17, 15}, "linear", "pytorch_half_pixel", "", {}, {8, 7}},
    {{1, 20, 9, 11}, "linear", "align_corners", "", {}, {20, 31}},
    {{1, 2, 9, 11}, "linear", "asymmetric", "", {1.5f, 0.75f}, {}},
    {{1, 17, 9, 11}, "linear", "half_pixel_symmetric", "", {2.5f, 1}, {}},
    {{1, 24, 20, 20}, "nearest", "asymmetric", "floor", {8, 8}, {}},
    {{1, 96, 10, 10}, "nearest", "asymmetric", "floor", {2, 2}, {}},  // PP-OCR's FPN
    {{1, 64, 9, 7}, "linear", "half_pixel", "", {2, 2}, {}},
};

TEST(NativeResize, RowMajorInput) {
  for (const ResizeCase& c : kCases) {
    SCOPED_TRACE(dims_to_string(c.x) + " " + c.mode + " " + c.coord + " " + c.nearest);
    const auto make = [&] {
      ModelBuilder b(19);
      Value* x = b.input("x", shape_of(c.x));
      b.output(b.op("Resize", resize_inputs(b, x, c), resize_attrs(c)));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor(c.x, 1)});
    EXPECT_EQ(steps_of(s, "cpu.resize"), 1);
    EXPECT_EQ(steps_of(s, "onednn.reorder"), 0);
  }
}

// Between two oneDNN steps: the Resize reads and writes their layout, no reorder around it.
TEST(NativeResize, KeepsTheLayoutItIsGiven) {
  for (const char* producer : {"Conv", "ConvTranspose"})
    for (const ResizeCase& c : kCases) {
      SCOPED_TRACE(std::string(producer) + " " + dims_to_string(c.x) + " " + c.mode + " " + c.coord);
      const auto make = [&] {
        ModelBuilder b(19);
        Value* x = b.input("x", shape_of(c.x));
        const int64_t ch = c.x[1];
        // oneDNN's 3x3 Conv writes channel blocks here, cpu.patch_deconv's 1x1 ConvTranspose
        // channels-last; both keep the dims
        const bool conv = std::string(producer) == "Conv";
        Value* y = b.op(producer, {x, b.constant("w", random_tensor({ch, ch, conv ? 3 : 1, conv ? 3 : 1}, 2))},
                        {attr("pads", conv ? V{1, 1, 1, 1} : V{0, 0, 0, 0})});
        y = b.op("Resize", resize_inputs(b, y, c), resize_attrs(c));
        b.output(b.op("Relu", {y}));
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor(c.x, 1)});
      EXPECT_EQ(steps_of(s, "cpu.resize"), 1);
      // at most the model's input and output change layout
      EXPECT_LE(steps_of(s, "onednn.reorder"), 2);
    }
}

TEST(NativeResize, OthersGoToTheContextKernel) {
  struct Other {
    V x;
    std::string mode;
    bool scales_as_input;
  };
  for (const Other& o : {Other{{1, 0, 4, 4}, "nearest", false}, Other{{1, 2, 4, 4}, "cubic", false},
                         Other{{1, 2, 4, 4}, "linear", true}}) {
    SCOPED_TRACE(dims_to_string(o.x) + " " + o.mode);
    const auto make = [&] {
      ModelBuilder b(19);
      Value* x = b.input("x", shape_of(o.x));
      Value* scales = o.scales_as_input ? b.input("scales", {4}) : nullptr;
      if (!scales) {
        Tensor s(DataType::kFloat, {4});
        const float v[4] = {1, 1, 2, 1.5f};
        std::copy(v, v + 4, s.data<float>());
        scales = b.constant("scales", s);
      }
      b.output(b.op("Resize", {x, b.constant("roi", Tensor(DataType::kFloat, {0})), scales},
                    {attr("mode", o.mode)}));
      return b.take();
    };
    std::vector<Tensor> feeds(o.scales_as_input ? 2 : 1);
    feeds[0] = random_tensor(o.x, 1);
    if (o.scales_as_input) {
      feeds[1] = Tensor(DataType::kFloat, {4});
      const float v[4] = {1, 1, 2, 1.5f};
      std::copy(v, v + 4, feeds[1].data<float>());
    }
    const auto s = expect_same_as_reference(make, feeds);
    EXPECT_EQ(steps_of(s, "cpu.resize"), 1);  // the context kernel, under the same name
  }
}

}  // namespace
}  // namespace kiln::engine
