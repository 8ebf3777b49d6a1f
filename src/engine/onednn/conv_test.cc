// onednn.conv against the reference Conv: geometries (strides, pads, SAME, dilations, groups,
// depthwise, 1-D and 3-D, odd sizes) and the chains fused after it.
#include "engine/cpu/cpu_features.h"
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

struct ConvCase {
  std::vector<int64_t> x, w;  // input, weights
  std::vector<Attribute> attrs;
  bool bias = true;
};

MakeModel conv_model(const ConvCase& c, const std::function<Value*(ModelBuilder&, Value*, Value*)>& tail) {
  return [=] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of(c.x));
    std::vector<Value*> ins = {x, b.constant("w", random_tensor(c.w, 2))};
    if (c.bias) ins.push_back(b.constant("b", random_tensor({c.w[0]}, 3)));
    Value* y = b.op("Conv", ins, c.attrs);
    b.output(tail ? tail(b, y, x) : y);
    return b.take();
  };
}

void expect_conv(const ConvCase& c, const std::function<Value*(ModelBuilder&, Value*, Value*)>& tail = nullptr,
                 int fused_steps = 1) {
  const auto s = expect_same_as_reference(conv_model(c, tail), {random_tensor(c.x, 1)});
  EXPECT_EQ(steps_of(s, "onednn.conv"), 1);
  EXPECT_EQ(steps_of(s, "reference"), 0);
  EXPECT_EQ(s.steps - steps_of(s, "onednn.reorder"), fused_steps);
}

TEST(OnednnConv, Geometries) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 13, 11}, {8, 3, 3, 3}, {}},
      {{2, 5, 9, 9}, {7, 5, 1, 1}, {}},
      {{1, 16, 15, 17}, {16, 16, 3, 3}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}},
      {{1, 8, 14, 14}, {12, 8, 3, 3}, {attr("strides", std::vector<int64_t>{2, 2}), attr("pads", std::vector<int64_t>{0, 1, 1, 0})}},
      {{1, 6, 12, 10}, {4, 6, 3, 3}, {attr("dilations", std::vector<int64_t>{2, 2})}, false},
      {{1, 8, 10, 10}, {6, 4, 3, 3}, {attr("group", int64_t{2}), attr("pads", std::vector<int64_t>{1, 1, 1, 1})}},
      {{1, 32, 9, 9}, {32, 1, 3, 3}, {attr("group", int64_t{32}), attr("strides", std::vector<int64_t>{2, 2}), attr("pads", std::vector<int64_t>{1, 1, 1, 1})}},
      {{1, 4, 7, 9}, {5, 4, 3, 2}, {attr("auto_pad", std::string("SAME_UPPER")), attr("strides", std::vector<int64_t>{2, 2})}},
      {{1, 4, 8, 8}, {5, 4, 4, 4}, {attr("auto_pad", std::string("SAME_LOWER"))}},
      {{1, 4, 8, 8}, {5, 4, 3, 3}, {attr("auto_pad", std::string("VALID"))}},
      {{2, 3, 17}, {4, 3, 5}, {attr("strides", std::vector<int64_t>{3}), attr("pads", std::vector<int64_t>{2, 1})}},
      {{1, 2, 5, 6, 7}, {3, 2, 3, 3, 3}, {attr("pads", std::vector<int64_t>{1, 0, 1, 1, 0, 1})}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    expect_conv(cases[i]);
  }
}

TEST(OnednnConv, FusesActivations) {
  const ConvCase c{{1, 6, 9, 9}, {8, 6, 3, 3}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}};
  using Tail = std::function<Value*(ModelBuilder&, Value*, Value*)>;
  const std::vector<std::pair<std::string, Tail>> tails = {
      {"relu", [](ModelBuilder& b, Value* y, Value*) { return b.op("Relu", {y}); }},
      {"relu6", [](ModelBuilder& b, Value* y, Value*) {
         return b.op("Clip", {y, b.constant("lo", Tensor::scalar(DataType::kFloat, 0)),
                              b.constant("hi", Tensor::scalar(DataType::kFloat, 6))});
       }},
      {"silu", [](ModelBuilder& b, Value* y, Value*) { return b.op("Mul", {y, b.op("Sigmoid", {y})}); }},
      {"hardswish", [](ModelBuilder& b, Value* y, Value*) { return b.op("HardSwish", {y}); }},
      {"hardsigmoid", [](ModelBuilder& b, Value* y, Value*) {
         return b.op("HardSigmoid", {y}, {attr("alpha", 0.3f), attr("beta", 0.4f)});
       }},
      {"leaky", [](ModelBuilder& b, Value* y, Value*) { return b.op("LeakyRelu", {y}, {attr("alpha", 0.2f)}); }},
      {"tanh, scale", [](ModelBuilder& b, Value* y, Value*) {
         return b.op("Mul", {b.op("Tanh", {y}), b.constant("s", Tensor::scalar(DataType::kFloat, 2.5))});
       }},
      {"channel bias", [](ModelBuilder& b, Value* y, Value*) {
         return b.op("Relu", {b.op("Add", {y, b.constant("c", random_tensor({8, 1, 1}, 9))})});
       }},
      {"channel scale", [](ModelBuilder& b, Value* y, Value*) {
         return b.op("Mul", {y, b.constant("c", random_tensor({1, 8, 1, 1}, 9))});
       }},
  };
  for (const auto& [name, tail] : tails) {
    SCOPED_TRACE(name);
    expect_conv(c, tail);
  }
}

