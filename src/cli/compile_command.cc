// kiln compile: an .onnx model into an artifact for a target (src/artifact, docs/artifact.md).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "artifact/cache.h"
#include "artifact/compile.h"
#include "backend/registry.h"
#include "cli/commands.h"
#include "cli/json_text.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "target/target.h"

namespace kiln::cli {

namespace {

struct CompileArgs {
  artifact::CompileOptions compile;
  std::string out, cache, cache_size = "2G";
  bool json = false, list = false;
  BackendFlags placement;
};

std::string read_all(const std::string& path) {
  auto f = MappedFile::open(path);
  return std::string(reinterpret_cast<const char*>(f->data()), static_cast<size_t>(f->size()));
}

void print_summary(const artifact::Manifest& m, const std::string& out, size_t bytes) {
  const nlohmann::json& j = m.json;
  std::cout << fmt::format("compiled {} for {} -> {} ({:.1f} MB) in {:.2f} s\n",
                           j["model"]["file"].get<std::string>(), m.target, out,
                           static_cast<double>(bytes) / (1 << 20),
                           j.value("compile_seconds", 0.0));
  std::string pipeline;
  for (const auto& p : j["pipeline"]) pipeline += (pipeline.empty() ? "" : ",") + p.get<std::string>();
  std::cout << fmt::format("  target     {} (needs {}), kernels {}, oneDNN {}\n", m.target,
                           fmt::join(m.required_features, ","),
                           j["target"]["kernel_isa"].get<std::string>(),
                           j["target"]["onednn_isa"].get<std::string>());
  std::cout << fmt::format("  pipeline   {}\n", pipeline);
  if (j.contains("placement") && j["placement"].is_object())
    std::cout << fmt::format("  placement  {}{}\n", j["placement"].value("summary", ""),
                             j["placement"].value("compiled", true) ? "" : " (claims only)");
  std::cout << fmt::format("  graph      {} nodes -> {}; {} plans made ahead; {} weights pre-packed "
                           "({:.1f} MB)\n",
                           j["model"]["nodes"].get<int>(), j["model"]["nodes_optimized"].get<int>(),
                           m.planned_signatures.size(), j["packed_weights"]["entries"].get<int>(),
                           j["packed_weights"]["bytes"].get<double>() / (1 << 20));
  if (!m.profiles.empty()) {
    std::string p;
    for (const auto& d : m.profiles) p += (p.empty() ? "" : " ") + d.to_string();
    std::cout << fmt::format("  shapes     {}{}\n", p, m.strict_shapes ? " (strict)" : "");
  }
  if (j.contains("predicted") && j["predicted"].is_object()) {
    const auto& p = j["predicted"];
    std::cout << fmt::format("  predicted  {:.3g} ms, the roofline estimate ({:.0f} GFLOP/s, {:.0f} GB/s {}){}\n",
                             p.value("ms", 0.0), p.value("gflops", 0.0), p.value("gbps", 0.0),
                             p.value("peaks", ""),
                             j.contains("measured") ? fmt::format("; measured p50 {:.2f}x it",
                                                                  j["measured"].value("artifact_p50_ms", 0.0) /
                                                                      std::max(p.value("ms", 0.0), 1e-9))
                                                    : "");
  }
  if (j.contains("measured")) {
    const auto& x = j["measured"];
    std::cout << fmt::format(
        "  measured   session creation {:.1f} ms (the .onnx: {:.1f} ms); p50 {:.3f} ms (the .onnx: "
        "{:.3f} ms); outputs {} the original's\n",
        x["artifact_creation_ms"].get<double>(), x["onnx_creation_ms"].get<double>(),
        x["artifact_p50_ms"].get<double>(), x["onnx_p50_ms"].get<double>(),
        x["outputs_match"].get<bool>() ? "match" : "DIFFER from");
  }
}

int run_compile(CompileArgs& a) {
  if (a.list) {
    std::cout << describe_targets();
    return 0;
  }
  KILN_CHECK(!a.compile.model.empty() && !a.out.empty(), ErrorKind::kBadInput,
             "kiln compile needs MODEL and -o OUT.kiln");
  find_target(a.compile.target);  // a bad target or backend list fails before any work
  if (!a.placement.backends.empty()) a.compile.backends = backend::parse_backend_list(a.placement.backends);
  a.compile.strict_backends = a.placement.strict;
  std::optional<artifact::ArtifactCache> cache;
  std::string key;
  if (!a.cache.empty()) {
    cache.emplace(a.cache, artifact::parse_size(a.cache_size));
    key = artifact::compile_key(artifact::model_content_sha256(a.compile.model), a.compile);
    if (auto hit = cache->lookup(key)) {
      write_file_atomically(a.out, read_all(hit->string()));
      if (a.json) {
        std::cout << json_text({{"cache_hit", true}, {"key", key}, {"path", hit->string()},
                                {"out", a.out}}) << "\n";
      } else {
        std::cout << fmt::format("cache hit: {} ({}) -> {}\n", key.substr(0, 16), hit->string(), a.out);
      }
      return 0;
    }
  }
  const artifact::CompileResult r = artifact::compile(a.compile);
  write_file_atomically(a.out, r.bytes);
  artifact::Eviction ev;
  if (cache) cache->store(key, r.bytes, &ev);
  if (a.json) {
    nlohmann::json j = r.manifest.json;
    j["out"] = a.out;
    j["notes"] = r.notes;
    if (cache) j["cache"] = {{"hit", false}, {"key", key}, {"evicted_files", ev.files}};
    std::cout << json_text(j) << "\n";
    return r.manifest.json.value("measured", nlohmann::json::object()).value("outputs_match", true) ? 0 : 1;
  }
  print_summary(r.manifest, a.out, r.bytes.size());
  for (const auto& n : r.notes) std::cout << "  note       " << n << "\n";
  if (cache)
    std::cout << fmt::format("  cache      stored as {}{}\n", key.substr(0, 16),
                             ev.files ? fmt::format("; evicted {} least recently used ({:.1f} MB)",
                                                    ev.files, static_cast<double>(ev.bytes) / (1 << 20))
                                      : "");
  const auto measured = r.manifest.json.value("measured", nlohmann::json::object());
  return measured.value("outputs_match", true) ? 0 : 1;
}

}  // namespace

Action add_compile(CLI::App& app) {
  auto a = std::make_shared<CompileArgs>();
  app.add_option("model", a->compile.model, "ONNX model file");
  app.add_option("-o,--output", a->out, "The artifact to write (OUT.kiln)");
  app.add_option("--target", a->compile.target,
                 "x86-64, x86-64-v3, x86-64-v4, aarch64-linux or native (default: native)");
  app.add_option("--shapes", a->compile.shapes,
                 "A symbolic dim's declared sizes, NAME=V1,V2 or NAME=LO..HI (repeatable): plans for "
                 "them are made at load");
  app.add_flag("--strict-shapes", a->compile.strict_shapes,
               "Refuse, at run time, input sizes outside the declared --shapes");
  app.add_option("--passes", a->compile.passes, "Comma-separated passes instead of the -O level's");
  app.add_option("-O", a->compile.level, "Optimization level of the portable passes (default 2)")
      ->check(CLI::Range(0, 3));
  app.add_option("--threads", a->compile.threads, "Threads for the measurement (default: all cores)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--runs", a->compile.measure_runs,
                 "Timed runs of the artifact and the .onnx when the target runs here (default 10; 0: "
                 "no measurement)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--seed", a->compile.seed, "Seed of the random inputs measured on (default 0)");
  app.add_option("--cache", a->cache, "Keep artifacts in this folder, keyed by model, options, target "
                                      "and kiln; a hit is copied, not compiled");
  app.add_option("--cache-size", a->cache_size, "The cache's size limit (default 2G): the least "
                                                "recently used artifacts go first");
  add_allow_newer_opset(app, a->compile.allow_newer_opset);
  add_backend_flags(app, a->placement);
  app.add_flag("--json", a->json, "Print the manifest as one JSON object");
  app.add_flag("--list-targets", a->list, "Print the target table and exit");
  return [a]() { return run_compile(*a); };
}

}  // namespace kiln::cli
