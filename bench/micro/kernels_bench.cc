// Microbenchmarks: each CPU kernel (src/engine/cpu) beside the reference kernel of the same op
// (src/ops) on shapes from the benchmark models. Pairs are named kiln/<what> and ref/<what>, so
// the speedup is the ratio of the two lines.
//
//   build-cpu/kiln_micro_bench [--benchmark_filter=Gelu] [--benchmark_min_time=0.2]
//   KILN_CPU_ISA=avx2 build-cpu/kiln_micro_bench     (the AVX2 kernels on an AVX-512 machine)
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "engine/cpu/aligned.h"
#include "engine/cpu/cpu_features.h"
#include "engine/cpu/elementwise.h"
#include "engine/cpu/fused_elementwise.h"
#include "engine/cpu/kernels.h"
#include "engine/cpu/layout.h"
#include "engine/cpu/nms.h"
#include "engine/cpu/normalization.h"
#include "engine/cpu/recurrent_gemm.h"
#include "engine/cpu/reduce.h"
#include "engine/cpu/reference_op.h"
#include "engine/cpu/resize.h"
#include "engine/cpu/softmax.h"

namespace kiln::cpu {
namespace {

Tensor input(std::vector<int64_t> dims, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  return random_tensor(std::move(dims), rng);
}

// Bytes read and written per iteration, so the report shows bandwidth too: the body says how many
// floats it touches (set_bytes), and the count is applied once the loop is done (the state's
// iteration count is only known then).
thread_local int64_t g_floats_touched = 0;
void set_bytes(benchmark::State&, int64_t floats_touched) { g_floats_touched = floats_touched; }

// Registers a benchmark; `body` runs once per iteration.
template <class F>
void add(const std::string& name, F body) {
  benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& state) {
    g_floats_touched = 0;
    for (auto _ : state) body(state);
    state.SetBytesProcessed(state.iterations() * g_floats_touched * static_cast<int64_t>(sizeof(float)));
  })->Unit(benchmark::kMicrosecond)->UseRealTime();
}

// Activations on a ResNet/MobileNet feature map and on BERT's FFN.
void register_unary() {
  struct Case {
    UnaryOp op;
    const char* onnx;  // reference op
    std::vector<int64_t> dims;
  };
  const Case cases[] = {
      {UnaryOp::kRelu, "Relu", {1, 64, 112, 112}},
      {UnaryOp::kSigmoid, "Sigmoid", {1, 96, 112, 112}},
      {UnaryOp::kTanh, "Tanh", {128, 3072}},
      {UnaryOp::kErf, "Erf", {128, 3072}},
      {UnaryOp::kGeluErf, "Gelu", {128, 3072}},
      {UnaryOp::kHardSwish, "HardSwish", {1, 96, 112, 112}},
      {UnaryOp::kExp, "Exp", {128, 3072}},
  };
  for (const Case& c : cases) {
    const std::string what = std::string(c.onnx) + "/" + dims_to_string(c.dims);
    auto x = std::make_shared<Tensor>(input(c.dims));
    auto y = std::make_shared<Tensor>(DataType::kFloat, c.dims);
    const UnaryOp op = c.op;
    add("kiln/" + what, [=](benchmark::State& s) {
      unary(op, x->data<float>(), y->data<float>(), x->numel());
      set_bytes(s, 2 * x->numel());
    });
    auto ref = std::make_shared<ReferenceOp>(c.onnx);
    add("ref/" + what, [=](benchmark::State& s) {
      benchmark::DoNotOptimize(ref->run1({*x}));
      set_bytes(s, 2 * x->numel());
    });
  }
  // SiLU as the model has it: Sigmoid then Mul, against the fused Swish kernel.
  const std::vector<int64_t> d = {1, 96, 112, 112};
  auto x = std::make_shared<Tensor>(input(d));
  auto y = std::make_shared<Tensor>(DataType::kFloat, d);
  add("kiln/SiLU/" + dims_to_string(d), [=](benchmark::State& s) {
    unary(UnaryOp::kSwish, x->data<float>(), y->data<float>(), x->numel());
    set_bytes(s, 2 * x->numel());
  });
  add("ref/SiLU/" + dims_to_string(d), [=](benchmark::State& s) {
    const Tensor sig = ReferenceOp("Sigmoid").run1({*x});
    benchmark::DoNotOptimize(ReferenceOp("Mul").run1({*x, sig}));
    set_bytes(s, 2 * x->numel());
  });
}

