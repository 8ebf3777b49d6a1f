#include "engine/runner.h"

#include <omp.h>

#include "engine/compiled_model.h"
#include "runtime/session.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

class FastRunner : public ModelRunner {
 public:
  explicit FastRunner(std::unique_ptr<CompiledModel> cm) : cm_(std::move(cm)) {}
  const Model& model() const override { return cm_->model(); }
  const std::vector<const Value*>& inputs() const override { return cm_->inputs(); }
  const std::vector<const Value*>& outputs() const override { return cm_->outputs(); }
  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer) override {
    return cm_->run(feeds, observer);
  }
  std::optional<PlanSummary> summary(const std::vector<RtValue>& feeds) override {
    std::vector<std::vector<int64_t>> dims;
    for (const RtValue& v : feeds) dims.push_back(v.is_tensor() ? v.tensor.dims() : std::vector<int64_t>{});
    return cm_->summary(dims);
  }
  std::optional<PlanCacheStats> plan_stats() const override { return cm_->plan_stats(); }

 private:
  std::unique_ptr<CompiledModel> cm_;
};

Model unoptimized(Model m, const EngineOptions& opts) {
  KILN_CHECK(opts.optimize_level == 0, ErrorKind::kInternal,
             "the reference runner was asked for -O {}: the optimizer runs above the engine "
             "(frontend::make_runner)", opts.optimize_level);
  return m;
}

class ReferenceRunner : public ModelRunner {
 public:
  ReferenceRunner(Model m, const EngineOptions& opts)
      : threads_(opts.threads), session_(unoptimized(std::move(m), opts),
                 {.allocation_cap = opts.allocation_cap, .allow_newer_opset = opts.allow_newer_opset}) {}
  const Model& model() const override { return session_.model(); }
  const std::vector<const Value*>& inputs() const override { return session_.inputs(); }
  const std::vector<const Value*>& outputs() const override { return session_.outputs(); }
  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer) override {
    if (threads_ > 0) omp_set_num_threads(threads_);
    return session_.run(feeds, observer);
  }

 private:
  int threads_;
  Session session_;
};

}  // namespace

EngineKind parse_engine_kind(const std::string& name) {
  if (name == "fast") return EngineKind::kFast;
  if (name == "reference") return EngineKind::kReference;
  fail(ErrorKind::kBadInput, "unknown engine '{}' (fast or reference)", name);
}

std::unique_ptr<ModelRunner> make_runner(Model model, EngineKind kind, const EngineOptions& opts) {
  if (kind == EngineKind::kReference) return std::make_unique<ReferenceRunner>(std::move(model), opts);
  return fast_runner(std::make_unique<CompiledModel>(std::move(model), opts));
}

std::unique_ptr<ModelRunner> fast_runner(std::unique_ptr<CompiledModel> model) {
  return std::make_unique<FastRunner>(std::move(model));
}

}  // namespace kiln::engine
