#include "artifact/measure.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "artifact/load/artifact.h"
#include "artifact/placement.h"
#include "engine/compiled_model.h"
#include "frontend/compile.h"
#include "onnx/import.h"
#include "runtime/compare.h"
#include "runtime/input_dims.h"
#include "runtime/random_inputs.h"
#include "support/error.h"

namespace kiln::artifact {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

nlohmann::json measure_artifact(const std::string& artifact, const std::string& onnx,
                                const std::filesystem::path& dir, const CompileOptions& o,
                                std::vector<std::string>& notes) {
  // The artifact in a 64-byte aligned buffer, as a mapped file is: its weights are views, its
  // pre-packed weights are taken.
  std::shared_ptr<void> buffer(std::aligned_alloc(64, (artifact.size() + 63) / 64 * 64), std::free);
  KILN_CHECK(buffer != nullptr, ErrorKind::kRuntime, "out of memory for the artifact");
  std::memcpy(buffer.get(), artifact.data(), artifact.size());
  const engine::EngineOptions eopts{.threads = o.threads, .allow_newer_opset = o.allow_newer_opset};
  // oneDNN's primitive cache holds the primitives the compile made: without emptying it, the
  // artifact's plans would be made from it, and its creation time would be a cache's.
  const int capacity = dnnl::get_primitive_cache_capacity();
  dnnl::set_primitive_cache_capacity(0);
  dnnl::set_primitive_cache_capacity(capacity);
  auto a = Artifact::from_bytes({static_cast<const uint8_t*>(buffer.get()), artifact.size()}, buffer,
                                "the compiled artifact",
                                {.engine = eopts, .recorded_placement = artifact_placement, .quiet = true});
  const LoadTimes times = a->times();

  auto t0 = Clock::now();
  engine::EngineOptions onnx_opts = eopts;
  onnx_opts.optimize_level = o.passes.empty() ? o.level : 2;
  auto same_level = frontend::compile_model(load_model_from_bytes(onnx, dir), onnx_opts);
  const double onnx_creation_ms = ms_since(t0);
  engine::CompiledModel original(load_model_from_bytes(onnx, dir), eopts);  // -O0: the reference

  // Inputs: the declared profiles' first values, other symbolic dims as the search finds them.
  RandomInputOptions given{.seed = o.seed};
  for (const auto& s : a->manifest().profiles) given.dims[s.dim] = s.values[0];
  std::vector<RtValue> feeds;
  const DimSearch found = search_input_dims(
      a->model().inputs(), given,
      [&](const RandomInputOptions& opts) {
        feeds = random_inputs(a->model().inputs(), opts);
        original.run(feeds);
      },
      30);
  if (!found.chosen.empty()) notes.push_back("measured with " + found.describe());

  // One warmup each (the first run of a shape plans it where no plan was made ahead), then runs
  // taking turns.
  t0 = Clock::now();
  std::vector<RtValue> got = a->run(feeds);
  const double first_run_ms = ms_since(t0);
  const std::vector<RtValue> want = original.run(feeds);
  same_level->run(feeds);
  std::vector<double> art_ms, onnx_ms;
  for (int i = 0; i < o.measure_runs; ++i) {
    t0 = Clock::now();
    a->run(feeds);
    art_ms.push_back(ms_since(t0));
    t0 = Clock::now();
    same_level->run(feeds);
    onnx_ms.push_back(ms_since(t0));
  }
  nlohmann::json outputs = nlohmann::json::array();
  bool ok = true;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const Comparison c = compare_values(got[i], want[i], Tolerance{1e-3, 1e-4});
    ok = ok && c.equal;
    outputs.push_back({{"name", a->model().outputs()[i]->name},
                       {"max_abs_error", c.max_abs_error},
                       {"max_rel_error", c.max_rel_error},
                       {"ok", c.equal},
                       {"reason", c.reason}});
  }
  if (!ok) notes.push_back("the artifact's outputs differ from the original's (see measured.outputs)");
  std::vector<std::vector<int64_t>> dims;
  for (const RtValue& v : feeds) dims.push_back(v.is_tensor() ? v.tensor.dims() : std::vector<int64_t>{});
  // Which kernels the measured plan ran: a step on the reference kernels (no fast kernel takes
  // its node at this target's ISA) is what a slow measurement is usually made of.
  const engine::PlanSummary plan = a->model().summary(dims);
  return {{"inputs", {{"seed", o.seed}, {"dims", dims}}},
          {"runs", o.measure_runs},
          {"artifact_p50_ms", median(art_ms)},
          {"onnx_p50_ms", median(onnx_ms)},
          {"artifact_first_run_ms", first_run_ms},
          {"artifact_creation_ms", times.total},
          {"artifact_creation", {{"read_ms", times.read}, {"check_ms", times.check},
                                 {"plans_ms", times.plans}, {"plans", times.plans_made},
                                 {"packed_taken", times.packed_taken},
                                 {"reordered", times.reordered}}},
          {"onnx_creation_ms", onnx_creation_ms},
          {"plan", {{"steps", plan.steps}, {"kernels", plan.kernels}}},
          {"outputs_match", ok},
          {"outputs", outputs},
          {"against", "the .onnx on the fast engine at -O0 (accuracy) and at the same -O level (speed)"}};
}

}  // namespace kiln::artifact