// Binary ops: same shape (a residual add), a channel bias (NCHW), a row bias (BERT).
void register_binary() {
  struct Case {
    BinaryOp op;
    std::vector<int64_t> a, b;
  };
  const Case cases[] = {
      {BinaryOp::kAdd, {1, 256, 56, 56}, {1, 256, 56, 56}},
      {BinaryOp::kAdd, {1, 64, 112, 112}, {64, 1, 1}},
      {BinaryOp::kAdd, {1, 56, 56, 64}, {64}},         // NHWC bias: short rows
      {BinaryOp::kAdd, {1, 4, 56, 56, 16}, {4, 1, 1, 16}},  // oneDNN's nChw16c blocks
      {BinaryOp::kMul, {128, 3072}, {3072}},
      {BinaryOp::kDiv, {12, 128, 128}, {}},
      {BinaryOp::kPow, {128, 768}, {}},
  };
  for (const Case& c : cases) {
    const std::string what = std::string(binary_name(c.op)) + "/" + dims_to_string(c.a) + "x" +
                             dims_to_string(c.b);
    auto a = std::make_shared<Tensor>(input(c.a, 1));
    auto b = std::make_shared<Tensor>(c.b.empty() ? Tensor::scalar(DataType::kFloat, 2.0f)
                                                  : input(c.b, 2));
    auto y = std::make_shared<Tensor>(DataType::kFloat, c.a);
    const BinaryOp op = c.op;
    const std::vector<int64_t> ad = c.a, bd = c.b;
    add("kiln/" + what, [=](benchmark::State& s) {
      binary_broadcast(op, a->data<float>(), ad, b->data<float>(), bd, y->data<float>());
      set_bytes(s, 2 * a->numel() + b->numel());
    });
    auto ref = std::make_shared<ReferenceOp>(binary_name(op));
    add("ref/" + what, [=](benchmark::State& s) {
      benchmark::DoNotOptimize(ref->run1({*a, *b}));
      set_bytes(s, 2 * a->numel() + b->numel());
    });
  }
}

