// Elementwise kernels: threading and broadcasting around the active ISA's loops.
#include "engine/cpu/elementwise.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "engine/cpu/broadcast.h"
#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {
namespace {

// Elements per thread below which threading does not pay: memory-bound ops need more work to
// cover the cost of waking a thread than the transcendental ones.
int64_t unary_grain(UnaryOp op) {
  switch (op) {
    case UnaryOp::kSigmoid:
    case UnaryOp::kTanh:
    case UnaryOp::kErf:
    case UnaryOp::kGeluErf:
    case UnaryOp::kGeluTanh:
    case UnaryOp::kSwish:
    case UnaryOp::kExp:
      return 16 << 10;
    default:
      return 64 << 10;
  }
}

int64_t binary_grain(BinaryOp op) { return op == BinaryOp::kPow ? 2 << 10 : 64 << 10; }

constexpr int64_t kTileFloats = 512;

// Short rows repeated along the axis above them, [..., D, inner] op [..., 1, inner] with a small
// inner (NHWC channels, oneDNN's blocks of 16 channels): the short operand is tiled once per
// outer index into a buffer of whole rows, so the long operand runs in long vv calls instead of
// one call per row. Returns false when p is not that pattern.
bool binary_tiled(BinaryOp op, const BroadcastPlan& p, const float* a, const float* b, float* y) {
  const int64_t inner = p.inner();
  if (p.dims.size() < 2 || inner * 4 > kTileFloats) return false;
  int rep = -1;  // the input that repeats its row; the other must be contiguous over the two axes
  for (int j : {0, 1})
    if (p.repeats_row(j) && p.strides[1 - j][p.dims.size() - 2] == inner &&
        p.strides[1 - j].back() == 1)
      rep = j;
  if (rep < 0) return false;
  const float* src[2] = {a, b};
  const int64_t group = p.group(), tile_len = kTileFloats / inner * inner;
  const IsaKernels& k = kernels();
  parallel_for(p.numel, binary_grain(op), [&](int64_t begin, int64_t end) {
    alignas(64) float tile[kTileFloats];
    int64_t tiled = -1;  // the group the tile holds
    for (int64_t pos = begin; pos < end;) {
      const int64_t r = pos / group;
      if (r != tiled) {
        const float* row = src[rep] + p.group_offset(rep, r);
        for (int64_t t = 0; t < tile_len; t += inner) std::memcpy(tile + t, row, inner * sizeof(float));
        tiled = r;
      }
      const int64_t len = std::min({tile_len, end - pos, (r + 1) * group - pos});
      const float* full = src[1 - rep] + p.group_offset(1 - rep, r) + (pos - r * group);
      if (rep == 1) k.binary_vv(op, full, tile, y + pos, len);
      else k.binary_vv(op, tile, full, y + pos, len);
      pos += len;
    }
  }, inner);
  return true;
}

}  // namespace

