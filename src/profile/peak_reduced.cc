// The peak probe's reduced-precision loops: int8 and bf16 dot products on the widest units the
// CPU has (AMX tiles, VNNI / AVX-512 BF16, or the multi-instruction int8 sequence before VNNI).
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "profile/peak_loops.h"

namespace kiln::peak_loops {

namespace {

float sum_lanes(const float* lanes, int n) {
  float total = 0;
  for (int i = 0; i < n; ++i) total += lanes[i];
  return total;
}

// (Not _mm512_reduce_add_epi32: GCC 12 warns inside it.)
__attribute__((target("avx512f"))) float sum_int_lanes(__m512i v) {
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, v);
  float total = 0;
  for (int32_t x : lanes) total += static_cast<float>(x);
  return total;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) float int8_loop_vnni(int64_t iters) {
  __m512i acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  }
  __m512i s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
  return sum_int_lanes(s);
}

// Before VNNI: u8 x s8 pairs summed into s16 (vpmaddubsw), pairs of those into s32 (vpmaddwd),
// added. The u8 operand is loaded per chain from a small array the loop re-reads: from constants
// the compiler hoisted the two multiplies out of the loop (one product for every chain and
// iteration) and the probe timed the adds alone.
__attribute__((target("avx512f,avx512bw"))) float int8_loop_avx512bw(int64_t iters) {
  alignas(64) int8_t src[kChains][64];
  std::memset(src, 3, sizeof(src));
  __m512i acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i b = _mm512_set1_epi8(-2), ones = _mm512_set1_epi16(1);
  for (int64_t it = 0; it < iters; ++it) {
    __asm__ __volatile__("" : : "r"(src) : "memory");  // src may have changed: load it again
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) {
      const __m512i a = _mm512_load_si512(src[i]);
      acc[i] = _mm512_add_epi32(acc[i], _mm512_madd_epi16(_mm512_maddubs_epi16(a, b), ones));
    }
  }
  __m512i s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
  return sum_int_lanes(s);
}

// The same on AVX2, with fewer chains (16 registers: the chains, the constants and a product in
// flight per chain).
__attribute__((target("avx2"))) float int8_loop_avx2(int64_t iters) {
  constexpr int kC = kChainsAvx2 / 2;
  alignas(32) int8_t src[kC][32];
  std::memset(src, 3, sizeof(src));
  __m256i acc[kC];
#pragma GCC unroll 16
  for (int i = 0; i < kC; ++i) acc[i] = _mm256_set1_epi32(i);
  const __m256i b = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
  for (int64_t it = 0; it < iters; ++it) {
    __asm__ __volatile__("" : : "r"(src) : "memory");  // src may have changed: load it again
#pragma GCC unroll 16
    for (int i = 0; i < kC; ++i) {
      const __m256i a = _mm256_load_si256(reinterpret_cast<const __m256i*>(src[i]));
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
    }
  }
  alignas(32) int32_t lanes[8];
  __m256i s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kC; ++i) s = _mm256_add_epi32(s, acc[i]);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  float total = 0;
  for (int32_t v : lanes) total += static_cast<float>(v);
  return total;
}

__attribute__((target("avx512f,avx512bf16"))) float bf16_loop(int64_t iters) {
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.01f * static_cast<float>(i));
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  return sum_lanes(lanes, 16);
}

// ---- AMX: four accumulator tiles (16 x 16 s32 or f32) fed by two pairs of source tiles, so that
// consecutive tile products are independent.

struct TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// One tile product: 16 rows x 16 columns x 64 bytes of K (int8: 64 values, bf16: 32 pairs).
constexpr double kAmxInt8Macs = 16.0 * 16 * 64;
constexpr double kAmxBf16Macs = 16.0 * 16 * 32;
constexpr int kAmxProducts = 4;

__attribute__((target("amx-tile"))) void load_tiles(const void* a, const void* b) {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  // GCC 12's _tile_loadconfig tells the compiler it reads 8 bytes only: without this barrier the
  // stores to the rest of cfg may be dropped (and ldtilecfg faults on a garbage config).
  __asm__ __volatile__("" : : "r"(&cfg) : "memory");
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, a, 64);
  _tile_loadd(5, b, 64);
  _tile_loadd(6, b, 64);
  _tile_loadd(7, a, 64);
}

__attribute__((target("amx-tile"))) float store_tiles() {
  alignas(64) int32_t out[16 * 16];
  _tile_stored(0, out, 64);
  _tile_release();
  float total = 0;
  for (int32_t v : out) total += static_cast<float>(v);
  return total;
}

__attribute__((target("amx-tile,amx-int8"))) float int8_loop_amx(int64_t iters) {
  alignas(64) int8_t a[16 * 64], b[16 * 64];
  std::memset(a, 1, sizeof a);
  std::memset(b, 2, sizeof b);
  load_tiles(a, b);
  for (int64_t it = 0; it < iters; ++it) {
    _tile_dpbusd(0, 4, 5);
    _tile_dpbusd(1, 4, 6);
    _tile_dpbusd(2, 7, 5);
    _tile_dpbusd(3, 7, 6);
  }
  return store_tiles();
}

__attribute__((target("amx-tile,amx-bf16"))) float bf16_loop_amx(int64_t iters) {
  alignas(64) uint16_t a[16 * 32], b[16 * 32];
  for (auto& v : a) v = 0x3f00;  // 0.5
  for (auto& v : b) v = 0x3a83;  // ~1e-3
  load_tiles(a, b);
  for (int64_t it = 0; it < iters; ++it) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 6);
    _tile_dpbf16ps(2, 7, 5);
    _tile_dpbf16ps(3, 7, 6);
  }
  return store_tiles();
}

// CPUID leaf 7: sub-leaf 0 EDX bits 22 (AMX-BF16), 24 (AMX-TILE), 25 (AMX-INT8); sub-leaf 1 EAX
// bit 5 (AVX512-BF16). (GCC 12's __builtin_cpu_supports knows none of them.)
bool cpuid_bit(unsigned subleaf, int reg, int bit) {
  unsigned r[4] = {};
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, subleaf, r[0], r[1], r[2], r[3]);
  return (r[reg] >> bit) & 1;
}
constexpr int kEax = 0, kEdx = 3;

// Linux hands out the tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM, kernel 5.16+).
bool amx_permitted() {
  constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  static const bool ok = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  return ok;
}

bool has_amx(int bit) { return cpuid_bit(0, kEdx, 24) && cpuid_bit(0, kEdx, bit) && amx_permitted(); }

}  // namespace

FmaLoop best_int8_loop() {
  __builtin_cpu_init();
  if (has_amx(25)) return {"amx_int8", int8_loop_amx, 2 * kAmxProducts * kAmxInt8Macs};
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
    return {"avx512_vnni", int8_loop_vnni, 2.0 * kChains * 64};
  if (__builtin_cpu_supports("avx512bw")) return {"avx512bw", int8_loop_avx512bw, 2.0 * kChains * 64};
  if (__builtin_cpu_supports("avx2")) return {"avx2", int8_loop_avx2, 2.0 * (kChainsAvx2 / 2) * 32};
  return {"none", nullptr, 0};
}

FmaLoop best_bf16_loop() {
  __builtin_cpu_init();
  if (has_amx(22)) return {"amx_bf16", bf16_loop_amx, 2 * kAmxProducts * kAmxBf16Macs};
  if (cpuid_bit(1, kEax, 5) && __builtin_cpu_supports("avx512f"))
    return {"avx512_bf16", bf16_loop, 2.0 * kChains * 32};
  return {};
}

}  // namespace kiln::peak_loops
