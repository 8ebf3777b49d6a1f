#include "engine/onednn/post_ops.h"

#include "engine/lowering.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/weight_cache.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

using alg = dnnl::algorithm;

// The oneDNN algorithm of an eltwise post-op (an activation in its epilogue_form).
alg eltwise_algorithm(ActKind k) {
  switch (k) {
    case ActKind::kRelu:
    case ActKind::kLeakyRelu: return alg::eltwise_relu;  // alpha: the slope below 0
    case ActKind::kElu: return alg::eltwise_elu;
    case ActKind::kSigmoid: return alg::eltwise_logistic;
    case ActKind::kTanh: return alg::eltwise_tanh;
    case ActKind::kHardSwish: return alg::eltwise_hardswish;
    case ActKind::kAbs: return alg::eltwise_abs;
    case ActKind::kSqrt: return alg::eltwise_sqrt;
    case ActKind::kExp: return alg::eltwise_exp;
    case ActKind::kLog: return alg::eltwise_log;
    case ActKind::kGeluErf: return alg::eltwise_gelu_erf;
    case ActKind::kGeluTanh: return alg::eltwise_gelu_tanh;
    case ActKind::kClip: return alg::eltwise_clip;
    case ActKind::kSwish: return alg::eltwise_swish;
    case ActKind::kLinear: return alg::eltwise_linear;
    case ActKind::kHardSigmoid:  // Linear and Clip in the epilogue form
    case ActKind::kNeg:          // Linear
    case ActKind::kErf:
    case ActKind::kReciprocal: break;
  }
  KILN_ASSERT(false, "an activation outside the epilogue form among post-ops");
  return alg::undef;
}

alg binary_algorithm(cpu::BinaryOp b) {
  switch (b) {
    case cpu::BinaryOp::kAdd: return alg::binary_add;
    case cpu::BinaryOp::kSub: return alg::binary_sub;
    case cpu::BinaryOp::kMul: return alg::binary_mul;
    case cpu::BinaryOp::kDiv: return alg::binary_div;
    default: break;
  }
  KILN_ASSERT(false, "a binary post-op other than Add, Sub, Mul or Div");
  return alg::undef;
}

}  // namespace

void not_fusable(const char* what) { throw dnnl::error(dnnl_unimplemented, what); }

OperandDims padded_to(int rank) {
  return [rank](std::vector<int64_t> d) -> std::optional<std::vector<int64_t>> {
    if (static_cast<int>(d.size()) > rank) return std::nullopt;
    d.insert(d.begin(), rank - d.size(), 1);
    return d;
  };
}

FusedPostOps make_post_ops(const std::vector<EpilogueUnit>& units, const OperandDims& to_dst,
                           const GraphFacts& f) {
  std::vector<PostOp> seq;
  for (const EpilogueUnit& u : units) {
    KILN_ASSERT(!u.is_bias, "a bias unit among post-ops");
    for (const PostOp& op : u.ops) {
      const bool taken = append_post_op(seq, op);
      KILN_ASSERT(taken, "post-ops the matcher would not take");
    }
  }
  FusedPostOps p;
  for (const PostOp& op : seq) {
    switch (op.kind) {
      case PostOp::Kind::kEltwise:
        p.ops.append_eltwise(1.f, eltwise_algorithm(op.act.kind), op.act.alpha, op.act.beta);
        break;
      case PostOp::Kind::kSum:
        p.ops.append_sum(1.f);
        p.sum = op.operand;
        break;
      case PostOp::Kind::kBinary: {
        const auto dims = to_dst(*f.dims(op.operand));
        if (!dims) not_fusable("an operand the destination cannot broadcast");
        const auto md = plain_md(*dims, dnnl::memory::data_type::f32);
        p.ops.append_binary(binary_algorithm(op.binary), md);
        p.operands.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(p.ops.len() - 1) | DNNL_ARG_SRC_1,
                              op.operand, op.data, md});
        break;
      }
    }
  }
  return p;
}

int bind_post_ops(const FusedPostOps& p, const dnnl::memory::desc& residual_md, Lowering& lw,
                  DnnlStep& step) {
  const GraphFacts& f = lw.facts();
  for (const FusedPostOps::Operand& o : p.operands) {
    const Tensor* c = o.data.defined() ? &o.data : f.constant(o.value);
    if (c)
      step.bind_constant(o.arg, lw.weights().get(*c, o.md, o.md));
    else
      step.bind_input(o.arg, lw.plain(o.value), o.md, *f.dims(o.value));
  }
  return p.sum ? lw.writable_copy(p.sum, residual_md, step.inputs) : -1;
}

ConvFusion conv_fusion(const Group& g, size_t units, int rank, bool own_bias, int64_t channels_out,
                       const GraphFacts& f) {
  ConvFusion c;
  c.unit_bias = units > 0 && g.epilogue[0].is_bias;
  const std::vector<EpilogueUnit> chain(g.epilogue.begin() + (c.unit_bias ? 1 : 0),
                                        g.epilogue.begin() + units);
  c.post = make_post_ops(chain, padded_to(rank), f);
  c.attr.set_post_ops(c.post.ops);
  c.attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (own_bias || c.unit_bias)
    c.bias_md = dnnl::memory::desc({channels_out}, dnnl::memory::data_type::f32,
                                   dnnl::memory::format_tag::x);
  return c;
}

void finish_conv_step(std::unique_ptr<DnnlStep> step, const dnnl::primitive_desc_base& pd,
                      const FusedPostOps& post, const Tensor* own_bias, bool unit_bias,
                      int64_t channels_out, const Group& g, const GraphFacts& f, Lowering& lw) {
  const dnnl::memory::desc bias_md = pd.weights_desc(1), dst_md = pd.dst_desc(0);
  if (auto bias = combined_bias(own_bias, unit_bias ? bias_constant(g.epilogue[0], f) : nullptr,
                                channels_out))
    step->bind_constant(DNNL_ARG_BIAS, lw.weights().get(*bias, bias_md, bias_md));
  const int share = bind_post_ops(post, dst_md, lw, *step);
  const int out = lw.define(g.output(), dst_md);
  step->bind_output(DNNL_ARG_DST, out, dst_md, OutputMemory::kPlanned, share);
  step->bind_scratchpad(pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
}

}  // namespace kiln::engine
