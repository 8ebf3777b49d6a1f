// libFuzzer target: the whole way an untrusted model file takes through kiln. The bytes are
// loaded, checked, their local functions inlined and their shapes inferred (a Session's
// preparation, what `kiln inspect` and every command start with), their work estimated
// (`kiln inspect`'s FLOPs); then, when the model is small enough to run in a few milliseconds,
// it runs on seeded random inputs on the reference interpreter and on the fast engine (a plan of
// oneDNN and CPU kernels after the -O2 optimizer, as `kiln run` does).
//
// A kiln::Error is an expected end: a bad model, an op kiln does not support, a run that fails or
// spends its budget. Anything else is a finding: a kInternal error (a broken invariant of kiln's
// own), a crash, a sanitizer report, another exception, a hang past libFuzzer's -timeout, memory
// past -rss_limit_mb.
//
// Build and run: make fuzz (docs/fuzzing.md).
#include <omp.h>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "engine/compiled_model.h"
#include "frontend/compile.h"
#include "fuzz_support.h"
#include "ir/tensor.h"
#include "ir/walk.h"
#include "onnx/import.h"
#include "ops/cost.h"
#include "runtime/random_inputs.h"
#include "runtime/session.h"
#include "support/error.h"

namespace {

using namespace kiln;

// Bounds that keep one input to milliseconds and megabytes. The allocation cap (bytes of one
// tensor) is kiln's own guard, lowered from 16 GB; the rest decide whether a model is run at all.
constexpr int64_t kAllocationCap = int64_t(4) << 20;
constexpr double kMaxFlops = 2e7;          // estimated work of one run (ops/cost.h)
constexpr double kMaxBytes = 64 << 20;     // estimated bytes read and written by one run
constexpr int64_t kMaxLoopTrips = 64;      // a Loop's trip count M
constexpr int64_t kMaxNodeRuns = 20000;    // nodes one run may execute (Loop and Scan bodies count)
constexpr int64_t kRunBudgetNs = 2'000'000'000;

// Stops a run that executes too many nodes or takes too long (a Loop of many trips whose body the
// estimate counted once). Executors report every node, subgraphs' included, so a throw from here
// ends the run as any kernel's error would.
class Budget : public RunObserver {
 public:
  Budget() : deadline_(steady_now_ns() + kRunBudgetNs) {}
  void on_node(const NodeEvent&) override {
    KILN_CHECK(++nodes_ <= kMaxNodeRuns && steady_now_ns() <= deadline_, ErrorKind::kRuntime,
               "fuzz: the run's budget is spent");
  }

 private:
  int64_t nodes_ = 0;
  int64_t deadline_;
};

// The value of an int64 scalar that is an initializer or a Constant node's output, if it is one.
std::optional<int64_t> constant_scalar(const Value* v) {
  const Tensor* t = nullptr;
  if (v->is_constant()) t = &v->data;
  else if (v->producer && v->producer->op_type == "Constant" && v->producer->domain.empty())
    if (const Attribute* a = v->producer->attr("value"); a && a->kind == AttrKind::kTensor) t = &a->t;
  if (!t || t->numel() != 1 || t->dtype() != DataType::kInt64) return std::nullopt;
  return t->get_i64(0);
}

// Whether the model is small enough to run, given the feeds (inputs() order) made for it. Loops
// are the one construct whose work the estimate cannot see: a Loop runs only with a trip count
// known to be small (a constant, or a main-graph input whose random value is), since a body of
// no node would never reach the budget.
bool small_enough(const Session& s, const std::vector<RtValue>& feeds) {
  std::unordered_map<const Value*, const RtValue*> fed;
  for (size_t i = 0; i < feeds.size() && i < s.inputs().size(); ++i) fed[s.inputs()[i]] = &feeds[i];
  double flops = 0, bytes = 0;
  bool loops_bounded = true;
  for_each_node(s.model(), [&](const Node& n) {
    const NodeCost c = node_cost(n);  // symbolic dims as 1, as the random inputs make them
    flops += c.flops;
    bytes += c.bytes;
    if (n.op_type != "Loop" || !n.domain.empty()) return;
    if (!n.has_input(0)) { loops_bounded = false; return; }
    std::optional<int64_t> trips = constant_scalar(n.inputs[0]);
    if (auto it = fed.find(n.inputs[0]); it != fed.end() && it->second->is_tensor() &&
                                         it->second->tensor.numel() == 1 &&
                                         it->second->tensor.dtype() == DataType::kInt64)
      trips = it->second->tensor.get_i64(0);
    loops_bounded &= trips && *trips <= kMaxLoopTrips;
  });
  return loops_bounded && flops <= kMaxFlops && bytes <= kMaxBytes;
}

Model load(std::string_view bytes) { return load_model_from_bytes(bytes, fuzz::scratch_dir()); }

// KILN_FUZZ_VERBOSE=1: one line per stage an input reaches and how it ended, to see what a corpus
// exercises (`build-fuzz/fuzz_model -runs=0 DIR` replays a folder).
void note(const char* stage, const char* how = "") {
  static const bool verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "fuzz_model: %s%s%s\n", stage, *how ? ": " : "", how);
}

void run_both_engines(std::string_view bytes) {
  std::vector<RtValue> feeds;
  {
    Session session(load(bytes), {.allocation_cap = kAllocationCap});
    note("prepared");
    feeds = random_inputs(session.inputs(), {.seed = 1});
    if (!small_enough(session, feeds)) return note("too large to run");
    try {
      Budget budget;
      session.run(feeds, &budget);
      note("reference ran");
    } catch (const Error& e) {
      // The reference failing (a kernel's check, the budget) says nothing about the fast engine.
      note("reference failed", e.what());
      fuzz::abort_if_internal(e);
    }
  }
  // A model of its own: preparation mutates it, and the engine prepares (and optimizes) again.
  // Tuning off: a verdict that does not hang on a timing (and no cache file written).
  auto compiled = frontend::compile_model(
      load(bytes), {.threads = 1, .optimize_level = 2, .allocation_cap = kAllocationCap,
                    .tune = engine::TuneMode::kOff});
  Budget budget;
  compiled->run(feeds, &budget);
  note("fast engine ran");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One thread: libFuzzer's -timeout and -rss_limit_mb then measure one input's own cost, and a
  // pool of spinning workers would not fight the machine's other processes. libgomp reads
  // OMP_NUM_THREADS before main (scripts/run-fuzz.sh sets it); this covers a direct run.
  omp_set_num_threads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  AllocationCapScope cap(kAllocationCap);  // the load too (sessions and plans scope their own)
  try {
    run_both_engines(bytes);
  } catch (const kiln::Error& e) {
    // The expected way for a bad model (or a run that cannot be made) to end.
    note("failed", e.what());
    fuzz::abort_if_internal(e);
  }
  return 0;
}
