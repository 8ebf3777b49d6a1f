#include "profile/profile_target.h"

#include <algorithm>
#include <thread>

#include "onnx/import.h"
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

}  // namespace

ProfileTarget::ProfileTarget(Model model, const std::string& engine, int threads,
                             std::vector<SessionPhase> phases, bool allow_newer_opset,
                             std::shared_ptr<engine::PlacementHook> placement)
    : engine_(engine), phases_(std::move(phases)) {
  const engine::EngineKind kind = engine::parse_engine_kind(engine);
  runner_ = timed(phases_, "session_initialization", [&] {
    return engine::make_runner(std::move(model), kind,
                               {.threads = threads, .allow_newer_opset = allow_newer_opset,
                                .placement = std::move(placement)});
  });
}

ProfileTarget::ProfileTarget(std::unique_ptr<engine::ModelRunner> runner, const std::string& engine,
                             std::vector<SessionPhase> phases)
    : engine_(engine), phases_(std::move(phases)), runner_(std::move(runner)) {}

void ProfileTarget::prepare(const std::vector<RtValue>& feeds) {
  if (engine_ == "reference") return;  // nothing is planned ahead
  plan_ = timed(phases_, "plan", [&] { return runner_->summary(feeds); });
}

void ProfileTarget::run(const std::vector<RtValue>& feeds, RunObserver* observer) {
  runner_->run(feeds, observer);
}

std::vector<std::string> profile_engines() { return {"fast", "reference"}; }

std::unique_ptr<ProfileTarget> load_target(const std::filesystem::path& path,
                                           const std::string& engine, int threads,
                                           const ModelRewrite& optimize, bool allow_newer_opset,
                                           std::shared_ptr<engine::PlacementHook> placement) {
  std::vector<SessionPhase> phases;
  Model m = timed(phases, "model_loading_uri", [&] { return load_model(path); });
  if (optimize) {
    timed(phases, "optimize", [&] {
      optimize(m);
      return true;
    });
  }
  return std::make_unique<ProfileTarget>(std::move(m), engine, threads, std::move(phases),
                                         allow_newer_opset, std::move(placement));
}

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace kiln
