#include "engine/native/recurrent_step.h"

#include "engine/lowering.h"
#include "engine/threads.h"
#include "ops/op.h"

namespace kiln::engine {

namespace {

class RecurrentStep : public KernelContextStep {
 public:
  RecurrentStep(const Node& n, std::string_view name, RecurrentRun run,
                std::vector<cpu::PackedRecurrent> packs)
      : KernelContextStep(n, OpRegistry::global().find(n.domain, n.op_type)->kernel, name),
        run_(run), packs_(std::move(packs)) {}

 protected:
  void invoke(KernelContext& ctx) override { run_(ctx, packs_); }

 private:
  RecurrentRun run_;
  std::vector<cpu::PackedRecurrent> packs_;
};

}  // namespace

void add_recurrent_step(Group& g, Lowering& lw, std::string_view name, RecurrentRun run,
                        std::vector<cpu::PackedRecurrent> packs) {
  auto step = std::make_unique<RecurrentStep>(*g.anchor, name, run, std::move(packs));
  step->wire(lw);
  // The kernel splits its units over the plan's threads (recurrent_gemm.h) and oneDNN its input
  // projection; a small recurrence (Silero VAD v4's: one step of 64 units) runs on one, or each
  // run wakes a second thread for a product of microseconds.
  step->threads = kPlanThreads;
  const Node& n = *g.anchor;
  const auto* x = lw.facts().dims(n.inputs[0]);
  const auto* r = n.has_input(2) ? lw.facts().dims(n.inputs[2]) : nullptr;
  if (x && r && x->size() == 3 && r->size() == 3) {
    // X [S, B, I] (or [B, S, I]), R [D, G * H, H]: the input projection and the recurrence.
    const double rows = static_cast<double>((*x)[0] * (*x)[1]) * static_cast<double>((*r)[0] * (*r)[1]);
    step->threads = threads_for_work(2.0 * rows * static_cast<double>((*x)[2] + (*r)[2]));
  }
  lw.add(std::move(step));
}

const Tensor* constant_recurrent_weights(const Group& g, const Lowering& lw, int64_t gates) {
  const Node& n = *g.anchor;
  const Tensor* r = n.has_input(2) ? lw.facts().constant(n.inputs[2]) : nullptr;
  if (!r || r->dtype() != DataType::kFloat || r->rank() != 3 || r->dim(1) != gates * r->dim(2) ||
      r->numel() == 0)
    return nullptr;
  return r;
}

}  // namespace kiln::engine