// Fused chains against the same ops one by one: Gelu as exported before opset 20, and
// bias + Relu over channels.
void register_fused() {
  const std::vector<int64_t> d = {128, 3072};
  auto x = std::make_shared<Tensor>(input(d));
  auto y = std::make_shared<Tensor>(DataType::kFloat, d);
  auto gelu = std::make_shared<EwProgram>();
  {
    const EwValue v = gelu->input(0);
    const EwValue e =
        gelu->unary(UnaryOp::kErf, gelu->binary(BinaryOp::kDiv, v, gelu->constant(1.41421356f)));
    gelu->set_result(gelu->binary(BinaryOp::kMul, gelu->binary(BinaryOp::kMul, v, gelu->constant(0.5f)),
                                  gelu->binary(BinaryOp::kAdd, e, gelu->constant(1.0f))));
  }
  add("kiln/GeluChain(5 ops)/" + dims_to_string(d), [=](benchmark::State& s) {
    const EwInput in[] = {{x->data<float>(), x->dims()}};
    run_fused(*gelu, in, y->data<float>(), d);
    set_bytes(s, 2 * x->numel());
  });
  add("ref/GeluChain(5 ops)/" + dims_to_string(d), [=](benchmark::State& s) {
    const Tensor c = Tensor::scalar(DataType::kFloat, 1.41421356f);
    const Tensor half = Tensor::scalar(DataType::kFloat, 0.5f);
    const Tensor one = Tensor::scalar(DataType::kFloat, 1.0f);
    const Tensor e = ReferenceOp("Erf").run1({ReferenceOp("Div").run1({*x, c})});
    benchmark::DoNotOptimize(ReferenceOp("Mul").run1(
        {ReferenceOp("Mul").run1({*x, half}), ReferenceOp("Add").run1({e, one})}));
    set_bytes(s, 2 * x->numel());
  });
  const std::vector<int64_t> fd = {1, 64, 112, 112}, bd = {64, 1, 1};
  auto f = std::make_shared<Tensor>(input(fd));
  auto bias = std::make_shared<Tensor>(input(bd, 2));
  auto fy = std::make_shared<Tensor>(DataType::kFloat, fd);
  auto add_relu = std::make_shared<EwProgram>();
  add_relu->set_result(add_relu->unary(
      UnaryOp::kRelu, add_relu->binary(BinaryOp::kAdd, add_relu->input(0), add_relu->input(1))));
  // EfficientNet's squeeze-excitation scale, channels last: rows of 96 (shorter than a block).
  const std::vector<int64_t> sd = {1, 56, 56, 96}, scd = {1, 1, 1, 96};
  auto se = std::make_shared<Tensor>(input(sd));
  auto se_scale = std::make_shared<Tensor>(input(scd, 2));
  auto se_y = std::make_shared<Tensor>(DataType::kFloat, sd);
  auto se_mul = std::make_shared<EwProgram>();
  se_mul->set_result(se_mul->binary(BinaryOp::kMul, se_mul->input(0), se_mul->input(1)));
  add("kiln/MulChannelsLast/" + dims_to_string(sd), [=](benchmark::State& s) {
    const EwInput in[] = {{se->data<float>(), sd}, {se_scale->data<float>(), scd}};
    run_fused(*se_mul, in, se_y->data<float>(), sd);
    set_bytes(s, 2 * se->numel());
  });
  add("ref/MulChannelsLast/" + dims_to_string(sd), [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ReferenceOp("Mul").run1({*se, *se_scale}));
    set_bytes(s, 2 * se->numel());
  });
  add("kiln/AddRelu/" + dims_to_string(fd), [=](benchmark::State& s) {
    const EwInput in[] = {{f->data<float>(), fd}, {bias->data<float>(), bd}};
    run_fused(*add_relu, in, fy->data<float>(), fd);
    set_bytes(s, 2 * f->numel());
  });
  add("ref/AddRelu/" + dims_to_string(fd), [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ReferenceOp("Relu").run1({ReferenceOp("Add").run1({*f, *bias})}));
    set_bytes(s, 2 * f->numel());
  });
}

// BERT's attention softmax and LayerNorm, a classifier's global average pool.
void register_rows() {
  const std::vector<int64_t> sd = {12, 128, 128};
  auto sx = std::make_shared<Tensor>(input(sd));
  auto sy = std::make_shared<Tensor>(DataType::kFloat, sd);
  add("kiln/Softmax/" + dims_to_string(sd), [=](benchmark::State& s) {
    softmax(sx->data<float>(), sy->data<float>(), 12 * 128, 128, 1);
    set_bytes(s, 2 * sx->numel());
  });
  add("ref/Softmax/" + dims_to_string(sd), [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ReferenceOp("Softmax").run1({*sx}));
    set_bytes(s, 2 * sx->numel());
  });
  const std::vector<int64_t> ld = {128, 768};
  auto lx = std::make_shared<Tensor>(input(ld));
  auto scale = std::make_shared<Tensor>(input({768}, 2));
  auto bias = std::make_shared<Tensor>(input({768}, 3));
  auto ly = std::make_shared<Tensor>(DataType::kFloat, ld);
  add("kiln/LayerNormalization/" + dims_to_string(ld), [=](benchmark::State& s) {
    layer_norm(lx->data<float>(), scale->data<float>(), bias->data<float>(), ly->data<float>(), 128,
               768, 1e-12f);
    set_bytes(s, 2 * lx->numel());
  });
  add("ref/LayerNormalization/" + dims_to_string(ld), [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ReferenceOp("LayerNormalization", 17).run1({*lx, *scale, *bias}));
    set_bytes(s, 2 * lx->numel());
  });
  const std::vector<int64_t> pd = {1, 1280, 7, 7};
  auto px = std::make_shared<Tensor>(input(pd));
  auto py = std::make_shared<Tensor>(DataType::kFloat, std::vector<int64_t>{1280});
  add("kiln/ReduceMean(HW)/" + dims_to_string(pd), [=](benchmark::State& s) {
    reduce(ReduceOp::kMean, px->data<float>(), py->data<float>(), 1280, 49, 1);
    set_bytes(s, px->numel());
  });
  auto axes = std::make_shared<Tensor>(Tensor::from_int64s(std::vector<int64_t>{2, 3}));
  add("ref/ReduceMean(HW)/" + dims_to_string(pd), [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ReferenceOp("ReduceMean", 18).run1({*px, *axes}));
    set_bytes(s, px->numel());
  });
}

