// The executor: plans per input shape, the arena, results owned by the caller, graph outputs that
// are inputs or constants, the observer's events, feed checks, control flow through the reference.
#include "engine/compiled_model.h"

#include "engine/engine_test_util.h"
#include "engine/onednn/weight_cache.h"

namespace kiln::engine {
namespace {

using namespace testing;

Model conv_chain(int convs, Shape input) {
  ModelBuilder b;
  Value* x = b.input("x", std::move(input));
  for (int i = 0; i < convs; ++i)
    x = b.op("Relu", {b.op("Conv", {x, b.constant("w" + std::to_string(i), random_tensor({16, 16, 3, 3}, i))},
                          {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})});
  b.output(x);
  return b.take();
}

TEST(CompiledModel, OnePlanPerInputShapeAndNoGuessedDims) {
  const auto make = [] { return conv_chain(2, {Dim::symbol("batch"), 16, 8, 8}); };
  CompiledModel m(make());
  EXPECT_EQ(m.plans(), 0);  // the batch is not known before a run
  Session ref(make());
  for (int64_t batch : {1, 3, 1}) {
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({batch, 16, 8, 8}, 7))};
    // 3x3 convs by Winograd: float32 errors of a few 1e-5 on values of order 1
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-4, 1e-4});
    EXPECT_TRUE(c.equal) << c.reason;
  }
  EXPECT_EQ(m.plans(), 2);
}

// A conv weight the plan computes (here W * 2; a static int8 weight's DequantizeLinear where the
// convs stay float) is packed once for every plan: the computed float tensor is let go of once the
// plan is made (its packed copy stays, known by its bytes' fingerprint), and the next plan's
// fold of it finds that copy instead of packing and holding another. Batches 1, 2, 1.
TEST(CompiledModel, AComputedWeightIsPackedOnceForEveryPlan) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {Dim::symbol("batch"), 64, 8, 8});
    Value* w = b.op("Mul", {b.constant("w", random_tensor({128, 64, 3, 3}, 1)), b.constant("two", Tensor::scalar(DataType::kFloat, 2.0f))});
    b.output(b.op("Conv", {x, w}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}));
    return b.take();
  };
  CompiledModel m(make());
  Session ref(make());
  size_t packed = 0;
  for (int64_t batch : {1, 2, 1}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({batch, 64, 8, 8}, 7))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-3, 1e-4});
    EXPECT_TRUE(c.equal) << c.reason;
    const PlanSummary sum = m.summary({{batch, 64, 8, 8}});
    if (!packed) packed = sum.weight_bytes;
    EXPECT_EQ(sum.weight_bytes, packed) << "packed again for a new plan";
  }
  EXPECT_GE(packed, size_t{128} * 64 * 9 * 4);
  EXPECT_EQ(m.plans(), 2);
}

// Weights let go of once packed (plain_weights.h) come back from their packed copies for the
// next plan: batches 1, 3, 1, 5 through one CompiledModel give the reference's results each time,
// and the weights are held once after every plan: packed with the plain bytes released (AVX-512:
// brgemm's blocked layout), or read where they are stored with nothing packed (AVX2: oneDNN's gemm
// takes row-major weights).
TEST(CompiledModel, ReleasedWeightsAreRestoredForANewPlan) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {Dim::symbol("batch"), 512});
    Value* h = b.op("Relu", {b.op("MatMul", {x, b.constant("w1", random_tensor({512, 1024}, 1))})});
    b.output(b.op("MatMul", {h, b.constant("w2", random_tensor({1024, 512}, 2))}));
    return b.take();
  };
  CompiledModel m(make());
  Session ref(make());
  for (int64_t batch : {1, 3, 1, 5}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({batch, 512}, 9 + batch))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-3, 1e-4});
    EXPECT_TRUE(c.equal) << c.reason;
    const PlanSummary sum = m.summary({{batch, 512}});
    const size_t plain = size_t{2} * 512 * 1024 * 4;
    EXPECT_LE(plain - sum.released_bytes + sum.weight_bytes, plain + plain / 16)
        << "held: " << plain - sum.released_bytes << " plain, " << sum.weight_bytes << " packed";
    if (sum.weight_bytes >= plain) {
      EXPECT_GE(sum.released_bytes, plain);
    }
  }
  EXPECT_EQ(m.plans(), 3);
  // Each new plan found the packed copies as they were: no weight was unpacked for it.
  EXPECT_EQ(m.weight_cache().restored(), 0);
}

