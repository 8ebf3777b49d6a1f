#include "artifact/compile.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>

#include "artifact/format/format.h"
#include "artifact/format/graph_codec.h"
#include "artifact/load/artifact.h"
#include "artifact/load/compatibility.h"
#include "artifact/load/packed_weights.h"
#include "artifact/measure.h"
#include "artifact/placement.h"
#include "engine/compiled_model.h"
#include "ir/walk.h"
#include "onnx/import.h"
#include "ops/infer.h"
#include "opt/pipeline.h"
#include "runtime/input_dims.h"
#include "runtime/random_inputs.h"
#include "runtime/session.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "support/read_file.h"
#include "support/sha256.h"
#include "target/target.h"

namespace kiln::artifact {

namespace {

using Clock = std::chrono::steady_clock;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int count_nodes(const Graph& g) {
  int n = 0;
  for_each_nested_node(g, [&](const Node&) { ++n; });
  return n;
}

nlohmann::json values_json(const std::vector<const Value*>& vs) {
  nlohmann::json j = nlohmann::json::array();
  for (const Value* v : vs) j.push_back({{"name", v->name}, {"type", v->type.to_string()}});
  return j;
}

// The input dims the loader plans ahead: every combination of the profiles' values (a range by
// its two ends), when the profiles name every symbolic dim of the inputs; at most 16 (the engine
// keeps 16 plans).
std::vector<std::vector<std::vector<int64_t>>> planned_signatures(
    const std::vector<const Value*>& inputs, const std::vector<DimProfile>& profiles,
    std::vector<std::string>& notes) {
  std::vector<std::map<std::string, int64_t>> combos = {{}};
  for (const DimProfile& p : profiles) {
    std::vector<std::map<std::string, int64_t>> next;
    for (const auto& c : combos)
      for (int64_t v : p.values) {
        auto d = c;
        d[p.dim] = v;
        next.push_back(std::move(d));
      }
    combos = std::move(next);
  }
  if (combos.size() > 16) {
    notes.push_back(fmt::format("{} shape combinations declared: the first 16 are planned at load, "
                                "the rest on first use", combos.size()));
    combos.resize(16);
  }
  std::vector<std::vector<std::vector<int64_t>>> out;
  for (const auto& c : combos) {
    std::vector<std::vector<int64_t>> sig;
    for (const Value* in : inputs) {
      if (!in->type.is_tensor() || !in->type.shape) return {};
      std::vector<int64_t> dims;
      for (const Dim& d : *in->type.shape) {
        if (d.is_known()) dims.push_back(d.value());
        else if (d.is_symbolic() && c.contains(d.sym())) dims.push_back(c.at(d.sym()));
        else {
          notes.push_back(fmt::format("input '{}' has dim {} that no --shapes names: no plan is "
                                      "made ahead; each new shape plans on first use",
                                      in->name, d.to_string()));
          return {};
        }
      }
      sig.push_back(std::move(dims));
    }
    out.push_back(std::move(sig));
  }
  return out;
}

// The input dims the placement is made for: the first planned signature, else the inputs' dims
// with every symbolic one 1 (as kiln analyze does without --dim).
std::vector<std::vector<int64_t>> placement_signature(const std::vector<const Value*>& inputs,
                                                      const std::vector<std::vector<std::vector<int64_t>>>& planned) {
  if (!planned.empty()) return planned.front();
  std::vector<std::vector<int64_t>> sig;
  for (const Value* v : inputs) sig.push_back(concrete_dims(*v, RandomInputOptions{}));
  return sig;
}

}  // namespace

std::string model_content_sha256(const std::string& model_path) {
  const std::string bytes = read_file(model_path);
  const std::filesystem::path dir = std::filesystem::path(model_path).parent_path();
  Sha256 h;
  h.update(bytes);
  // External data may pass read_file's bound (that is why it is external): hashed from its mapping.
  for (const std::filesystem::path& f : external_data_files(bytes, dir.empty() ? "." : dir)) {
    const auto m = MappedFile::open(f);
    h.update(fmt::format("\nexternal {} {}", f.filename().string(),
                         sha256_hex({reinterpret_cast<const char*>(m->data()), static_cast<size_t>(m->size())})));
  }
  return h.hex();
}

std::string compile_key(const std::string& model_sha256, const CompileOptions& o) {
  Sha256 h;
  h.update(fmt::format("kiln {} build {} format {}\n", kiln_version(), kiln_build_id(), kFormatVersion));
  h.update(fmt::format("model {}\ntarget {}\nlevel {}\npasses {}\nstrict {}\nnewer {}\n",
                       model_sha256, find_target(o.target).name, o.level, o.passes,
                       o.strict_shapes, o.allow_newer_opset));
  for (const auto& s : o.shapes) h.update("shapes " + s + "\n");
  h.update(fmt::format("backends {} strict {}\n", fmt::join(o.backends, ","), o.strict_backends));
  return h.hex();
}

CompileResult compile(const CompileOptions& o) {
  const auto t0 = Clock::now();
  CompileResult r;
  const Target& target = find_target(o.target);
  std::vector<DimProfile> profiles;
  for (const auto& s : o.shapes) profiles.push_back(parse_dim_profile(s));
  const std::vector<std::string> passes =
      o.passes.empty() ? opt::level_pipeline(o.level) : opt::parse_pipeline(o.passes);

  const std::string bytes = read_file(o.model);
  const std::string model_sha = sha256_hex(bytes);
  const auto dir = std::filesystem::path(o.model).parent_path();
  r.runs_here = missing_on_host(target).empty();
  // The caps before any oneDNN primitive exists: the plans, the packing and the measurement are
  // the target's.
  if (r.runs_here)
    if (std::string p = apply_isa_cap(target); !p.empty()) r.notes.push_back(p);

  Model m = load_model_from_bytes(bytes, dir);
  const int nodes_before = count_nodes(*m.graph);
  prepare_model(m, {.allow_newer_opset = o.allow_newer_opset});
  const opt::OptimizeResult optimized = opt::optimize(m, passes);
  infer_shapes(m);
  engine::rewrite_for_engine(m);
  const int nodes_after = count_nodes(*m.graph);

  std::vector<const Value*> inputs;  // the fed inputs, as the CompiledModel will have them
  for (const Value* v : m.graph->inputs)
    if (!v->is_constant()) inputs.push_back(v);
  for (const DimProfile& p : profiles) {
    const auto names = symbolic_input_dims(inputs);
    KILN_CHECK(std::find(names.begin(), names.end(), p.dim) != names.end(), ErrorKind::kBadInput,
               "--shapes {}: the model's inputs have no dim '{}' (they have: {})", p.to_string(),
               p.dim, names.empty() ? "none symbolic" : fmt::format("{}", fmt::join(names, ", ")));
  }
  Manifest mf;
  mf.planned_signatures = planned_signatures(inputs, profiles, r.notes);
  // The placement on the graph as the loader will read it (the engine's preparation adds nothing).
  PlacementRecord placed = place_for_artifact(
      m, placement_signature(inputs, mf.planned_signatures), target,
      {.backends = o.backends, .strict = o.strict_backends, .compile = r.runs_here, .threads = o.threads});
  r.notes.insert(r.notes.end(), placed.notes.begin(), placed.notes.end());

  // The plain weights stay: the artifact is written from them after the plans are made.
  engine::CompiledModel cm(std::move(m), {.threads = o.threads, .allow_newer_opset = o.allow_newer_opset,
                                          .keep_plain_weights = true},
                           engine::CompiledModel::Prepared{});
  const auto plan_t0 = Clock::now();
  if (r.runs_here)
    for (const auto& sig : mf.planned_signatures) cm.prepare(sig);
  const double plan_ms = std::chrono::duration<double, std::milli>(Clock::now() - plan_t0).count();
  if (!r.runs_here)
    r.notes.push_back(fmt::format("target {} does not run here: the artifact holds the optimized "
                                  "graph and its weights; plans and packed weights are made at load",
                                  target.name));

  EncodedModel enc = encode_model(cm.model());
  PackedSections packed = r.runs_here ? encode_packed(cm.weight_cache(), enc.weight_offsets)
                                      : PackedSections{};

  mf.format_version = kFormatVersion;
  mf.kiln_version = kiln_version();
  mf.target = target.name;
  mf.target_arch = target.arch;
  mf.target_level = target.level;
  mf.required_features = target.features;
  mf.onednn_version = onednn_version();
  mf.profiles = profiles;
  mf.strict_shapes = o.strict_shapes;
  nlohmann::json& j = mf.json;
  j["kiln_build"] = kiln_build_id();
  j["target"] = {{"summary", target.summary}, {"kernel_isa", target.kernel_isa},
                 {"onednn_isa", target.onednn_isa}};
  j["backends"] = std::move(placed.backends);
  j["placement"] = std::move(placed.placement);
  j["predicted"] = std::move(placed.predicted);
  j["model"] = {{"file", std::filesystem::path(o.model).filename().string()}, {"sha256", model_sha},
                {"bytes", bytes.size()}, {"nodes", nodes_before}, {"nodes_optimized", nodes_after},
                {"inputs", values_json(cm.inputs())}, {"outputs", values_json(cm.outputs())}};
  j["options"] = {{"optimize_level", o.level}, {"passes", o.passes}, {"shapes", o.shapes},
                  {"strict_shapes", o.strict_shapes}, {"threads", o.threads}, {"seed", o.seed},
                  {"backends", o.backends}, {"strict_backends", o.strict_backends}};
  j["pipeline"] = target_pipeline(target, passes);
  j["optimizer"] = {{"rounds", optimized.rounds}, {"ms", optimized.ms}};
  j["packed_weights"] = {{"entries", packed.entries}, {"bytes", packed.bytes},
                         {"not_packed", packed.skipped}};
  // The implementation choices its plans were made with (measured here, or this machine's
  // cached ones): the loader takes them, so it times nothing and its packings match.
  if (r.runs_here && cm.choices().size() > 0) j["choices"] = nlohmann::json::parse(cm.choices().to_json());
  j["runs_here"] = r.runs_here;
  j["compiled_at"] = utc_now();
  if (!r.runs_here) j["note"] = r.notes.back();

  std::vector<SectionOut> sections;
  auto assemble = [&] {
    sync_manifest_json(mf);
    j["compile_seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
    j["plan_ms"] = plan_ms;
    // The file's own size is in its manifest: assembled until the size it states is its size.
    std::string out;
    for (int pass = 0; pass < 4; ++pass) {
      sections.clear();
      sections.push_back({SectionKind::kManifest, mf.to_text()});
      sections.push_back({SectionKind::kGraph, enc.graph});
      sections.push_back({SectionKind::kWeights, enc.weights, false});
      if (packed.entries > 0) {
        sections.push_back({SectionKind::kPackedIndex, packed.index});
        sections.push_back({SectionKind::kPackedData, packed.data, false});
      }
      out = write_container(sections);
      if (j.value("size_bytes", uint64_t{0}) == out.size()) break;
      j["size_bytes"] = out.size();
    }
    return out;
  };
  r.bytes = assemble();
  if (r.runs_here && o.measure_runs > 0) {
    try {
      j["measured"] = measure_artifact(r.bytes, bytes, dir, o, r.notes);
    } catch (const Error& e) {
      // Inputs kiln cannot make up (strings, sequences) or sizes it cannot find: the artifact is
      // written all the same, unmeasured, and says why.
      if (e.kind() == ErrorKind::kInternal) throw;
      r.notes.push_back(std::string("not measured: ") + e.what());
      j["not_measured"] = e.what();
    }
    r.bytes = assemble();
  }
  r.manifest = mf;
  return r;
}

}  // namespace kiln::artifact
