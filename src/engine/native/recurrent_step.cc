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
  step->threads = kPlanThreads;  // the kernel splits its units over them (recurrent_gemm.h)
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
