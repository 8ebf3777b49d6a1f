// ONNX's LSTM on float data: the input projection of every time step in one product (oneDNN's
// sgemm), then per step the recurrent product (on the packed weights at batch 1, units split over
// the threads: recurrent_gemm.h) and the gates (i, o, f, c; sigmoid, tanh, tanh, optional
// peepholes) through the active ISA's lstm_cell (kernels.h), a register of units at a time. The reference kernel computes in double and copies the weights
// into doubles on every call (silero VAD spent 1 ms there per run on a 128-wide cell).
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::engine::cpu {

class PackedRecurrent;

struct LstmDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int64_t directions = 1;
  bool batch_first = false;  // layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden]
};

// One direction `dir` (reverse: the sequence from its end). w [4H, I], r [4H, H], bias [8H] (Wb
// then Rb) or null, peep [3H] or null; h and c [batch, H] hold the initial state and get the
// last. y: the output of every step, or null. packed: r packed for batch 1 (recurrent_gemm.h),
// used when the batch is 1; or null.
void lstm_direction(const LstmDims& d, int64_t dir, bool reverse, const float* x, const float* w,
                    const float* r, const float* bias, const float* peep, float* h, float* c,
                    float* y, const PackedRecurrent* packed = nullptr);

}  // namespace kiln::engine::cpu
