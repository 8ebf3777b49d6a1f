#include "engine/compiled_model.h"

#include <omp.h>

#include <chrono>

#include "engine/graph_facts.h"
#include "engine/lowering.h"
#include "engine/onednn/weight_cache.h"
#include "engine/placement.h"
#include "engine/plain_weights.h"
#include "engine/plan.h"
#include "engine/qdq_pattern.h"
#include "engine/reduced_float.h"
#include "engine/threads.h"
#include "ops/infer.h"
#include "runtime/session.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

std::vector<std::vector<int64_t>> signature_of(const std::vector<RtValue>& feeds) {
  std::vector<std::vector<int64_t>> sig;
  sig.reserve(feeds.size());
  for (const RtValue& v : feeds) sig.push_back(v.is_tensor() ? v.tensor.dims() : std::vector<int64_t>{});
  return sig;
}

void apply_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

CompiledModel::CompiledModel(Model model, const EngineOptions& opts)
    : model_(std::move(model)), opts_(opts), weights_(std::make_unique<WeightCache>()),
      plans_(static_cast<size_t>(opts.max_plans)) {
  KILN_CHECK(opts_.optimize_level == 0, ErrorKind::kInternal,
             "the engine was asked for -O {}: the optimizer runs above it (frontend::compile_model)",
             opts_.optimize_level);
  apply_threads(opts_.threads);
  prepare_model(model_, SessionOptions{.allocation_cap = opts_.allocation_cap,
                                       .allow_newer_opset = opts_.allow_newer_opset});
  rewrite_and_plan();
}

CompiledModel::CompiledModel(Model model, const EngineOptions& opts, Checked)
    : model_(std::move(model)), opts_(opts), weights_(std::make_unique<WeightCache>()),
      plans_(static_cast<size_t>(opts.max_plans)) {
  apply_threads(opts_.threads);
  rewrite_and_plan();
}

CompiledModel::CompiledModel(Model model, const EngineOptions& opts, Prepared,
                             std::unique_ptr<WeightCache> weights)
    : model_(std::move(model)), opts_(opts),
      weights_(weights ? std::move(weights) : std::make_unique<WeightCache>()),
      plans_(static_cast<size_t>(opts.max_plans)) {
  apply_threads(opts_.threads);
  collect_inputs_outputs();
}

void CompiledModel::collect_inputs_outputs() {
  for (const Value* v : model_.graph->inputs)
    if (!v->is_constant()) inputs_.push_back(v);
  for (const Value* v : model_.graph->outputs) outputs_.push_back(v);
}

void rewrite_for_engine(Model& m) {
  int changed = compute_reduced_floats_in_float32(*m.graph);
  // Each reader of a shared DequantizeLinear gets its own, for the int8 kernels to take.
  changed += dedicate_dequantize(*m.graph);
  if (changed > 0) infer_shapes(m);
}

void CompiledModel::rewrite_and_plan() {
  rewrite_for_engine(model_);
  collect_inputs_outputs();
  // Every input dim known: the one plan there will ever be is made now.
  Signature sig;
  for (const Value* v : inputs_) {
    if (!v->type.is_tensor() || !v->type.shape) return;
    auto dims = known_dims(*v->type.shape);
    if (!dims) return;
    sig.push_back(std::move(*dims));
  }
  plan_for(sig);
}

CompiledModel::~CompiledModel() = default;

void CompiledModel::prepare(const std::vector<std::vector<int64_t>>& input_dims) {
  std::lock_guard<std::mutex> lock(mu_);
  AllocationCapScope cap(opts_.allocation_cap);
  plan_for(input_dims);
}

