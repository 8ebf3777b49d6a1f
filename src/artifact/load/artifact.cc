#include "artifact/load/artifact.h"

#include <chrono>
#include <fstream>
#include <iostream>

#include "artifact/format/format.h"
#include "artifact/format/graph_codec.h"
#include "artifact/load/packed_weights.h"
#include "engine/onednn/weight_cache.h"
#include "engine/tuning.h"
#include "ops/check.h"
#include "runtime/session.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "target/target.h"

namespace kiln::artifact {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string dims_text(const std::vector<int64_t>& d) { return dims_to_string(d); }

bool placed_outside_engine(const Manifest& m) {
  const auto p = m.json.find("placement");
  if (p == m.json.end() || !p->is_object()) return false;
  const auto o = p->find("outside_engine");
  return o != p->end() && o->is_boolean() && o->get<bool>();
}

}  // namespace

std::unique_ptr<Artifact> Artifact::open(const std::filesystem::path& path, const LoadOptions& opts) {
  const auto t0 = Clock::now();
  auto file = MappedFile::open(path);
  const double map_ms = ms_since(t0);
  std::unique_ptr<Artifact> a(new Artifact);
  a->load({file->data(), static_cast<size_t>(file->size())}, file, path.string(), opts);
  a->times_.map = map_ms;
  a->times_.total = ms_since(t0);
  return a;
}

std::unique_ptr<Artifact> Artifact::from_bytes(std::span<const uint8_t> bytes,
                                               std::shared_ptr<void> owner, const std::string& what,
                                               const LoadOptions& opts) {
  const auto t0 = Clock::now();
  std::unique_ptr<Artifact> a(new Artifact);
  a->load(bytes, std::move(owner), what, opts);
  a->times_.total = ms_since(t0);
  return a;
}

void Artifact::load(std::span<const uint8_t> bytes, std::shared_ptr<void> owner,
                    const std::string& what, const LoadOptions& opts) {
  auto t0 = Clock::now();
  const Container c = read_container(bytes, owner, what, opts.verify_checksums);
  const auto manifest = c.section(SectionKind::kManifest);
  manifest_ = with_context("'" + what + "': ", [&] {
    return parse_manifest({reinterpret_cast<const char*>(manifest.data()), manifest.size()});
  });
  // Compatibility first: an artifact this machine cannot run is refused before its graph is read.
  compat_ = check_compatibility(manifest_);
  require_compatible(compat_, what);
  if (compat_.fit == Fit::kSuboptimal) {
    for (const Target& t : targets())
      if (t.name == manifest_.target) apply_isa_cap(t);  // runs the kernels it was compiled for
    if (!opts.quiet) std::cerr << "kiln: note: '" << what << "' runs suboptimally: " << compat_.message << "\n";
  }
  DecodedModel decoded = with_context("'" + what + "': ", [&] {
    return decode_model(c.section(SectionKind::kGraph), c.section(SectionKind::kWeights), owner);
  });
  times_.read = ms_since(t0);
  t0 = Clock::now();
  // The graph is untrusted: kiln's own schema checks (op, opset, counts, attributes, the graph's
  // structure), so that no kernel meets a node it was not written for. Not ONNX's type-constraint
  // tables (libonnx's schema registry: 60-70 ms to build, and protobuf's library): the compile
  // judged the types, and at load each kernel is chosen by its element type, the reference kernels
  // refusing types they do not take (the fuzz target holds the loader to that).
  with_context("'" + what + "': ", [&] {
    AllocationCapScope cap(opts.engine.allocation_cap);
    for (const std::string& w :
         check_model(decoded.model, {.allow_newer_opset = opts.engine.allow_newer_opset}))
      std::cerr << "kiln: warning: " << w << "\n";
    return true;
  });
  times_.check = ms_since(t0);
  t0 = Clock::now();
  auto weights = std::make_unique<engine::WeightCache>();
  if (c.has(SectionKind::kPackedIndex) && c.has(SectionKind::kPackedData))
    times_.packed_entries = with_context("'" + what + "': ", [&] {
      return preload_packed(*weights, c.section(SectionKind::kPackedIndex),
                            c.section(SectionKind::kPackedData), decoded.weights_by_offset, owner);
    });
  // The backends the compile placed nodes on, again (a --backends given to the command wins).
  engine::EngineOptions engine_opts = opts.engine;
  if (!engine_opts.placement && opts.recorded_placement) {
    engine_opts.placement = with_context("'" + what + "': ", [&] {
      return opts.recorded_placement(manifest_, engine_opts.threads);
    });
  } else if (!engine_opts.placement && !opts.quiet && placed_outside_engine(manifest_)) {
    std::cerr << "kiln: note: '" << what << "' was compiled with nodes placed on other backends; "
              << "this runtime has kiln's engine only, which runs them\n";
  }
  // The implementation choices the compile's plans were made with: its packed weights are in
  // their layouts, and the decisions are this target's, measured once.
  if (!engine_opts.given_choices && manifest_.json.contains("choices"))
    engine_opts.given_choices = with_context("'" + what + "': ", [&] {
      return engine::ChoiceStore::parse(manifest_.json["choices"].dump());
    });
  model_ = std::make_unique<engine::CompiledModel>(std::move(decoded.model), engine_opts,
                                                   engine::CompiledModel::Prepared{},
                                                   std::move(weights));
  if (opts.plan_ahead) {
    for (const auto& sig : manifest_.planned_signatures) {
      KILN_CHECK(sig.size() == model_->inputs().size(), ErrorKind::kBadModel,
                 "'{}': a planned signature of {} inputs, the model has {}", what, sig.size(),
                 model_->inputs().size());
      with_context("'" + what + "': planning its declared shapes: ", [&] {
        model_->prepare(sig);
        return true;
      });
      ++times_.plans_made;
    }
  }
  times_.plans = ms_since(t0);
  times_.packed_taken = model_->weight_cache().preloaded_taken();
  times_.reordered = model_->weight_cache().reordered();
}

