// MatMul and Gemm of few multiply-adds on a constant float weight, by kiln's own loops
// (cpu::rows_times_matrix for a [K, N] weight, cpu::rows_times_rows for a Linear layer's [N, K]
// one): the weight read where it is stored, the bias added and the activations after it applied
// to each row. Below kSmallWork (engine/threads.h: where the product runs on one thread anyway) a
// oneDNN matmul costs more than it brings: a JIT'd kernel, the library's code walked to make it
// and a packed copy of the weight beside the plain one, for a product of microseconds. The MLP of
// bench/run.sh (two Gemms) kept 2.9 MB of libdnnl's pages and 0.8 MB of packed weights resident
// for 10 us runs (docs/benchmarks.md, "Small models' memory").
#include <cstdint>
#include <cstring>

#include "engine/cpu/elementwise.h"
#include "engine/cpu/kernels.h"
#include "engine/epilogue.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/native/row_epilogue.h"
#include "engine/onednn/bf16_support.h"
#include "engine/onednn/weight_cache.h"
#include "engine/threads.h"

namespace kiln::engine {

namespace {

// y [M, N] = A [M, K] times the weight, plus Gemm's bias (beta * C, a constant row).
struct SmallProduct {
  int64_t m = 0, k = 0, n = 0;
  bool weight_rows = false;  // the weight is [N, K] (Gemm's transB)
  const Value* a = nullptr;
  const Value* weight = nullptr;
  const Value* c = nullptr;
  float beta = 1;
};

// The product when n is a MatMul or Gemm this step runs: float A read row-major (MatMul's
// leading dims folded into M), a constant float 2-D weight, Gemm without transA or alpha and with
// C absent or a constant row; fewer than kSmallWork flops.
std::optional<SmallProduct> small_product(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.has_input(1) || !n.outputs[0]) return std::nullopt;
  SmallProduct p{.a = n.inputs[0], .weight = n.inputs[1]};
  const auto *ad = f.dims(p.a), *wd = f.dims(p.weight), *od = f.dims(n.outputs[0]);
  if (f.dtype(p.a) != DataType::kFloat || f.dtype(p.weight) != DataType::kFloat ||
      !f.has_constant(p.weight) || f.has_constant(p.a) || !ad || !wd || !od || ad->size() < 2 ||
      wd->size() != 2)
    return std::nullopt;
  for (int64_t d : *ad)
    if (d <= 0) return std::nullopt;
  if (n.op_type == "Gemm") {
    if (ad->size() != 2 || attr_int(n, "transA") != 0 || attr_float(n, "alpha") != 1) return std::nullopt;
    p.weight_rows = attr_int(n, "transB") != 0;
    p.beta = attr_float(n, "beta");
    if (n.has_input(2)) {
      p.c = n.inputs[2];
      const auto* cd = f.dims(p.c);
      if (!f.has_constant(p.c) || f.dtype(p.c) != DataType::kFloat || !cd || cd->size() > 2 ||
          (cd->size() == 2 && (*cd)[0] != 1))
        return std::nullopt;
    }
  } else if (n.op_type != "MatMul") {
    return std::nullopt;
  }
  p.k = ad->back();
  p.n = p.weight_rows ? (*wd)[0] : (*wd)[1];
  if ((p.weight_rows ? (*wd)[1] : (*wd)[0]) != p.k || p.n <= 0) return std::nullopt;
  double flops = 2.0 * static_cast<double>(p.k) * static_cast<double>(p.n);  // (in double: no overflow)
  for (size_t i = 0; i + 1 < ad->size(); ++i) flops *= static_cast<double>((*ad)[i]);
  if (threads_for_work(flops) != 1) return std::nullopt;
  p.m = dims_product(*ad, 0, ad->size() - 1);
  std::vector<int64_t> out(ad->begin(), ad->end() - 1);
  out.push_back(p.n);
  if (*od != out) return std::nullopt;  // what the step writes is what the plan holds
  if (p.c) {
    const int64_t c_len = f.dims(p.c)->empty() ? 1 : f.dims(p.c)->back();
    if (c_len != 1 && c_len != p.n) return std::nullopt;
  }
  return p;
}

// The weight in 64-byte-aligned memory: an initializer's bytes sit 16 bytes past a malloc'd
// page, and every 64-byte load of them spans two cache lines (the MLP's [256, 768] product 13.0
// us against 7.4 aligned, one core). An aligned initializer is read as it is; a misaligned one
// is copied once, and a weight the plan computes (a Cast from bf16, a DequantizeLinear) is kept
// once, by the WeightCache, for every plan (each plan computes it anew).
struct AlignedWeight {
  Tensor t;
  size_t bytes() const { return static_cast<size_t>(t.numel()) * sizeof(float); }
  void unpack(void* plain) const { std::memcpy(plain, t.raw(), bytes()); }
};

Tensor aligned_weight(const Value* v, const Tensor& w, Lowering& lw) {
  const bool aligned = reinterpret_cast<uintptr_t>(w.raw()) % 64 == 0;
  if (aligned && !v->producer) return w;
  return lw.weights().native<AlignedWeight>(w, "aligned rows", [&] {
    if (aligned) return std::make_shared<AlignedWeight>(AlignedWeight{w});
    auto made = std::make_shared<AlignedWeight>(AlignedWeight{Tensor(DataType::kFloat, w.dims())});
    std::memcpy(made->t.raw(), w.raw(), made->bytes());
    return made;
  })->t;
}

// Gemm's own bias: beta * C along N.
std::optional<Tensor> own_bias(const SmallProduct& p, const GraphFacts& f) {
  if (!p.c) return std::nullopt;
  return gemm_bias(*f.constant(p.c), p.beta, p.n);
}

class SmallMatmulStep : public NativeStep {
 public:
  SmallMatmulStep(const Node& n, const SmallProduct& p, Tensor weight, std::optional<Tensor> bias,
                  std::vector<cpu::RowOp> ops)
      : NativeStep(n, "cpu.matmul"), m_(p.m), k_(p.k), n_(p.n), weight_rows_(p.weight_rows),
        weight_(std::move(weight)), ops_(std::move(ops)) {
    // rows_times_matrix adds a bias always: zeros when there is none
    if (bias) bias_.assign(bias->data<float>(), bias->data<float>() + n_);
    else if (!weight_rows_) bias_.assign(static_cast<size_t>(n_), 0.0f);
  }
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const auto& k = cpu::kernels();
    const float* x = in(st, 0).data<float>();
    float* y = out(st, 0).data<float>();
    const float* bias = bias_.empty() ? nullptr : bias_.data();
    if (weight_rows_) k.rows_times_rows(x, m_, k_, weight_.data<float>(), n_, bias, y, n_);
    else k.rows_times_matrix(x, m_, k_, weight_.data<float>(), n_, bias, y, n_);
    if (!ops_.empty())
      for (int64_t r = 0; r < m_; ++r) cpu::apply_row_ops(ops_, y + r * n_, n_);
  }