// oneDNN 2.6 gives every eltwise post-op of one algorithm the first one's parameters: chains of
// scalar Mul/Add (paddle2onnx's affine after a conv) fold into one linear op, and a repeat that
// cannot fold stays a step of its own.
TEST(OnednnConv, RepeatedEltwiseKeepTheirOwnParameters) {
  const ConvCase c{{1, 6, 9, 9}, {8, 6, 3, 3}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}};
  using Tail = std::function<Value*(ModelBuilder&, Value*, Value*)>;
  const auto scalar = [](ModelBuilder& b, const char* name, float v) {
    return b.constant(name, Tensor::scalar(DataType::kFloat, v));
  };
  const std::vector<std::tuple<std::string, Tail, int>> tails = {
      {"mul, add", [&](ModelBuilder& b, Value* y, Value*) {
         return b.op("Add", {b.op("Mul", {scalar(b, "s", 2.f), y}), scalar(b, "t", 0.5f)});
       }, 1},
      {"add, add, sub", [&](ModelBuilder& b, Value* y, Value*) {
         Value* a = b.op("Add", {b.op("Add", {y, scalar(b, "s", 0.5f)}), scalar(b, "t", 2.f)});
         return b.op("Sub", {scalar(b, "u", 1.f), a});
       }, 1},
      {"hardsigmoid, mul", [&](ModelBuilder& b, Value* y, Value*) {
         Value* h = b.op("HardSigmoid", {y}, {attr("alpha", 0.3f), attr("beta", 0.4f)});
         return b.op("Mul", {h, scalar(b, "s", 3.f)});
       }, 2},
      {"leaky, leaky", [](ModelBuilder& b, Value* y, Value*) {
         return b.op("LeakyRelu", {b.op("LeakyRelu", {y}, {attr("alpha", 0.1f)})}, {attr("alpha", 0.5f)});
       }, 2},
  };
  for (const auto& [name, tail, steps] : tails) {
    SCOPED_TRACE(name);
    expect_conv(c, tail, steps);
  }
}

// conv -> Add(residual) -> Relu, the residual from another conv of the same input (ResNet's
// projection shortcut): one sum post-op, in place.
TEST(OnednnConv, FusesResidualSum) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 8, 10, 10});
    Value* a = b.op("Conv", {x, b.constant("w1", random_tensor({16, 8, 3, 3}, 2)),
                             b.constant("b1", random_tensor({16}, 3))},
                    {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
    Value* r = b.op("Conv", {x, b.constant("w2", random_tensor({16, 8, 1, 1}, 4))});
    b.output(b.op("Relu", {b.op("Add", {a, r})}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({1, 8, 10, 10}, 1)});
  EXPECT_EQ(steps_of(s, "onednn.conv"), 2);
  EXPECT_EQ(s.steps - steps_of(s, "onednn.reorder"), 2);  // the Add and the Relu are fused
}

// The residual is still read after the Add: the conv must not write over it.
TEST(OnednnConv, ResidualStillNeededIsCopied) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 4, 6, 6});
    Value* r = b.op("Relu", {x});
    Value* a = b.op("Conv", {r, b.constant("w", random_tensor({4, 4, 3, 3}, 2))},
                    {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
    Value* sum = b.op("Add", {a, r});
    b.output(b.op("Mul", {sum, r}));
    return b.take();
  };
  expect_same_as_reference(make, {random_tensor({1, 4, 6, 6}, 1)});
}

// A graph input as the residual is never overwritten (the caller's tensor).
TEST(OnednnConv, ResidualFromTheCallerIsNotOverwritten) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 4, 6, 6});
    Value* a = b.op("Conv", {x, b.constant("w", random_tensor({4, 4, 3, 3}, 2))},
                    {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
    b.output(b.op("Add", {a, x}));
    return b.take();
  };
  const Tensor x = random_tensor({1, 4, 6, 6}, 1);
  const Tensor before = x.clone();
  expect_same_as_reference(make, {x});
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(x.data<float>()[i], before.data<float>()[i]);
}

// Zero-size and unsupported problems run on the reference kernel.
TEST(OnednnConv, ZeroSizeRunsOnTheReference) {
  const ConvCase c{{0, 3, 5, 5}, {4, 3, 3, 3}, {}};
  const auto s = expect_same_as_reference(conv_model(c, nullptr), {random_tensor(c.x, 1)});
  EXPECT_EQ(steps_of(s, "onednn.conv"), 0);
  EXPECT_EQ(steps_of(s, "reference"), 1);
}

}  // namespace
}  // namespace kiln::engine

