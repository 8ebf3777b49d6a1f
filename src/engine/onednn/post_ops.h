// An anchor's epilogue (engine/epilogue.h) as oneDNN post-ops, and what the oneDNN steps taking
// one share: the operands' memories, the residual a sum writes over, a conv's bias. The engine's
// PostOps become oneDNN's algorithms here only.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/epilogue.h"
#include "engine/group.h"

namespace kiln::engine {

class Lowering;
class DnnlStep;

// The post-ops of a chain, with what their operands need at build time.
struct FusedPostOps {
  dnnl::post_ops ops;
  struct Operand {
    int arg = 0;                // DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1
    const Value* value = nullptr;
    Tensor data;                // values made at preparation, when defined
    dnnl::memory::desc md;      // row-major, at the destination's rank
  };
  std::vector<Operand> operands;
  const Value* sum = nullptr;   // the residual a sum post-op adds (its bytes must be in dst)
};

// How an operand's dims (broadcast against the chain's values) map onto the destination
// descriptor's dims; nullopt when they cannot.
using OperandDims = std::function<std::optional<std::vector<int64_t>>(std::vector<int64_t>)>;
// Right-aligned, padded with leading 1s to `rank`: for a destination described in the chain's
// own dims.
OperandDims padded_to(int rank);

// Post-ops for units (none of them a bias unit). Throws dnnl::error (unimplemented) when an
// operand cannot be described, as oneDNN does for what it cannot fuse.
FusedPostOps make_post_ops(const std::vector<EpilogueUnit>& units, const OperandDims& dims,
                           const GraphFacts& f);

// Binds the operands of `p` to `step`, and decides where the destination lives: returns the
// input slot the output takes over (the residual of a sum, copied first when it is still needed
// elsewhere or in another layout), or -1. `residual_md`: the destination's layout in the dims
// of the chain's values.
int bind_post_ops(const FusedPostOps& p, const dnnl::memory::desc& residual_md, Lowering& lw,
                  DnnlStep& step);

// Calls make(n) with n, the number of g's epilogue units to fuse, from all of them down to
// `min`, until oneDNN accepts (make throws dnnl::error when it does not); drops the units left.
template <typename Make>
auto fuse_longest(Group& g, size_t min, Make&& make) -> decltype(make(size_t{0})) {
  for (size_t n = g.epilogue.size();; --n) {
    try {
      auto r = make(n);
      g.epilogue.resize(n);
      return r;
    } catch (const dnnl::error&) {
      if (n <= min) throw;
    }
  }
}

// The error make_post_ops and the builds throw for a problem oneDNN is not asked about.
[[noreturn]] void not_fusable(const char* what);

// What a Conv or ConvTranspose fusing `units` of g's epilogue asks oneDNN for: the post-ops of
// those units, but for a leading bias unit, which goes into the primitive's bias.
struct ConvFusion {
  FusedPostOps post;
  dnnl::primitive_attr attr;   // the post-ops and a user scratchpad
  dnnl::memory::desc bias_md;  // empty when there is no bias at all
  bool unit_bias = false;      // g's leading bias unit is fused (into the bias)
};
ConvFusion conv_fusion(const Group& g, size_t units, int rank, bool own_bias, int64_t channels_out,
                       const GraphFacts& f);

// The end of building a Conv or ConvTranspose step from pd: binds its bias (the anchor's own plus
// g's leading bias unit when it was fused), the post-ops' operands, g's output and the
// scratchpad, then adds the step to the plan.
void finish_conv_step(std::unique_ptr<DnnlStep> step, const dnnl::primitive_desc_base& pd,
                      const FusedPostOps& post, const Tensor* own_bias, bool unit_bias,
                      int64_t channels_out, const Group& g, const GraphFacts& f, Lowering& lw);

}  // namespace kiln::engine
