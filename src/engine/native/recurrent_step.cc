#include "engine/native/recurrent_step.h"

#include <string>

#include "engine/lowering.h"
#include "engine/onednn/weight_cache.h"
#include "engine/threads.h"
#include "ops/op.h"

namespace kiln::engine {

namespace {

class RecurrentStep : public KernelContextStep {
 public:
  RecurrentStep(const Node& n, std::string_view name, RecurrentRun run,
                std::shared_ptr<const RecurrentPacks> packs)
      : KernelContextStep(n, OpRegistry::global().find(n.domain, n.op_type)->kernel, name),
        run_(run), packs_(std::move(packs)) {}

 protected:
  void invoke(KernelContext& ctx) override {
    static const std::vector<cpu::PackedRecurrent> none;
    run_(ctx, packs_ ? packs_->packs : none);
  }

 private:
  RecurrentRun run_;
  std::shared_ptr<const RecurrentPacks> packs_;
};

}  // namespace

size_t RecurrentPacks::bytes() const {
  size_t total = 0;
  for (const cpu::PackedRecurrent& p : packs) total += p.bytes();
  return total;
}

void RecurrentPacks::unpack(void* plain) const {
  float* r = static_cast<float*>(plain);
  for (const cpu::PackedRecurrent& p : packs) {
    p.unpack(r);
    r += p.gates() * p.hidden() * p.hidden();
  }
}

void add_recurrent_step(Group& g, Lowering& lw, std::string_view name, RecurrentRun run,
                        std::shared_ptr<const RecurrentPacks> packs) {
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

std::shared_ptr<const RecurrentPacks> recurrent_packs(const Group& g, Lowering& lw,
                                                      const std::vector<int64_t>& split) {
  const Node& n = *g.anchor;
  int64_t gates = 0;
  std::string kind = "recurrent panels of";
  for (int64_t part : split) {
    gates += part;
    kind += " " + std::to_string(part);
  }
  const Tensor* r = n.has_input(2) ? lw.facts().constant(n.inputs[2]) : nullptr;
  if (!r || r->dtype() != DataType::kFloat || r->rank() != 3 || r->dim(1) != gates * r->dim(2) ||
      r->numel() == 0)
    return nullptr;
  return lw.weights().native<RecurrentPacks>(*r, kind, [&] {
    auto made = std::make_shared<RecurrentPacks>();
    const int64_t H = r->dim(2);
    const float* rows = r->data<float>();
    for (int64_t dir = 0; dir < r->dim(0); ++dir)
      for (int64_t part : split) {
        made->packs.emplace_back(rows, part, H);
        rows += part * H * H;
      }
    return made;
  });
}

}  // namespace kiln::engine
