#include "engine/native/int16_matmul_step.h"

#include "engine/cpu/int16_gemm.h"
#include "engine/cpu/parallel.h"
#include "engine/lowering.h"
#include "engine/native/native_step.h"
#include "engine/onednn/weight_cache.h"
#include "engine/runtime_quant_params.h"
#include "engine/threads.h"

namespace kiln::engine {

namespace {

class Int16MatmulStep : public NativeStep {
 public:
  Int16MatmulStep(const Int16MatmulSpec& s, std::shared_ptr<const kiln::cpu::Int16Weights> w,
                  std::shared_ptr<Scratchpad> pad)
      : NativeStep(*s.node, "cpu.int16_matmul"), w_(std::move(w)), pad_(std::move(pad)),
        a_signed_(s.a_signed), m_(s.m), scale_cols_(s.scale_cols), w_scale_(s.w_scale), bias_(s.bias), ops_(s.ops),
        unit_(static_cast<size_t>(s.scale_cols > 1 || s.w_scale.size() > 1 ? s.n : 1)) {}
  using NativeStep::read;
  using NativeStep::write;
  RuntimeQuantParams params;  // the scale's run-time part, A's zero point
  void run(RunState& st) override {
    const Tensor& a = in(st, 0);
    const Tensor& s = params.scale(st, scale_cols_, kernel);
    // The scale per column: the run-time value times the constant part, as the float form does.
    for (size_t c = 0; c < unit_.size(); ++c)
      unit_[c] = s.data<float>()[s.numel() == 1 ? 0 : c] *
                 (w_scale_.empty() ? 1.f : w_scale_[w_scale_.size() == 1 ? 0 : c]);
    const kiln::cpu::Int16Epilogue e{.zero_point = params.zero_point(st, kernel), .scale = unit_.data(), .per_column = unit_.size() > 1,
                                     .bias = bias_.empty() ? nullptr : bias_.data(), .ops = ops_,
                                     .y = out(st, 0).data<float>(), .ldy = w_->n()};
    kiln::cpu::int16_gemm(a.raw(), a_signed_, m_, *w_, static_cast<int16_t*>(pad_->data), e,
                          kiln::cpu::worker_threads());
  }

 private:
  std::shared_ptr<const kiln::cpu::Int16Weights> w_;
  std::shared_ptr<Scratchpad> pad_;  // A widened to int16 (shared by the plan's steps)
  bool a_signed_;
  int64_t m_, scale_cols_;
  std::vector<float> w_scale_, bias_;
  std::vector<kiln::cpu::RowOp> ops_;
  std::vector<float> unit_;
};

}  // namespace

bool add_int16_matmul(const Int16MatmulSpec& s, Lowering& lw) {
  if (!kiln::cpu::int16_gemm_supported()) return false;
  auto w = lw.weights().native<kiln::cpu::Int16Weights>(
      *s.w, s.w_transposed ? "int16 panels of [N, K]" : "int16 panels of [K, N]", [&] {
        return std::make_shared<const kiln::cpu::Int16Weights>(s.w->data<int8_t>(), s.k, s.n, s.w_transposed);
      });
  lw.scratchpad()->need(static_cast<size_t>(kiln::cpu::int16_gemm_a_elements(s.m, *w)) * sizeof(int16_t));
  auto step = std::make_unique<Int16MatmulStep>(s, w, lw.scratchpad());
  step->reads_packed_constants = true;  // B from its int16 panels only
  step->threads = threads_for_work(2.0 * s.m * s.k * s.n / 2);  // twice an f32 FMA's work an instruction
  step->read(lw.plain(s.a), *lw.facts().dims(s.a));
  step->params.read_by(*step, lw.plain(s.scale), s.zero_point ? lw.plain(s.zero_point) : -1);
  step->write(lw.define(s.out));
  lw.add(std::move(step));
  return true;
}

}  // namespace kiln::engine
