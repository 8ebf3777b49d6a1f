// cpu.pad against the reference kernel: every mode, negative pads (crops), the axes input, a
// constant value, element sizes 1, 4 and 8.
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

Attribute mode_attr(const std::string& mode) {
  Attribute a{.name = "mode", .kind = AttrKind::kString};
  a.s = mode;
  return a;
}

Tensor of_type(const Tensor& f, DataType t) {
  Tensor out(t, f.dims());
  for (int64_t i = 0; i < f.numel(); ++i) out.set_f64(i, std::round(f.get_f64(i) * 50));
  return out;
}

TEST(CpuPad, MatchesTheReference) {
  struct Case {
    V dims, pads;
    std::string mode;
    std::optional<V> axes;
  };
  const std::vector<Case> cases = {
      {{1, 3, 5, 7}, {0, 0, 1, 2, 0, 0, 2, 1}, "constant", {}},  // Inception's spatial pads
      {{2, 3, 4}, {1, 0, 2, 0, 1, 3}, "constant", {}},            // every axis, rows of fill
      {{2, 3, 4}, {0, -1, 1, 0, 2, -2}, "constant", {}},          // crops and pads together
      {{3, 6}, {2, 3, 1, 4}, "reflect", {}},
      {{3, 6}, {1, 5, 2, 0}, "edge", {}},
      {{3, 6}, {0, 7, 0, 8}, "wrap", {}},
      {{2, 5, 3}, {2, 1}, "reflect", V{-2}},  // the axes input: the middle one only
      {{4}, {0, 0}, "constant", {}},
  };
  for (const Case& c : cases) {
    for (const DataType t : {DataType::kFloat, DataType::kUInt8, DataType::kInt64}) {
      SCOPED_TRACE(dims_to_string(c.dims) + " " + c.mode + " " + std::string(dtype_name(t)));
      const auto make = [&c, t] {
        ModelBuilder b(19);
        std::vector<Value*> ins = {b.input("x", shape_of(c.dims), t),
                                   b.constant("pads", int64_tensor({static_cast<int64_t>(c.pads.size())}, c.pads))};
        if (c.mode == "constant") ins.push_back(b.constant("value", of_type(Tensor::scalar(DataType::kFloat, 0.5), t)));
        if (c.axes) {
          if (ins.size() == 2) ins.push_back(nullptr);
          ins.push_back(b.constant("axes", int64_tensor({static_cast<int64_t>(c.axes->size())}, *c.axes)));
        }
        b.output(b.op("Pad", ins, {mode_attr(c.mode)}));
        return b.take();
      };
      const Tensor x = of_type(random_tensor(c.dims, 5), t);
      const auto s = expect_same_as_reference(make, {x}, 0, 0);
      EXPECT_EQ(steps_of(s, "cpu.pad"), 1);
    }
  }
}

TEST(CpuPad, RunTimePadsStayOnTheReference) {
  const auto make = [] {
    ModelBuilder b(19);
    b.output(b.op("Pad", {b.input("x", {2, 3}), b.input("pads", {4}, DataType::kInt64)}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({2, 3}, 1), int64_tensor({4}, {1, 0, 0, 1})});
  EXPECT_EQ(steps_of(s, "cpu.pad"), 0);
}

}  // namespace
}  // namespace kiln::engine