namespace kiln::engine {
namespace {

using namespace testing;

// 3x3 stride-1 convs by Winograd (where oneDNN has it), in a chain with 1x1 convs that then read
// its channel-blocked layout; against the reference within Winograd's float32 error.
TEST(OnednnConv, WinogradChain) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 32, 14, 14});
    Value* y = b.op("Relu", {b.op("Conv", {x, b.constant("w1", random_tensor({32, 32, 3, 3}, 2, -0.2f, 0.2f)),
                                           b.constant("b1", random_tensor({32}, 3))},
                                  {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})});
    y = b.op("Conv", {y, b.constant("w2", random_tensor({64, 32, 1, 1}, 4))});
    b.output(b.op("Add", {y, b.op("Conv", {x, b.constant("w3", random_tensor({64, 32, 1, 1}, 5))})}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({1, 32, 14, 14}, 1)}, 1e-3, 1e-4);
  EXPECT_EQ(steps_of(s, "onednn.conv"), 3);
  EXPECT_EQ(steps_of(s, "reference"), 0);
}

}  // namespace
}  // namespace kiln::engine

namespace kiln::engine {
namespace {

using namespace testing;

// The stem (a conv on the model's input) writes channel-blocked when Winograd convs follow and
// no grouped ones, so the 3x3 conv after it reads its result as is; otherwise it stays
// channels-last (oneDNN's depthwise convs run faster so).
TEST(OnednnConv, StemWritesBlockedWhenWinogradConvsFollow) {
  for (bool winograd : {true, false})
    for (bool depthwise : {false, true}) {
      SCOPED_TRACE(fmt::format("{}{}", winograd ? "winograd" : "direct", depthwise ? ", depthwise" : ""));
      const auto make = [=] {
        ModelBuilder b;
        Value* x = b.op("Conv", {b.input("x", {1, 3, 20, 20}), b.constant("w0", random_tensor({16, 3, 3, 3}, 2))},
                        {attr("strides", std::vector<int64_t>{2, 2})});
        const auto pads = attr("pads", std::vector<int64_t>{1, 1, 1, 1});
        Value* y = b.op("Conv", {b.op("Relu", {x}), b.constant("w1", random_tensor({32, 16, 3, 3}, 3))}, {pads});
        if (depthwise)
          y = b.op("Conv", {y, b.constant("w2", random_tensor({32, 1, 3, 3}, 4))}, {pads, attr("group", int64_t{32})});
        b.output(y);
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor({1, 3, 20, 20}, 1)}, 1e-3, 1e-4,
                                              {.winograd = winograd});
      EXPECT_EQ(steps_of(s, "onednn.conv"), depthwise ? 3 : 2);
      if (cpu::active_isa() == cpu::Isa::kAvx512) {
        // blocked: the stem reads the row-major input itself, only the result is reordered;
        // channels-last: the input too, and before a Winograd conv
        EXPECT_EQ(steps_of(s, "onednn.reorder"), !winograd ? 2 : depthwise ? 3 : 1) << s.listing;
      }
    }
}

// Squeeze-and-excitation: Mul(x, s) with s per channel feeding a 1x1 conv whose weights are
// smaller than x; the scale goes into the weights each run, and the Mul is no step. Also
// through a grouped conv, and with the scale first.
// Channel counts that leave blocked layouts padded (20 in, 12 out) and a 3x3 kernel too.
TEST(OnednnConv, ChannelScaleOfTheInputGoesIntoTheWeights) {
  for (int64_t c : {16, 20})
    for (int64_t k : {1, 3})
      for (int64_t group : {1, 2})
        for (bool scale_first : {false, true}) {
          SCOPED_TRACE(fmt::format("{} channels, {}x{}, group {}{}", c, k, k, group,
                                   scale_first ? ", scale first" : ""));
          const auto make = [=] {
            ModelBuilder b;
            Value* x = b.op("Relu", {b.input("x", {1, c, 12, 12})});
            Value* s = b.op("Sigmoid", {b.op("Conv", {b.op("GlobalAveragePool", {x}),
                                                      b.constant("wse", random_tensor({c, c, 1, 1}, 3))})});
            Value* y = b.op("Mul", scale_first ? std::vector<Value*>{s, x} : std::vector<Value*>{x, s});
            b.output(b.op("Conv", {y, b.constant("w", random_tensor({12, c / group, k, k}, 4)),
                                   b.constant("b", random_tensor({12}, 5))},
                          {attr("group", group)}));
            return b.take();
          };
          const auto s = expect_same_as_reference(make, {random_tensor({1, c, 12, 12}, 1)});
          EXPECT_EQ(steps_of(s, "onednn.conv"), 2);
          EXPECT_EQ(steps_of(s, "cpu.elementwise"), 1);  // the Relu; the Mul is gone
        }
}

}  // namespace
}  // namespace kiln::engine
