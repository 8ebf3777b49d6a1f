// What `kiln profile` runs: a model loaded for one executor (the reference Session or the fast
// engine), and the loop that runs it N times under the recorder. Switching executors is here only.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "profile/profile_data.h"
#include "runtime/observer.h"

namespace kiln {

class ProfileTarget {
 public:
  virtual ~ProfileTarget() = default;
  virtual std::string engine() const = 0;
  // The model as it runs (after optimization, when the executor optimizes).
  virtual const Model& model() const = 0;
  // The inputs a caller feeds, in feed order.
  virtual const std::vector<const Value*>& inputs() const = 0;
  virtual void run(const std::vector<RtValue>& feeds, RunObserver* observer) = 0;
  // Load, optimize and plan, as they happened.
  const std::vector<SessionPhase>& phases() const { return phases_; }

 protected:
  std::vector<SessionPhase> phases_;
};

// The executors `load_target` knows, by name.
std::vector<std::string> profile_engines();
// The default: the fast engine where it is built, else the reference interpreter.
std::string default_profile_engine();
// The reference Session on a model already loaded; `phases`: those before (loading).
std::unique_ptr<ProfileTarget> reference_target(Model model, std::vector<SessionPhase> phases = {});
// Loads `path` for `engine` ("reference" or "fast"), timing each phase.
std::unique_ptr<ProfileTarget> load_target(const std::filesystem::path& path,
                                           const std::string& engine);

// Sets the threads kernels run on (0: all hardware threads); returns the count in effect.
int set_kernel_threads(int threads);

struct RunCounts {
  int warmup = 1;  // runs before measuring, unobserved
  int runs = 10;   // measured runs, each observed node by node
};

// Runs `target` on `feeds` per `counts` and returns what it recorded.
ProfileData profile_runs(ProfileTarget& target, const std::vector<RtValue>& feeds,
                         const RunCounts& counts);

}  // namespace kiln
