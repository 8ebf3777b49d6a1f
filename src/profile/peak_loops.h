// The peak probe's timed loops (internal to src/profile): each runs `iters` iterations of
// independent dot-product chains on one thread and returns a value that keeps the work alive.
#pragma once

#include <cstdint>

namespace kiln::peak_loops {

constexpr int kChains = 16;  // independent accumulators: enough to fill every pipe
// AVX2 has 16 vector registers: 16 accumulators beside the loop's constants spilled three of them
// to the stack (a load and a store each per iteration), and the probe read Zen 3's FMA peak low.
constexpr int kChainsAvx2 = 12;

struct FmaLoop {
  const char* isa = nullptr;
  float (*run)(int64_t iters) = nullptr;  // null: nothing this CPU runs
  double ops_per_iter = 0;                // multiply-adds count 2
};

// int8 (u8 x s8 into s32): AMX tiles where the CPU has them and Linux lets the process use them,
// else VNNI, else the vpmaddubsw + vpmaddwd + vpaddd sequence (AVX-512 BW, AVX2).
FmaLoop best_int8_loop();
// bf16 dot products (into f32): AMX tiles, else AVX-512 BF16; none where the CPU has neither.
FmaLoop best_bf16_loop();

}  // namespace kiln::peak_loops