// One step of a recurrence at batch 1: the state times R for every gate (H = 256, the speech
// model's LSTM and GRU), on kiln's packed blocks (what cpu.lstm / cpu.gru run, one thread) and as
// one oneDNN sgemm of the plain R. R is 1 MB (LSTM) or 768 KB (GRU): read from the core's L2.
void register_recurrent() {
  for (int64_t gates : {4, 3}) {
    const int64_t h = 256;
    auto r = std::make_shared<Tensor>(input({gates * h, h}));
    auto state = std::make_shared<Tensor>(input({h}, 2));
    auto packed = std::make_shared<engine::cpu::PackedRecurrent>(r->data<float>(), gates, h);
    auto out = std::make_shared<std::vector<float>>(static_cast<size_t>(gates * h));
    const std::string what = fmt::format("RecurrentStep/H{}x{}gates", h, gates);
    add("kiln/" + what, [=](benchmark::State& s) {
      for (int64_t b = 0; b < packed->blocks(); ++b)
        packed->product(b, state->data<float>(), out->data() + b * gates * engine::cpu::PackedRecurrent::kBlockUnits);
      set_bytes(s, r->numel());
    });
    add("kiln_rows/" + what, [=](benchmark::State& s) {
      kiln::cpu::kernels().rows_times_rows(state->data<float>(), 1, h, r->data<float>(), gates * h, nullptr, out->data(), gates * h);
      set_bytes(s, r->numel());
    });
    add("sgemm/" + what, [=](benchmark::State& s) {
      engine::cpu::gemm_bt("bench", 1, gates * h, h, state->data<float>(), h, r->data<float>(), out->data(), gates * h);
      set_bytes(s, r->numel());
    });
  }
}

// Products on a constant weight: x [M, K] times a Linear layer's weight [N, K] as it is stored
// (rows_times_rows: cpu.matmul, the recurrent steps), times its transpose [K, N]
// (rows_times_matrix), both aligned, the first also 4 bytes off a cache line; and oneDNN's sgemm
// of the same. 1-16 x 768 x 256: the MLP's first Gemm; 128 x 80 x 1024 and 128 x 256 x 768: the
// speech model's LSTM and GRU input projections (its 128 steps at once).
void register_small_matmul() {
  struct Shape {
    int64_t m, k, n;
  };
  for (const Shape& sh : {Shape{1, 768, 256}, Shape{4, 768, 256}, Shape{16, 768, 256},
                          Shape{128, 80, 1024}, Shape{128, 256, 768}}) {
    const int64_t m = sh.m, k = sh.k, n = sh.n;
    auto w = std::make_shared<Tensor>(input({n, k}));
    auto wt = std::make_shared<kiln::cpu::AlignedFloats>(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j) (*wt)[j * n + i] = w->data<float>()[i * k + j];
    auto off = std::make_shared<kiln::cpu::AlignedFloats>(static_cast<size_t>(k * n + 16));
    std::copy(w->data<float>(), w->data<float>() + n * k, off->data() + 1);
    auto bias = std::make_shared<std::vector<float>>(static_cast<size_t>(n), 0.5f);
    auto x = std::make_shared<Tensor>(input({m, k}, 2));
    auto y = std::make_shared<std::vector<float>>(static_cast<size_t>(m * n));
    const std::string what = fmt::format("Product/{}x{}x{}", m, k, n);
    add("kiln_rows/" + what, [=](benchmark::State& s) {
      kiln::cpu::kernels().rows_times_rows(x->data<float>(), m, k, w->data<float>(), n, bias->data(), y->data(), n);
      set_bytes(s, w->numel());
    });
    add("kiln_rows_misaligned/" + what, [=](benchmark::State& s) {
      kiln::cpu::kernels().rows_times_rows(x->data<float>(), m, k, off->data() + 1, n, bias->data(), y->data(), n);
      set_bytes(s, w->numel());
    });
    add("kiln_cols/" + what, [=](benchmark::State& s) {
      kiln::cpu::kernels().rows_times_matrix(x->data<float>(), m, k, wt->data(), n, bias->data(), y->data(), n);
      set_bytes(s, w->numel());
    });
    add("sgemm/" + what, [=](benchmark::State& s) {
      engine::cpu::gemm_bt("bench", m, n, k, x->data<float>(), k, w->data<float>(), y->data(), n);
      set_bytes(s, w->numel());
    });
  }
}

