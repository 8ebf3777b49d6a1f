// The engine's activations: what an elementwise node of one input does to each value, decoded
// once from the node (activation.cc holds the table: op, kind, the attributes of its parameters,
// whose defaults the op's schema states). Each backend
// maps them to its own operations: onednn/post_ops.cc to oneDNN eltwise post-ops, native/
// cpu_activation.cc to kiln's CPU kernels; one that has no such operation does not take it.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/graph.h"

namespace kiln::engine {

class GraphFacts;

enum class ActKind : uint8_t {
  kRelu,
  kLeakyRelu,    // x < 0 ? alpha x : x
  kElu,          // x < 0 ? alpha (exp(x) - 1) : x
  kSigmoid,
  kTanh,
  kHardSwish,    // x clamp(x / 6 + 0.5, 0, 1)
  kHardSigmoid,  // clamp(alpha x + beta, 0, 1)
  kAbs,
  kSqrt,
  kExp,
  kLog,
  kNeg,
  kErf,
  kReciprocal,
  kGeluErf,      // 0.5 x (1 + erf(x / sqrt 2)): Gelu, approximate = "none"
  kGeluTanh,     // Gelu, approximate = "tanh"
  kClip,         // clamp(x, alpha, beta)
  kSwish,        // x sigmoid(alpha x): SiLU with alpha 1 (matched as x * Sigmoid(x))
  kLinear,       // alpha x + beta (scalar Mul, Add ... matched in a chain)
};

struct Activation {
  ActKind kind = ActKind::kRelu;
  float alpha = 0, beta = 0;  // as ActKind says; 0 where unused
  bool operator==(const Activation&) const = default;
};

// The activation node n applies to its first input, with its attributes (the schema's defaults
// where absent) and, for Clip, its constant bounds; nullopt when n is none of the table's ops, its
// attributes are ones the engine does not take (Gelu's approximate other than none and tanh) or
// Clip's bounds are not constant scalars.
std::optional<Activation> decode_activation(const Node& n, const GraphFacts& f);

}  // namespace kiln::engine