UnaryParams default_params(UnaryOp op) {
  switch (op) {
    case UnaryOp::kLeakyRelu: return {0.01f, 0};
    case UnaryOp::kHardSigmoid: return {0.2f, 0.5f};
    case UnaryOp::kClip:  // ONNX: a missing bound is the type's lowest / max (so inf is clipped)
      return {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
    case UnaryOp::kSwish: return {1.0f, 0};
    default: return {};
  }
}

const char* unary_name(UnaryOp op) {
  static constexpr const char* kNames[] = {
      "Relu",      "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Gelu",       "Gelu(tanh)", "HardSigmoid",
      "HardSwish", "Clip",      "Swish",   "Exp",  "Sqrt", "Neg",       "Abs",        "Reciprocal",
      "Identity"};
  static_assert(std::size(kNames) == static_cast<size_t>(UnaryOp::kCount));
  return kNames[static_cast<size_t>(op)];
}

const char* binary_name(BinaryOp op) {
  static constexpr const char* kNames[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
  static_assert(std::size(kNames) == static_cast<size_t>(BinaryOp::kCount));
  return kNames[static_cast<size_t>(op)];
}

void unary(UnaryOp op, const float* x, float* y, int64_t n, UnaryParams p) {
  const IsaKernels& k = kernels();
  parallel_for(n, unary_grain(op), [&](int64_t b, int64_t e) { k.unary(op, p, x + b, y + b, e - b); });
}

void apply_row_ops(std::span<const RowOp> ops, const float* x, float* y, int64_t n) {
  const IsaKernels& k = kernels();
  if (ops.empty() && x != y) k.unary(UnaryOp::kIdentity, {}, x, y, n);
  for (const RowOp& op : ops) {
    if (!op.affine) {
      k.unary(op.op, op.p, x, y, n);
    } else if (op.p.alpha != 1.0f || op.p.beta == 0.0f) {
      k.binary_vs(BinaryOp::kMul, x, op.p.alpha, y, n);
      if (op.p.beta != 0.0f) k.binary_vs(BinaryOp::kAdd, y, op.p.beta, y, n);
    } else {
      k.binary_vs(BinaryOp::kAdd, x, op.p.beta, y, n);
    }
    x = y;
  }
}

void binary(BinaryOp op, const float* a, const float* b, float* y, int64_t n) {
  const IsaKernels& k = kernels();
  parallel_for(n, binary_grain(op),
               [&](int64_t s, int64_t e) { k.binary_vv(op, a + s, b + s, y + s, e - s); });
}

void binary_scalar(BinaryOp op, const float* a, float b, float* y, int64_t n) {
  const IsaKernels& k = kernels();
  parallel_for(n, binary_grain(op),
               [&](int64_t s, int64_t e) { k.binary_vs(op, a + s, b, y + s, e - s); });
}

void scale_runs(const float* x, const float* s, const int32_t* index, float* y, int64_t runs,
                int64_t len) {
  const IsaKernels& k = kernels();
  parallel_for(runs, std::max<int64_t>(1, (16 << 10) / std::max<int64_t>(len, 1)),
               [&](int64_t b, int64_t e) {
                 k.scale_runs(x + b * len, s, index + b, y + b * len, e - b, len);
               });
}

void scalar_binary(BinaryOp op, float a, const float* b, float* y, int64_t n) {
  const IsaKernels& k = kernels();
  parallel_for(n, binary_grain(op),
               [&](int64_t s, int64_t e) { k.binary_sv(op, a, b + s, y + s, e - s); });
}

void binary_broadcast(BinaryOp op, const float* a, std::span<const int64_t> a_dims, const float* b,
                      std::span<const int64_t> b_dims, float* y) {
  const size_t rank = std::max(a_dims.size(), b_dims.size());
  std::vector<int64_t> y_dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = d + a_dims.size() >= rank ? a_dims[d + a_dims.size() - rank] : 1;
    const int64_t db = d + b_dims.size() >= rank ? b_dims[d + b_dims.size() - rank] : 1;
    y_dims[d] = da == 1 ? db : da;
  }
  const std::span<const int64_t> ins[] = {a_dims, b_dims};
  const BroadcastPlan p = plan_broadcast(y_dims, ins);
  if (p.numel == 0) return;
  if (p.is_full(0) && p.is_full(1)) return binary(op, a, b, y, p.numel);
  if (p.is_full(0) && p.is_scalar(1)) return binary_scalar(op, a, b[0], y, p.numel);
  if (p.is_scalar(0) && p.is_full(1)) return scalar_binary(op, a[0], b, y, p.numel);
  if (binary_tiled(op, p, a, b, y)) return;
  const IsaKernels& k = kernels();
  // The innermost collapsed axis has an extent > 1, so at least one input runs along it.
  const bool a_runs = p.strides[0].back() != 0, b_runs = p.strides[1].back() != 0;
  parallel_for(p.numel, binary_grain(op), [&](int64_t begin, int64_t end) {
    for_each_run(p, begin, end, [&](int64_t out, const int64_t* in, int64_t len) {
      if (a_runs && b_runs) k.binary_vv(op, a + in[0], b + in[1], y + out, len);
      else if (a_runs) k.binary_vs(op, a + in[0], b[in[1]], y + out, len);
      else k.binary_sv(op, a[in[0]], b + in[1], y + out, len);
    });
  });
}

}  // namespace kiln::cpu