// Data movement: BERT's head split, NCHW -> NHWC, Concat of two halves, the embedding lookup.
void register_layout() {
  struct Case {
    std::vector<int64_t> dims, perm;
  };
  const Case cases[] = {{{1, 128, 12, 64}, {0, 2, 1, 3}}, {{1, 64, 56, 56}, {0, 2, 3, 1}},
                        {{1, 12, 128, 64}, {0, 1, 3, 2}}};
  for (const Case& c : cases) {
    const std::string what = "Transpose/" + dims_to_string(c.dims) + "perm" + dims_to_string(c.perm);
    auto x = std::make_shared<Tensor>(input(c.dims));
    std::vector<int64_t> yd;
    for (int64_t p : c.perm) yd.push_back(c.dims[p]);
    auto y = std::make_shared<Tensor>(DataType::kFloat, yd);
    const std::vector<int64_t> dims = c.dims, perm = c.perm;
    add("kiln/" + what, [=](benchmark::State& s) {
      transpose(x->raw(), dims, perm, y->raw(), 4);
      set_bytes(s, 2 * x->numel());
    });
    auto ref = std::make_shared<ReferenceOp>("Transpose");
    ref->attr("perm", perm);
    add("ref/" + what, [=](benchmark::State& s) {
      benchmark::DoNotOptimize(ref->run1({*x}));
      set_bytes(s, 2 * x->numel());
    });
  }
  const std::vector<int64_t> cd = {1, 128, 56, 56};
  auto a = std::make_shared<Tensor>(input(cd, 1));
  auto b = std::make_shared<Tensor>(input(cd, 2));
  auto cy = std::make_shared<Tensor>(DataType::kFloat, std::vector<int64_t>{1, 256, 56, 56});
  add("kiln/Concat/2x" + dims_to_string(cd), [=](benchmark::State& s) {
    const void* xs[] = {a->raw(), b->raw()};
    const int64_t lens[] = {128, 128};
    concat(xs, lens, 1, 56 * 56, cy->raw(), 4);
    set_bytes(s, 4 * a->numel());
  });
  add("ref/Concat/2x" + dims_to_string(cd), [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ReferenceOp("Concat").attr("axis", int64_t{1}).run1({*a, *b}));
    set_bytes(s, 4 * a->numel());
  });
  const std::vector<int64_t> td = {30522, 768};
  auto table = std::make_shared<Tensor>(input(td));
  std::vector<int64_t> ids(128);
  for (int i = 0; i < 128; ++i) ids[i] = (i * 7919) % 30522;
  auto idx = std::make_shared<Tensor>(Tensor::from_int64s(ids));
  auto gy = std::make_shared<Tensor>(DataType::kFloat, std::vector<int64_t>{128, 768});
  add("kiln/Gather/" + dims_to_string(td) + "[128]", [=](benchmark::State& s) {
    gather(table->raw(), 1, 30522, 768, idx->data<int64_t>(), 128, gy->raw(), 4);
    set_bytes(s, 2 * gy->numel());
  });
  add("ref/Gather/" + dims_to_string(td) + "[128]", [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ReferenceOp("Gather").run1({*table, *idx}));
    set_bytes(s, 2 * gy->numel());
  });
}

