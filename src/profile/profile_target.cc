#include "profile/profile_target.h"

#include <algorithm>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "onnx/import.h"
#include "runtime/session.h"
#include "support/error.h"

namespace kiln {

namespace {

// Runs f and records how long it took as the phase `name`.
template <typename F>
auto timed(std::vector<SessionPhase>& phases, const char* name, F&& f) {
  const int64_t start = steady_now_ns();
  auto result = f();
  phases.push_back({name, {start, steady_now_ns()}});
  return result;
}

// The reference interpreter: check, inline, infer (its plan); no optimization.
class ReferenceTarget : public ProfileTarget {
 public:
  ReferenceTarget(Model m, std::vector<SessionPhase> phases) {
    phases_ = std::move(phases);
    session_ = timed(phases_, "plan", [&] { return std::make_unique<Session>(std::move(m)); });
  }
  std::string engine() const override { return "reference"; }
  const Model& model() const override { return session_->model(); }
  const std::vector<const Value*>& inputs() const override { return session_->inputs(); }
  void run(const std::vector<RtValue>& feeds, RunObserver* observer) override {
    session_->run(feeds, observer);
  }

 private:
  std::unique_ptr<Session> session_;
};

}  // namespace

int set_kernel_threads(int threads) {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int n = threads > 0 ? threads : hardware;
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  return n;
}

std::vector<std::string> profile_engines() { return {"reference"}; }

std::string default_profile_engine() { return "reference"; }

std::unique_ptr<ProfileTarget> reference_target(Model model, std::vector<SessionPhase> phases) {
  return std::make_unique<ReferenceTarget>(std::move(model), std::move(phases));
}

std::unique_ptr<ProfileTarget> load_target(const std::filesystem::path& path,
                                           const std::string& engine) {
  std::vector<SessionPhase> phases;
  Model m = timed(phases, "model_loading_uri", [&] { return load_model(path); });
  if (engine == "reference") return reference_target(std::move(m), std::move(phases));
  fail(ErrorKind::kBadInput, "profile: unknown engine '{}'", engine);
}

}  // namespace kiln
