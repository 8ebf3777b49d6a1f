// What `kiln profile` runs: a model opened for one executor (the fast engine or the reference
// Session, through the engine's ModelRunner), and the loop that runs it N times under the recorder.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/runner.h"
#include "ir/graph.h"
#include "ir/rt_value.h"
#include "profile/profile_data.h"
#include "runtime/observer.h"

namespace kiln {

class ProfileTarget {
 public:
  // Opens `model` for `engine` ("fast" or "reference") on `threads` kernel threads (0: the
  // executor's default), timed as the phase "session_initialization". `phases`: those before.
  // allow_newer_opset: opsets newer than kiln knows are a warning, not a refusal.
  // placement: other backends' partitions in the fast engine (engine/placement.h), or null.
  ProfileTarget(Model model, const std::string& engine, int threads,
                std::vector<SessionPhase> phases = {}, bool allow_newer_opset = false,
                std::shared_ptr<engine::PlacementHook> placement = nullptr);

  // A runner opened by the caller (a compiled artifact's), its opening timed into `phases`.
  ProfileTarget(std::unique_ptr<engine::ModelRunner> runner, const std::string& engine,
                std::vector<SessionPhase> phases);

  const std::string& engine() const { return engine_; }
  // The model as it runs (after the executor's own rewriting).
  const Model& model() const { return runner_->model(); }
  // The inputs a caller feeds, in feed order.
  const std::vector<const Value*>& inputs() const { return runner_->inputs(); }
  // Makes what runs for inputs like `feeds` (the fast engine's plan), timed as the phase "plan".
  void prepare(const std::vector<RtValue>& feeds);
  void run(const std::vector<RtValue>& feeds, RunObserver* observer);

  // Load, session initialization and plan, as they happened.
  const std::vector<SessionPhase>& phases() const { return phases_; }
  // The fast engine's plan for the prepared feeds; none for the reference.
  const std::optional<engine::PlanSummary>& plan() const { return plan_; }

 private:
  std::string engine_;
  std::vector<SessionPhase> phases_;
  std::unique_ptr<engine::ModelRunner> runner_;
  std::optional<engine::PlanSummary> plan_;
};

// The executors a target can run on, and the default (the fast engine).
std::vector<std::string> profile_engines();
inline constexpr const char* kDefaultProfileEngine = "fast";

// A rewrite of the loaded model before the executor opens it: the optimizer's pipeline.
using ModelRewrite = std::function<void(Model&)>;

// Loads `path` (timed as "model_loading_uri"), rewrites it with `optimize` when given (timed as
// "optimize") and opens it for `engine` (allow_newer_opset as ProfileTarget takes it).
std::unique_ptr<ProfileTarget> load_target(const std::filesystem::path& path,
                                           const std::string& engine, int threads,
                                           const ModelRewrite& optimize = {},
                                           bool allow_newer_opset = false,
                                           std::shared_ptr<engine::PlacementHook> placement = nullptr);

// The kernel thread count in effect for `requested` (0: every hardware thread).
int resolve_threads(int requested);

struct RunCounts {
  int warmup = 1;  // runs before measuring, unobserved
  int runs = 10;   // measured runs, each observed node by node
};

// Prepares `target` for `feeds`, runs it per `counts` and returns what it recorded.
ProfileData profile_runs(ProfileTarget& target, const std::vector<RtValue>& feeds,
                         const RunCounts& counts);

}  // namespace kiln