// Resize: a detector's 2x nearest upsample, a segmentation head's bilinear one.
void register_resize() {
  struct Case {
    const char* mode;
    const char* coord;
    std::vector<int64_t> dims;
  };
  const Case cases[] = {{"nearest", "asymmetric", {1, 256, 20, 20}},
                        {"linear", "half_pixel", {1, 64, 56, 56}}};
  for (const Case& c : cases) {
    const std::string what = std::string("Resize(") + c.mode + ")/" + dims_to_string(c.dims) + "x2";
    auto x = std::make_shared<Tensor>(input(c.dims));
    const std::vector<int64_t> yd = {c.dims[0], c.dims[1], c.dims[2] * 2, c.dims[3] * 2};
    auto y = std::make_shared<Tensor>(DataType::kFloat, yd);
    ResizeOptions o;
    o.mode = *parse_resize_mode(c.mode);
    o.coord = *parse_resize_coord(c.coord);
    o.nearest = NearestRound::kFloor;
    o.scale_h = o.scale_w = 2;
    add("kiln/" + what, [=](benchmark::State& s) {
      resize_2d(x->data<float>(), yd[0] * yd[1], c.dims[2], c.dims[3], y->data<float>(), yd[2], yd[3], o);
      set_bytes(s, x->numel() + y->numel());
    });
    auto ref = std::make_shared<ReferenceOp>("Resize", 19);
    ref->attr("mode", std::string(c.mode)).attr("coordinate_transformation_mode", std::string(c.coord));
    ref->attr("nearest_mode", std::string("floor"));
    auto scales = std::make_shared<Tensor>(DataType::kFloat, std::vector<int64_t>{4});
    const float sv[4] = {1, 1, 2, 2};
    std::copy(sv, sv + 4, scales->data<float>());
    add("ref/" + what, [=](benchmark::State& s) {
      benchmark::DoNotOptimize(ref->run1({*x, Tensor(), *scales}));
      set_bytes(s, x->numel() + y->numel());
    });
  }
}

// NonMaxSuppression as torchvision's batched NMS exports it: the boxes of 30 classes shifted
// apart (SSDlite's has 27000 boxes of 90 classes), every box a candidate, IoU 0.5.
void register_nms() {
  constexpr int64_t kBoxes = 9000, kClasses = 30;
  auto boxes = std::make_shared<Tensor>(DataType::kFloat, std::vector<int64_t>{1, kBoxes, 4});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> pos(0, 300), size(4, 120);
  for (int64_t i = 0; i < kBoxes; ++i) {
    const float shift = 321.0f * static_cast<float>(i % kClasses), x = pos(rng) + shift,
                y = pos(rng) + shift;
    float* b = boxes->data<float>() + i * 4;
    b[0] = y, b[1] = x, b[2] = y + size(rng), b[3] = x + size(rng);
  }
  auto scores = std::make_shared<Tensor>(input({1, 1, kBoxes}, 4));
  const std::string what = "NonMaxSuppression/9000 boxes, 30 classes";
  add("kiln/" + what, [=](benchmark::State& s) {
    const NmsOptions o{.max_output_boxes_per_class = kBoxes, .iou_threshold = 0.5};
    benchmark::DoNotOptimize(
        non_max_suppression(boxes->data<float>(), scores->data<float>(), 1, 1, kBoxes, o));
  });
  auto ref = std::make_shared<ReferenceOp>("NonMaxSuppression", 11);
  auto max_out = std::make_shared<Tensor>(Tensor::from_int64s(std::vector<int64_t>{kBoxes}));
  auto iou = std::make_shared<Tensor>(DataType::kFloat, std::vector<int64_t>{1});
  iou->data<float>()[0] = 0.5f;
  add("ref/" + what, [=](benchmark::State& s) {
    benchmark::DoNotOptimize(ref->run1({*boxes, *scores, *max_out, *iou}));
  });
}

}  // namespace
}  // namespace kiln::cpu

int main(int argc, char** argv) {
  using namespace kiln::cpu;
  benchmark::AddCustomContext("kiln_isa", isa_name(active_isa()));
  register_unary();
  register_binary();
  register_fused();
  register_rows();
  register_recurrent();
  register_small_matmul();
  register_layout();
  register_resize();
  register_nms();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
