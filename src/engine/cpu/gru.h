// ONNX's GRU on float data: the input projection of every time step in one product (oneDNN's
// sgemm), then per step the recurrent product (recurrent_gemm.h, as LSTM's) and the gates (z, r,
// h; sigmoid, sigmoid, tanh), in both forms of linear_before_reset (torch exports 1: one
// recurrent product of all three gates per step; 0: the z and r rows first, then the candidate's
// on r * H), the gates through the active ISA's gru_reset and gru_cell (kernels.h). The
// reference kernel computes in double and copies the weights into doubles on every call.
#pragma once

#include <cstdint>

namespace kiln::engine::cpu {

struct GruDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int64_t directions = 1;
  bool batch_first = false;          // layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden]
  bool linear_before_reset = false;
};

class PackedRecurrent;

// r packed for batch 1 (recurrent_gemm.h): with linear_before_reset, `gates` holds all three;
// without, z's and r's, and `candidate` the candidate's. Used when the batch is 1.
struct GruPacks {
  const PackedRecurrent* gates = nullptr;
  const PackedRecurrent* candidate = nullptr;
};

// One direction `dir` (reverse: the sequence from its end). w [3H, I], r [3H, H], bias [6H] (Wb
// then Rb) or null; h [batch, H] holds the initial state and gets the last. y: the output of
// every step, or null.
void gru_direction(const GruDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                   const float* r, const float* bias, float* h, float* y, const GruPacks& packs = {});

}  // namespace kiln::engine::cpu