// A weight let go of that a node inference evaluates reads (here a ReduceMean of it, folded into a
// constant each plan) gets its plain bytes back before the next plan's inference; the matmul's
// packed copy serves every plan.
TEST(CompiledModel, AWeightInferenceReadsIsRestoredForTheNextPlan) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {Dim::symbol("batch"), 512});
    Value* w = b.constant("w", random_tensor({512, 1024}, 1));
    Value* mean = b.op("ReduceMean", {w}, {attr("keepdims", int64_t{0})});
    b.output(b.op("Add", {b.op("MatMul", {x, w}), mean}));
    return b.take();
  };
  CompiledModel m(make());
  Session ref(make());
  for (int64_t batch : {1, 3, 2}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({batch, 512}, 9 + batch))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-3, 1e-4});
    EXPECT_TRUE(c.equal) << c.reason;
  }
  // (AVX-512's matmul packs its weights and the plain ones go; AVX2's reads them in place.)
  const PlanSummary sum = m.summary({{2, 512}});
  if (cpu::active_isa() == cpu::Isa::kAvx512) {
    EXPECT_GT(sum.released_bytes, 0u);
  }
  if (sum.released_bytes > 0) {
    EXPECT_EQ(m.weight_cache().restored(), 2);  // before the second and the third plan's inference
  }
}

// A declared output type with symbolic dims (every ONNX file declares its outputs) stays symbolic
// after a plan: the next set of input shapes is checked against the declaration, not against the
// first plan's dims (PP-OCR's recognizer at two image widths failed so).
TEST(CompiledModel, PlansDoNotRewriteDeclaredTypes) {
  const auto make = [] {
    Model m = conv_chain(1, {Dim::symbol("batch"), 16, 8, 8});
    Value* y = m.graph->outputs[0];
    y->type = TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), 16, 8, 8});
    y->has_declared_type = true;
    return m;
  };
  CompiledModel m(make());
  Session ref(make());
  for (int64_t batch : {1, 3}) {
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({batch, 16, 8, 8}, 7))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-4, 1e-4});
    EXPECT_TRUE(c.equal) << c.reason;
  }
  EXPECT_EQ(m.plans(), 2);
  EXPECT_EQ(m.model().graph->outputs[0]->type.to_string(), "float[batch,16,8,8]");
}

// A plan whose steps are all too small for a second thread has no threads to back off from
// (engine/thread_backoff.h): its runs are never counted as put on one thread.
TEST(CompiledModel, APlanOfSmallStepsIsNotParallel) {
  ModelBuilder b;
  Value* x = b.input("x", {1, 8});
  b.output(b.op("Reshape", {b.op("Relu", {x}), b.constant("shape", int64_tensor({1}, {8}))}));
  CompiledModel small(b.take());
  EXPECT_FALSE(small.summary({{1, 8}}).parallel);
  EXPECT_TRUE(CompiledModel(conv_chain(2, {1, 16, 64, 64})).summary({{1, 16, 64, 64}}).parallel);
}

TEST(CompiledModel, KnownShapesArePlannedAtCreation) {
  CompiledModel m(conv_chain(1, {1, 16, 8, 8}));
  EXPECT_EQ(m.plans(), 1);
}

TEST(CompiledModel, ArenaReusesBuffersByLifetime) {
  CompiledModel m(conv_chain(8, {1, 16, 32, 32}));
  const PlanSummary s = m.summary({{1, 16, 32, 32}});
  const size_t one = 16 * 32 * 32 * sizeof(float);
  EXPECT_EQ(steps_of(s, "onednn.conv"), 8);
  EXPECT_LE(s.arena_bytes, 3 * one);  // 9 activations (input layout included) in 2-3 buffers
}

// Every plan runs in the model's one buffer: a larger plan replaces it (the plans bound to the old
// one view the new one on their next run), a smaller plan takes it as it is.
TEST(CompiledModel, PlansShareOneRunMemory) {
  const auto make = [] { return conv_chain(3, {Dim::symbol("batch"), 16, 8, 8}); };
  CompiledModel m(make());
  Session ref(make());
  size_t largest = 0;
  for (int64_t batch : {1, 4, 1, 2, 4}) {
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({batch, 16, 8, 8}, batch))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{1e-3, 1e-3});
    EXPECT_TRUE(c.equal) << "batch " << batch << ": " << c.reason;
    largest = std::max(largest, m.summary({{batch, 16, 8, 8}}).run_bytes);
  }
  EXPECT_EQ(m.plans(), 3);
  EXPECT_EQ(m.plan_stats().run_memory_bytes, largest);  // not the three plans' sum
}

TEST(CompiledModel, ResultsAreTheCallersOwn) {
  CompiledModel m(conv_chain(2, {1, 16, 8, 8}));
  const auto first = m.run({RtValue::of(random_tensor({1, 16, 8, 8}, 1))});
  const Tensor kept = first[0].tensor.clone();
  m.run({RtValue::of(random_tensor({1, 16, 8, 8}, 2))});
  for (int64_t i = 0; i < kept.numel(); ++i) ASSERT_EQ(first[0].tensor.data<float>()[i], kept.data<float>()[i]);
}