 private:
  int64_t m_, k_, n_;
  bool weight_rows_;
  Tensor weight_;  // 64-byte aligned: the initializer's own bytes, or the cache's copy
  std::vector<float> bias_;
  std::vector<cpu::RowOp> ops_;
};

bool match_small_matmul(const Node& n, const MatchContext& ctx, Group& g) {
  const auto p = small_product(n, ctx.facts);
  // bf16 asked for (--precision bf16, or weights stored in bf16) on a CPU that has it: oneDNN's
  if (!p || use_bf16(ctx.options ? *ctx.options : EngineOptions{}, p->weight, ctx.facts)) return false;
  g.epilogue = match_epilogue(n.outputs[0], ctx, static_cast<int>(ctx.facts.dims(n.outputs[0])->size()) - 1);
  keep_row_ops(g.epilogue);
  return true;
}

bool build_small_matmul(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const SmallProduct p = *small_product(n, f);
  const std::optional<Tensor> own = own_bias(p, f);
  RowEpilogue e = row_epilogue(g, own ? &*own : nullptr, p.n, f);
  auto step = std::make_unique<SmallMatmulStep>(n, p, aligned_weight(p.weight, *f.constant(p.weight), lw), std::move(e.bias),
                                                std::move(e.ops));
  step->threads = 1;
  step->read(lw.plain(p.a), *f.dims(p.a));
  step->write(lw.define(g.output()));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuSmallMatmul{.name = "cpu.matmul", .match = match_small_matmul,
                                           .build = build_small_matmul};

}  // namespace kiln::engine
