// kiln's own measure of the machine's peaks: fp32 FMA, int8 and (where native) bf16 dot-product
// throughput on all threads and streaming memory bandwidth, in well under a second; `machine_peak`
// caches them once per machine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "profile/roofline.h"

namespace kiln {

struct MachinePeak {
  std::string cpu;          // the CPU (cpu::cpu_identity: its model name, family, model, stepping)
  int threads = 1;
  std::string isa;          // the FMA loop that ran: "avx512", "avx2", "scalar"
  double gflops = 0;        // fp32 FMA throughput, all threads
  double copy_gbps = 0;     // a[i] = b[i], bytes read + written per second
  double triad_gbps = 0;    // a[i] = b[i] + s * c[i]
  // Reduced precision, all threads, on the widest units the CPU has: int8 multiply-adds as 2 ops
  // each ("amx_int8": tile products; "avx512_vnni": vpdpbusd; "avx512bw" or "avx2": the
  // vpmaddubsw + vpmaddwd + vpaddd sequence of CPUs without VNNI), and bf16 dot products as 2
  // FLOPs per multiply-add ("amx_bf16", "avx512_bf16"), measured only where the CPU has them
  // (bf16_native false: bf16 work would be emulated in fp32, and bf16_gflops is 0).
  std::string int8_isa;
  double int8_gops = 0;
  bool bf16_native = false;
  std::string bf16_isa;
  double bf16_gflops = 0;
  // What oneDNN's matmul achieves (multiply-adds x 2 per second, all threads) on a 256 x 1024 by
  // 1024 x 1024 product per precision; 0 where oneDNN has no kernel for it on this CPU. The
  // precision forecast scales compute-bound nodes by these ratios, not by the instruction peaks.
  double gemm_f32_gops = 0, gemm_int8_gops = 0, gemm_bf16_gops = 0;
  double probe_seconds = 0; // how long measuring took
  bool from_cache = false;

  double gbps() const { return copy_gbps > triad_gbps ? copy_gbps : triad_gbps; }
  Roofline roofline() const { return {gflops, gbps()}; }
};

// Measures now, on `threads` threads.
MachinePeak measure_peak(int threads);

// The cache file: $XDG_CACHE_HOME/kiln/peak.json, else ~/.cache/kiln/peak.json; nothing when
// neither variable is set.
std::optional<std::filesystem::path> peak_cache_path();

// The cached peak for this CPU model and thread count, measuring (and caching) when there is none
// or when `use_cache` is false; then the cache keeps, per figure, the best measured so far (a
// probe on a busy machine reads low). A cache that cannot be read or written is ignored.
MachinePeak machine_peak(int threads, bool use_cache);

}  // namespace kiln
