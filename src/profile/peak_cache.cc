// The peak cache: one JSON file of measured peaks keyed by the CPU (cpu::cpu_identity) and thread
// count, in kiln's cache folder.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/cache_folder.h"
#include "engine/cpu/cpu_features.h"
#include "profile/peak_probe.h"
#include "support/error.h"

namespace kiln {

namespace {

using nlohmann::json;

constexpr int kCacheVersion = 3;  // 2: the int8 and bf16 peaks; 3: int8's matmul without VNNI is kiln's int16 one

std::string cache_key(const std::string& cpu, int threads) {
  return cpu + " | " + std::to_string(threads) + " threads";
}

json to_json(const MachinePeak& p) {
  return {{"cpu", p.cpu}, {"threads", p.threads}, {"isa", p.isa}, {"gflops", p.gflops},
          {"copy_gbps", p.copy_gbps}, {"triad_gbps", p.triad_gbps}, {"int8_isa", p.int8_isa},
          {"int8_gops", p.int8_gops}, {"bf16_native", p.bf16_native}, {"bf16_isa", p.bf16_isa}, {"bf16_gflops", p.bf16_gflops},
          {"gemm_f32_gops", p.gemm_f32_gops}, {"gemm_int8_gops", p.gemm_int8_gops},
          {"gemm_bf16_gops", p.gemm_bf16_gops},
          {"probe_seconds", p.probe_seconds}};
}

std::optional<MachinePeak> from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  MachinePeak p;
  p.cpu = j.value("cpu", "");
  p.threads = j.value("threads", 0);
  p.isa = j.value("isa", "");
  p.gflops = j.value("gflops", 0.0);
  p.copy_gbps = j.value("copy_gbps", 0.0);
  p.triad_gbps = j.value("triad_gbps", 0.0);
  p.int8_isa = j.value("int8_isa", "");
  p.int8_gops = j.value("int8_gops", 0.0);
  p.bf16_native = j.value("bf16_native", false);
  p.bf16_isa = j.value("bf16_isa", "");
  p.bf16_gflops = j.value("bf16_gflops", 0.0);
  p.gemm_f32_gops = j.value("gemm_f32_gops", 0.0);
  p.gemm_int8_gops = j.value("gemm_int8_gops", 0.0);
  p.gemm_bf16_gops = j.value("gemm_bf16_gops", 0.0);
  p.probe_seconds = j.value("probe_seconds", 0.0);
  if (p.int8_isa.empty() || (p.bf16_native && p.bf16_gflops <= 0) || p.gemm_f32_gops <= 0)
    return std::nullopt;
  if (p.gflops <= 0 || p.gbps() <= 0 || p.threads <= 0) return std::nullopt;
  p.from_cache = true;
  return p;
}

}  // namespace

std::optional<std::filesystem::path> peak_cache_path() {
  const auto folder = engine::cache_folder();
  if (!folder) return std::nullopt;
  return *folder / "peak.json";
}

MachinePeak machine_peak(int threads, bool use_cache) {
  const auto path = peak_cache_path();
  const std::string key = cache_key(cpu::cpu_identity(), threads);
  json cache = path ? engine::read_machine_sections(*path, kCacheVersion) : json::object();
  if (use_cache && cache.contains("machines") && cache["machines"].contains(key))
    if (auto p = from_json(cache["machines"][key])) return *p;

  MachinePeak p = measure_peak(threads);
  if (!path) return p;
  // A peak is an upper bound: a new measurement (on a busy machine, lower) keeps the best seen.
  if (cache.contains("machines") && cache["machines"].contains(key))
    if (auto old = from_json(cache["machines"][key])) {
      p.gflops = std::max(p.gflops, old->gflops);
      p.copy_gbps = std::max(p.copy_gbps, old->copy_gbps);
      p.triad_gbps = std::max(p.triad_gbps, old->triad_gbps);
      if (old->int8_isa == p.int8_isa) p.int8_gops = std::max(p.int8_gops, old->int8_gops);
      // The matmul figures are read as ratios (int8 / fp32, bf16 / fp32): keep them from one
      // probe, the one whose fp32 product ran fastest, not the best of each from different loads.
      if (old->gemm_f32_gops > p.gemm_f32_gops) {
        p.gemm_f32_gops = old->gemm_f32_gops;
        p.gemm_int8_gops = old->gemm_int8_gops;
        p.gemm_bf16_gops = old->gemm_bf16_gops;
      }
      if (old->bf16_isa == p.bf16_isa) p.bf16_gflops = std::max(p.bf16_gflops, old->bf16_gflops);
    }
  cache["machines"][key] = to_json(p);
  engine::write_machine_sections(*path, std::move(cache), kCacheVersion);  // a read-only home: good for this run
  return p;
}

}  // namespace kiln