void Artifact::check_shapes(const std::vector<RtValue>& feeds) const {
  if (!manifest_.strict_shapes) return;
  const auto& inputs = model_->inputs();
  for (size_t i = 0; i < inputs.size() && i < feeds.size(); ++i) {
    const Value* in = inputs[i];
    if (!feeds[i].is_tensor() || !in->type.shape) continue;
    const auto& dims = feeds[i].tensor.dims();
    const Shape& declared = *in->type.shape;
    for (size_t d = 0; d < declared.size() && d < dims.size(); ++d) {
      if (!declared[d].is_symbolic()) continue;
      const DimProfile* p = nullptr;
      for (const DimProfile& x : manifest_.profiles)
        if (x.dim == declared[d].sym()) p = &x;
      std::string allowed;
      for (const DimProfile& x : manifest_.profiles) allowed += (allowed.empty() ? "" : " ") + x.to_string();
      KILN_CHECK(p && p->allows(dims[d]), ErrorKind::kBadInput,
                 "input '{}' of dims {}: {}={} is outside the shapes this artifact was compiled for "
                 "with --strict-shapes ({}): recompile with --shapes covering it",
                 in->name, dims_text(dims), declared[d].sym(), dims[d],
                 allowed.empty() ? "none declared" : allowed);
    }
  }
}

std::vector<RtValue> Artifact::run(const std::vector<RtValue>& feeds, RunObserver* observer) {
  check_shapes(feeds);
  return model_->run(feeds, observer);
}

ArtifactInfo inspect_artifact(const std::filesystem::path& path) {
  auto file = MappedFile::open(path);
  const Container c = read_container({file->data(), static_cast<size_t>(file->size())}, file, path.string());
  const auto m = c.section(SectionKind::kManifest);
  ArtifactInfo info;
  info.manifest = with_context("'" + path.string() + "': ", [&] {
    return parse_manifest({reinterpret_cast<const char*>(m.data()), m.size()});
  });
  info.compatibility = check_compatibility(info.manifest);
  info.bytes = static_cast<uint64_t>(file->size());
  return info;
}

bool is_artifact_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[sizeof kMagic] = {};
  if (!f.read(magic, sizeof magic)) return false;
  return looks_like_artifact({reinterpret_cast<const uint8_t*>(magic), sizeof magic});
}

namespace {

class ArtifactRunner : public engine::ModelRunner {
 public:
  explicit ArtifactRunner(std::unique_ptr<Artifact> a) : a_(std::move(a)) {}
  const Model& model() const override { return a_->model().model(); }
  const std::vector<const Value*>& inputs() const override { return a_->model().inputs(); }
  const std::vector<const Value*>& outputs() const override { return a_->model().outputs(); }
  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer) override {
    return a_->run(feeds, observer);
  }
  std::optional<engine::PlanSummary> summary(const std::vector<RtValue>& feeds) override {
    a_->check_shapes(feeds);
    std::vector<std::vector<int64_t>> dims;
    for (const RtValue& v : feeds) dims.push_back(v.is_tensor() ? v.tensor.dims() : std::vector<int64_t>{});
    return a_->model().summary(dims);
  }
  std::optional<engine::PlanCacheStats> plan_stats() const override {
    return a_->model().plan_stats();
  }
  const Artifact& artifact() const { return *a_; }

 private:
  std::unique_ptr<Artifact> a_;
};

}  // namespace

const LoadTimes* artifact_load_times(const engine::ModelRunner& r) {
  const auto* a = dynamic_cast<const ArtifactRunner*>(&r);
  return a ? &a->artifact().times() : nullptr;
}

std::unique_ptr<engine::ModelRunner> open_artifact_runner(const std::filesystem::path& path,
                                                          engine::EngineKind kind,
                                                          const engine::EngineOptions& opts,
                                                          PlacementFactory recorded_placement) {
  KILN_CHECK(kind == engine::EngineKind::kFast, ErrorKind::kBadInput,
             "'{}': an artifact runs on the fast engine (its plans): give --engine fast, or run the "
             ".onnx on the reference", path.string());
  return std::make_unique<ArtifactRunner>(
      Artifact::open(path, {.engine = opts, .recorded_placement = std::move(recorded_placement)}));
}

}  // namespace kiln::artifact
