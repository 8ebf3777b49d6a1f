// The chain after an anchor's result (conv, matmul, depthwise conv ...) that its step applies
// while writing it: a bias (an Add of a constant along the channel axis), activations (Relu,
// Clip, Sigmoid, HardSwish, SiLU x*sigmoid(x), Gelu in its erf form ...), scalings, a residual
// Add (sum) and broadcast binary ops, as units of PostOps in the engine's own terms. The backends
// make their operations from them: onednn/post_ops.h oneDNN post-ops, native/row_epilogue.h
// row operations. Each link's intermediate value must be used by the next link only.
#pragma once

#include <optional>
#include <vector>

#include "engine/activation.h"
#include "engine/group.h"
#include "engine/kernel_table.h"

namespace kiln::engine {

// Matches the chain after v, the anchor's result of rank `rank`. `channel_axis`: the axis a bias
// runs along (1 for convolutions, rank-1 for matmuls), or -1 when the anchor takes no bias.
std::vector<EpilogueUnit> match_epilogue(const Value* v, const MatchContext& ctx, int channel_axis);

// An activation as the eltwise operations of a chain, each one oneDNN eltwise post-op and one
// row operation: Neg is Linear(-1, 0), HardSigmoid Linear(alpha, beta) then Clip(0, 1), and Relu
// LeakyRelu of slope 0 (oneDNN computes both with one algorithm, so that append_post_op sees them
// as one kind). nullopt for those no epilogue applies (Erf, Reciprocal).
std::optional<std::vector<Activation>> epilogue_form(const Activation& a);

// Appends op to a sequence of post-ops. oneDNN 2.6's jit kernels give every eltwise post-op of
// one algorithm the alpha and beta of the first one (Conv -> Mul 2 -> Add 0.5 ran as x * 2 * 2),
// so a sequence holds each kind with one set of parameters: a Linear right after a Linear folds
// into it (a2 * (a1 * x + b1) + b2), and any other repeat with other parameters is refused
// (false, seq unchanged). The matcher keeps to this for every implementation taking a chain.
bool append_post_op(std::vector<PostOp>& seq, const PostOp& op);

// A bias for `channels` channels from the anchor's own bias (may be null) plus a bias unit's
// constant (may be null); null when there is neither.
std::optional<Tensor> combined_bias(const Tensor* own, const Tensor* unit, int64_t channels);
// The constant of a bias unit.
const Tensor* bias_constant(const EpilogueUnit& u, const GraphFacts& f);
// Gemm's own bias: beta * C as `channels` values, C a scalar or a row of `channels` (the caller
// has checked which).
Tensor gemm_bias(const Tensor& c, float beta, int64_t channels);

}  // namespace kiln::engine