Plan& CompiledModel::plan_for(const Signature& sig) {
  if (Plan* p = plans_.find(sig)) {
    ++stats_.reused;
    return *p;
  }
  const auto t0 = Clock::now();
  // Weights are let go of once packed (not beside another backend, which may hold their bytes).
  if (!plain_ && !opts_.keep_plain_weights && !opts_.placement)
    plain_ = std::make_unique<PlainWeights>(*model_.graph, *weights_);
  if (plain_) plain_->begin_plan();  // what its inference reads, back in plain form
  auto plan = std::make_unique<Plan>();
  Clock::time_point t1, t2;
  {
    GraphFacts facts(model_, sig, plain_ ? std::function<void(const Value*)>([this](const Value* v) { plain_->restore(v); })
                                         : std::function<void(const Value*)>());
    t1 = Clock::now();
    // Other backends' partitions (src/backend) are asked for per plan: they compile for its dims.
    Placement placement;
    if (opts_.placement) placement = opts_.placement->place(facts);
    Lowering lowering(facts, *plan, *weights_, opts_, opts_.placement ? &placement : nullptr);
    lowering.lower(plain_.get());
    t2 = Clock::now();
  }
  weights_->let_go_of_unshared_sources();  // the facts' folded constants, now packed only
  for (const PlanChoice& c : plan->choices)
    if (c.source != PlanChoice::Source::kPreference) choices_.put(c.key, c.choice);
  plan->finalize();
  const auto t3 = Clock::now();
  ++stats_.made;
  stats_.facts_ms += ms(t0, t1);
  stats_.lowering_ms += ms(t1, t2);
  stats_.memory_ms += ms(t2, t3);
  stats_.planning_ms += ms(t0, t3);
  return plans_.insert(sig, std::move(plan));
}

PlanCacheStats CompiledModel::plan_stats() const {
  PlanCacheStats s = stats_;
  s.runs_on_one_thread = backoff_.runs_on_one();
  s.evicted = plans_.evicted();
  s.kept = plans_.size();
  s.run_memory_bytes = memory_.bytes();
  return s;
}

std::vector<RtValue> CompiledModel::run(const std::vector<RtValue>& feeds, RunObserver* observer) {
  std::lock_guard<std::mutex> lock(mu_);
  AllocationCapScope cap(opts_.allocation_cap);  // the plan, the arena and reference kernels
  check_feeds(inputs_, feeds);
  apply_threads(opts_.threads);
  Plan& plan = plan_for(signature_of(feeds));
  // A plan outgrowing the run memory: no plan keeps viewing the old bytes once they are replaced.
  if (plan.run_bytes() > memory_.bytes()) plans_.for_each([](Plan& p) { p.unbind(); });
  // One thread while the cores are oversubscribed (engine/thread_backoff.h); a plan whose steps
  // all run on one thread has nothing to back off from.
  const int full = plan.parallel() ? current_threads() : 1;
  const int threads = opts_.thread_backoff ? backoff_.threads_for_next(full) : full;
  ThreadScope scope(threads);
  const auto start = Clock::now();
  std::vector<RtValue> out = plan.run(feeds, observer, memory_);
  const double took = ms(start, Clock::now());
  if (observer) return out;  // a profiled run's time is the observer's too
  backoff_.ran(threads, full, took, plan.best_ms);
  if (threads == full && (plan.best_ms == 0 || took < plan.best_ms)) plan.best_ms = took;
  return out;
}

std::string CompiledModel::describe(const std::vector<std::vector<int64_t>>& input_dims) {
  std::lock_guard<std::mutex> lock(mu_);
  AllocationCapScope cap(opts_.allocation_cap);
  return plan_for(input_dims).describe();
}

std::vector<std::optional<std::vector<int64_t>>> CompiledModel::output_dims(
    const std::vector<std::vector<int64_t>>& input_dims) {
  std::lock_guard<std::mutex> lock(mu_);
  AllocationCapScope cap(opts_.allocation_cap);
  const Plan& plan = plan_for(input_dims);
  std::vector<std::optional<std::vector<int64_t>>> dims;
  dims.reserve(plan.output_slots.size());
  for (int s : plan.output_slots) dims.push_back(plan.slots[s].dims);
  return dims;
}

PlanSummary CompiledModel::summary(const std::vector<std::vector<int64_t>>& input_dims) {
  std::lock_guard<std::mutex> lock(mu_);
  const Plan& plan = plan_for(input_dims);
  PlanSummary s;
  s.steps = static_cast<int>(plan.steps.size());
  for (const auto& st : plan.steps) ++s.kernels[std::string(st->kernel)];
  s.arena_bytes = plan.arena_bytes();
  s.run_bytes = plan.run_bytes();
  s.weight_bytes = weights_->bytes();
  s.released_bytes = plain_ ? plain_->released_bytes() : 0;
  s.parallel = plan.parallel();
  s.listing = plan.describe();
  return s;
}

}  // namespace kiln::engine