// A graph output is made in the buffer of the last run's output once the caller has let go of it
// (no new pages to fault in), never while the caller still holds it; a smaller output of another
// plan takes a larger buffer.
TEST(CompiledModel, OutputsTakeTheLastRunsBuffersTheCallerLetGoOf) {
  const auto make = [] { return conv_chain(2, {Dim::symbol("batch"), 16, 8, 8}); };
  CompiledModel m(make());
  Session ref(make());
  const auto input = [](int64_t batch, uint64_t seed) {
    return std::vector<RtValue>{RtValue::of(random_tensor({batch, 16, 8, 8}, seed))};
  };
  const void* first = m.run(input(2, 1))[0].tensor.raw();  // let go of at once
  const auto held = m.run(input(2, 2));
  EXPECT_EQ(held[0].tensor.raw(), first);
  const Tensor copy = held[0].tensor.clone();
  const void* larger = nullptr;
  {
    const auto next = m.run(input(2, 3));
    EXPECT_NE(next[0].tensor.raw(), held[0].tensor.raw());  // held: not written over
    EXPECT_EQ(std::memcmp(held[0].tensor.raw(), copy.raw(), copy.nbytes()), 0);
    larger = next[0].tensor.raw();
  }
  const auto in = input(1, 4);
  const auto smaller = m.run(in);  // another plan, its output in the batch-2 buffer
  EXPECT_EQ(smaller[0].tensor.raw(), larger);
  const Comparison c = compare_values(smaller[0], ref.run(in)[0], Tolerance{1e-3, 1e-3});
  EXPECT_TRUE(c.equal) << c.reason;
}

TEST(CompiledModel, OutputsThatAreInputsConstantsOrReadAgain) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {2, 3});
    Value* c = b.constant("c", random_tensor({2, 3}, 4));
    Value* r = b.op("Relu", {x});
    b.output(x);
    b.output(c);
    b.output(r);
    b.output(b.op("Add", {r, c}));
    return b.take();
  };
  expect_same_as_reference(make, {random_tensor({2, 3}, 1)});
}

// What the events said (their spans live only during the call).
class Recorder : public RunObserver {
 public:
  struct Seen {
    const Node* node;
    std::string kernel;
    int64_t start_ns, end_ns;
    std::vector<std::vector<int64_t>> output_dims;
  };
  void on_node(const NodeEvent& e) override {
    Seen s{e.node, std::string(e.kernel), e.start_ns, e.end_ns, {}};
    for (const RtValue& v : e.outputs) s.output_dims.push_back(v.tensor.dims());
    events.push_back(std::move(s));
  }
  std::vector<Seen> events;
};

TEST(CompiledModel, ObserverHearsOneEventPerStep) {
  CompiledModel m(conv_chain(3, {1, 16, 8, 8}));
  const PlanSummary s = m.summary({{1, 16, 8, 8}});
  Recorder r;
  const int64_t t0 = steady_now_ns();
  m.run({RtValue::of(random_tensor({1, 16, 8, 8}, 1))}, &r);
  const int64_t t1 = steady_now_ns();
  ASSERT_EQ(static_cast<int>(r.events.size()), s.steps);
  int convs = 0;
  for (const Recorder::Seen& e : r.events) {
    ASSERT_NE(e.node, nullptr);
    EXPECT_FALSE(e.kernel.empty());
    EXPECT_LE(t0, e.start_ns);
    EXPECT_LE(e.start_ns, e.end_ns);
    EXPECT_LE(e.end_ns, t1);
    if (e.kernel == "onednn.conv") {
      ++convs;
      EXPECT_EQ(e.node->op_type, "Conv");  // the fused group reports its anchor
      ASSERT_EQ(e.output_dims.size(), 1u);
      EXPECT_EQ(e.output_dims[0], (std::vector<int64_t>{1, 16, 8, 8}));
    }
  }
  EXPECT_EQ(convs, 3);
}

TEST(CompiledModel, BadFeedsFail) {
  CompiledModel m(conv_chain(1, {1, 16, 8, 8}));
  auto kind_of = [&](std::vector<RtValue> feeds) {
    try {
      m.run(feeds);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::kRuntime;
  };
  EXPECT_EQ(kind_of({RtValue::of(random_tensor({1, 16, 8, 9}, 1))}), ErrorKind::kBadInput);
  EXPECT_EQ(kind_of({RtValue::of(random_tensor({16, 8, 8}, 1))}), ErrorKind::kBadInput);
  EXPECT_EQ(kind_of({RtValue::of(Tensor(DataType::kInt64, {1, 16, 8, 8}))}), ErrorKind::kBadInput);
  EXPECT_EQ(kind_of({}), ErrorKind::kBadInput);
}

TEST(CompiledModel, StepErrorsNameTheNode) {
  ModelBuilder b;
  Value* ids = b.input("ids", {1}, DataType::kInt64);
  b.output(b.op("Gather", {b.constant("t", random_tensor({3, 2}, 1)), ids}));
  CompiledModel m(b.take());
  try {
    m.run({RtValue::of(int64_tensor({1}, {7}))});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Gather_0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::engine
