// Vectorized elementwise kernels on float32: activations and math functions, binary arithmetic
// with numpy broadcasting. Same semantics as the ONNX ops (and kiln's reference kernels in
// src/ops); large sizes run on the OpenMP threads.
#pragma once

#include <cstdint>
#include <span>

namespace kiln::cpu {

enum class UnaryOp : uint8_t {
  kRelu,
  kLeakyRelu,    // alpha (0.01)
  kSigmoid,
  kTanh,
  kErf,
  kGeluErf,      // 0.5 x (1 + erf(x / sqrt 2)): Gelu, approximate = "none"
  kGeluTanh,     // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): approximate = "tanh"
  kHardSigmoid,  // clamp(alpha x + beta, 0, 1): alpha (0.2), beta (0.5)
  kHardSwish,    // x clamp(x / 6 + 0.5, 0, 1)
  kClip,         // clamp(x, alpha, beta): alpha = min, beta = max; NaN stays NaN
  kSwish,        // x sigmoid(alpha x): alpha (1: SiLU)
  kExp,
  kSqrt,
  kNeg,
  kAbs,
  kReciprocal,
  kIdentity,
  kCount
};

// The float attributes of a unary op (see UnaryOp for which ones it reads).
struct UnaryParams {
  float alpha = 0;
  float beta = 0;
};
// The ONNX defaults of op's attributes (Clip: float's lowest and max, so infinities clip).
UnaryParams default_params(UnaryOp op);
const char* unary_name(UnaryOp op);  // the ONNX op name ("Relu", "Gelu", ...)

// y[i] = op(x[i]) for i < n. y may be x (in place).
void unary(UnaryOp op, const float* x, float* y, int64_t n, UnaryParams p);
inline void unary(UnaryOp op, const float* x, float* y, int64_t n) {
  unary(op, x, y, n, default_params(op));
}

// One operation on a run of values, in place: an activation, or y = alpha * y + beta (affine).
struct RowOp {
  bool affine = false;
  UnaryOp op = UnaryOp::kIdentity;
  UnaryParams p;  // affine: alpha, beta
};
// y[0, n) = ops applied in order to x[0, n) (a copy when there are none), on the calling thread
// (a kernel's row while it is in cache). y may be x.
void apply_row_ops(std::span<const RowOp> ops, const float* x, float* y, int64_t n);
inline void apply_row_ops(std::span<const RowOp> ops, float* y, int64_t n) { apply_row_ops(ops, y, y, n); }

enum class BinaryOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,  // NaN in either operand gives NaN (ONNX Max)
  kMin,
  kPow,
  kCount
};
const char* binary_name(BinaryOp op);

// y[i] = a[i] op b[i]. y may be a or b.
void binary(BinaryOp op, const float* a, const float* b, float* y, int64_t n);
// y[i] = a[i] op b, and y[i] = a op b[i].
void binary_scalar(BinaryOp op, const float* a, float b, float* y, int64_t n);
void scalar_binary(BinaryOp op, float a, const float* b, float* y, int64_t n);

// y = a op b with numpy broadcasting; y has the broadcast dims (the caller checked that a_dims and
// b_dims broadcast). y may be a or b when that input already has y's dims. Same shape, scalar,
// row and column broadcasts are single passes; other patterns run the innermost contiguous run
// as one of those.
void binary_broadcast(BinaryOp op, const float* a, std::span<const int64_t> a_dims, const float* b,
                      std::span<const int64_t> b_dims, float* y);

// y[r * len + j] = x[r * len + j] * s[index[r]] for r < runs, j < len: runs of values sharing a
// scale (a conv's packed weights times a scale per input channel). y may be x.
void scale_runs(const float* x, const float* s, const int32_t* index, float* y, int64_t runs,
                int64_t len);

}  // namespace kiln::cpu
