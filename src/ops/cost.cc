#include "ops/cost.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "ops/attrs.h"

namespace kiln {

namespace {

// How a node's FLOPs follow from its operands. Elementwise ops not listed cost one FLOP per output
// element; `k` scales the per-element kinds.
enum class CostKind {
  kPerOutput,      // k per output element (norms, softmax, activations)
  kPerInput,       // k per element of input 0 (reductions, global pools)
  kMovement,       // no arithmetic: layout, indexing, casts, control flow (its body is counted)
  kVariadic,       // (inputs - 1 + k) per output element: Sum, Mean, Max, Min
  kWindow,         // k per output element per kernel_shape element: MaxPool, AveragePool, LpPool
  kConv,           // output elements x (Cin/group x kernel) MACs
  kConvTranspose,  // input elements x (Cout/group x kernel) MACs
  kMatMul,         // output elements x K MACs
  kGemm,           // output elements x K MACs, plus one per output for C
  kAttention,      // QK^T and PV products plus a softmax over the scores
  kRecurrent,      // steps x batch x gates x (input + hidden) MACs per direction
};

// How much of its data input (input 0) a node touches, for bytes moved.
enum class DataAccess {
  kAll,       // reads every input, writes every output
  kMetadata,  // reads input 0's shape only: Shape, Size
  kView,      // output 0 is input 0 under another shape: neither read nor written
  kSelect,    // reads from input 0 only as much as it writes: Gather, Slice
};

struct CostRule {
  CostKind kind;
  double k = 1;
  DataAccess access = DataAccess::kAll;
};

const std::unordered_map<std::string_view, CostRule>& cost_rules() {
  using K = CostKind;
  constexpr DataAccess View = DataAccess::kView, Metadata = DataAccess::kMetadata,
                       Select = DataAccess::kSelect;
  static const std::unordered_map<std::string_view, CostRule> rules = {
      {"Conv", {K::kConv}}, {"ConvInteger", {K::kConv}}, {"QLinearConv", {K::kConv}},
      {"ConvTranspose", {K::kConvTranspose}}, {"DeformConv", {K::kConv}},
      {"MatMul", {K::kMatMul}}, {"MatMulInteger", {K::kMatMul}}, {"QLinearMatMul", {K::kMatMul}},
      {"Gemm", {K::kGemm}}, {"Attention", {K::kAttention}},
      {"LSTM", {K::kRecurrent}}, {"GRU", {K::kRecurrent}}, {"RNN", {K::kRecurrent}},
      // Normalization, per element: inference BatchNorm is a scale and a shift; LayerNorm-like
      // ones take a mean, a centred square sum, then normalize, scale and shift.
      {"BatchNormalization", {K::kPerOutput, 2}}, {"LayerNormalization", {K::kPerOutput, 7}},
      {"InstanceNormalization", {K::kPerOutput, 7}}, {"GroupNormalization", {K::kPerOutput, 7}},
      {"MeanVarianceNormalization", {K::kPerOutput, 5}}, {"RMSNormalization", {K::kPerOutput, 4}},
      {"SkipLayerNormalization", {K::kPerOutput, 8}}, {"LpNormalization", {K::kPerOutput, 3}},
      {"LRN", {K::kPerOutput, 6}},
      // max, subtract, exp, sum, divide
      {"Softmax", {K::kPerOutput, 5}}, {"LogSoftmax", {K::kPerOutput, 5}},
      {"Hardmax", {K::kPerOutput, 1}},
      {"Gelu", {K::kPerOutput, 4}}, {"FastGelu", {K::kPerOutput, 4}}, {"Swish", {K::kPerOutput, 3}},
      {"HardSwish", {K::kPerOutput, 3}}, {"Mish", {K::kPerOutput, 4}}, {"Clip", {K::kPerOutput, 2}},
      {"ReduceSum", {K::kPerInput, 1}}, {"ReduceMean", {K::kPerInput, 1}},
      {"ReduceMax", {K::kPerInput, 1}}, {"ReduceMin", {K::kPerInput, 1}},
      {"ReduceProd", {K::kPerInput, 1}}, {"ReduceL1", {K::kPerInput, 2}},
      {"ReduceL2", {K::kPerInput, 2}}, {"ReduceSumSquare", {K::kPerInput, 2}},
      {"ReduceLogSum", {K::kPerInput, 1}}, {"ReduceLogSumExp", {K::kPerInput, 2}},
      {"ArgMax", {K::kPerInput, 1}}, {"ArgMin", {K::kPerInput, 1}}, {"CumSum", {K::kPerInput, 1}},
      {"TopK", {K::kPerInput, 1}},
      {"GlobalAveragePool", {K::kPerInput, 1}}, {"GlobalMaxPool", {K::kPerInput, 1}},
      {"GlobalLpPool", {K::kPerInput, 2}},
      {"MaxPool", {K::kWindow, 1}}, {"AveragePool", {K::kWindow, 1}}, {"LpPool", {K::kWindow, 2}},
      {"Sum", {K::kVariadic, 0}}, {"Max", {K::kVariadic, 0}}, {"Min", {K::kVariadic, 0}},
      {"Mean", {K::kVariadic, 1}},
      {"Reshape", {K::kMovement, 0, View}}, {"Flatten", {K::kMovement, 0, View}},
      {"Squeeze", {K::kMovement, 0, View}}, {"Unsqueeze", {K::kMovement, 0, View}},
      {"Identity", {K::kMovement, 0, View}}, {"Shape", {K::kMovement, 0, Metadata}},
      {"Size", {K::kMovement, 0, Metadata}}, {"Slice", {K::kMovement, 0, Select}},
      {"Gather", {K::kMovement, 0, Select}}, {"GatherElements", {K::kMovement, 0, Select}},
      {"GatherND", {K::kMovement, 0, Select}},
      {"Transpose", {K::kMovement}}, {"Concat", {K::kMovement}}, {"Split", {K::kMovement}},
      {"Scatter", {K::kMovement}}, {"ScatterElements", {K::kMovement}},
      {"ScatterND", {K::kMovement}}, {"Expand", {K::kMovement}}, {"Tile", {K::kMovement}},
      {"Pad", {K::kMovement}}, {"Cast", {K::kMovement}}, {"CastLike", {K::kMovement}},
      {"Constant", {K::kMovement}}, {"ConstantOfShape", {K::kMovement}},
      {"Dropout", {K::kMovement}}, {"DepthToSpace", {K::kMovement}},
      {"SpaceToDepth", {K::kMovement}}, {"Compress", {K::kMovement}},
      {"NonZero", {K::kMovement}}, {"Range", {K::kMovement}}, {"EyeLike", {K::kMovement}},
      {"OneHot", {K::kMovement}}, {"Trilu", {K::kMovement}}, {"ReverseSequence", {K::kMovement}},
      {"CenterCropPad", {K::kMovement}}, {"If", {K::kMovement}}, {"Loop", {K::kMovement}},
      {"Scan", {K::kMovement}},
  };
  return rules;
}

// The rule for a node: ai.onnx ops by name; a fused op of another domain ("FusedConv") by the op it
// extends; anything else per output element.
CostRule rule_for(const Node& n) {
  const auto& rules = cost_rules();
  std::string_view op = n.op_type;
  if (!n.domain.empty() && op.starts_with("Fused")) op.remove_prefix(5);
  auto it = rules.find(op);
  return it == rules.end() ? CostRule{CostKind::kPerOutput, 1} : it->second;
}

// Reads operands for the formulas; a missing operand or dim makes the estimate inexact.
class Operands {
 public:
  Operands(std::span<const OperandShape> in, std::span<const OperandShape> out, bool& exact)
      : in_(in), out_(out), exact_(exact) {}

  const OperandShape* input(int i) const { return get(in_, i); }
  double in_numel(int i) const { return numel(get(in_, i)); }
  double out_numel(int i) const { return numel(get(out_, i)); }
  // Dim `axis` of input i (negative: from the end), 1 when unknown.
  double in_dim(int i, int axis) const {
    const OperandShape* s = get(in_, i);
    const int rank = s ? static_cast<int>(s->dims.size()) : 0;
    if (axis < 0) axis += rank;
    if (!s || axis < 0 || axis >= rank) {
      exact_ = false;
      return 1;
    }
    return static_cast<double>(s->dims[axis]);
  }
  // The product of input i's dims from `first` on.
  double in_dims_from(int i, int first) const {
    const OperandShape* s = get(in_, i);
    if (!s) {
      exact_ = false;
      return 1;
    }
    double p = 1;
    for (size_t d = first; d < s->dims.size(); ++d) p *= static_cast<double>(s->dims[d]);
    return p;
  }
  int present_inputs() const {
    int count = 0;
    for (const auto& s : in_) count += s.present;
    return count;
  }

 private:
  const OperandShape* get(std::span<const OperandShape> ops, int i) const {
    if (i >= 0 && i < static_cast<int>(ops.size()) && ops[i].present) return &ops[i];
    exact_ = false;
    return nullptr;
  }
  double numel(const OperandShape* s) const { return s ? s->numel() : 0; }

  std::span<const OperandShape> in_, out_;
  bool& exact_;
};

void apply_rule(const Node& n, CostRule rule, const Operands& x, NodeCost& c) {
  switch (rule.kind) {
    case CostKind::kPerOutput: c.flops = rule.k * x.out_numel(0); break;
    case CostKind::kPerInput: c.flops = rule.k * x.in_numel(0); break;
    case CostKind::kMovement: break;
    case CostKind::kVariadic:
      c.flops = (std::max(x.present_inputs() - 1, 0) + rule.k) * x.out_numel(0);
      break;
    case CostKind::kWindow: {
      double window = 1;
      for (int64_t k : attr_ints(n, "kernel_shape")) window *= static_cast<double>(k);
      c.flops = rule.k * window * x.out_numel(0);
      break;
    }
    case CostKind::kConv: {
      const int w = n.op_type.ends_with("QLinearConv") ? 3 : 1;
      c.macs = x.out_numel(0) * x.in_dims_from(w, 1);
      break;
    }
    case CostKind::kConvTranspose: c.macs = x.in_numel(0) * x.in_dims_from(1, 1); break;
    case CostKind::kMatMul: c.macs = x.out_numel(0) * x.in_dim(0, -1); break;
    case CostKind::kGemm:
      c.macs = x.out_numel(0) * x.in_dim(0, attr_int(n, "transA") ? 0 : 1);
      if (n.has_input(2)) c.flops = x.out_numel(0);
      break;
    case CostKind::kAttention: {
      // Q [.., Sq, Dq] (3-D: heads folded into Dq), K [.., Skv, Dq], V [.., Skv, Dv]; a past cache
      // (input 4) lengthens Skv.
      const double dq = x.in_dim(0, -1);
      double skv = x.in_dim(1, -2);
      if (n.has_input(4)) skv += x.in_dim(4, -2);
      const double rows = dq > 0 ? x.in_numel(0) / dq : 0;
      c.macs = rows * skv * (dq + x.in_dim(2, -1));
      c.flops = 5 * rows * skv;
      break;
    }
    case CostKind::kRecurrent: {
      // X [steps, batch, I] or [batch, steps, I]; W [dirs, gates*H, I]; R [dirs, gates*H, H].
      const double input = x.in_dim(0, -1);
      const double steps_batch = input > 0 ? x.in_numel(0) / input : 0;
      const double gate_rows = x.in_dim(1, 0) * x.in_dim(1, 1);
      c.macs = steps_batch * gate_rows * (x.in_dim(1, 2) + x.in_dim(2, 2));
      c.flops = 3 * steps_batch * gate_rows;  // bias, activation and state update per gate value
      break;
    }
  }
}

// Bytes of the inputs read plus the outputs written, as `access` says input 0 is touched.
double bytes_moved(DataAccess access, std::span<const OperandShape> inputs,
                   std::span<const OperandShape> outputs) {
  double read = 0, written = 0;
  for (const OperandShape& s : inputs) read += s.bytes;
  for (const OperandShape& s : outputs) written += s.bytes;
  const double data = inputs.empty() ? 0 : inputs[0].bytes;
  const double out0 = outputs.empty() ? 0 : outputs[0].bytes;
  switch (access) {
    case DataAccess::kAll: break;
    case DataAccess::kMetadata: read -= data; break;
    case DataAccess::kView: read -= data; written -= out0; break;
    case DataAccess::kSelect: read += out0 - data; break;
  }
  return read + written;
}

}  // namespace

double OperandShape::numel() const {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

OperandShape OperandShape::of(const Value* v) {
  OperandShape s;
  if (!v) return s;
  if (!v->type.is_tensor() || !v->type.shape) {
    s.exact = false;
    return s;
  }
  s.present = true;
  s.dtype = v->type.elem;
  for (const Dim& d : *v->type.shape) {
    s.dims.push_back(d.is_known() ? d.value() : 1);
    if (!d.is_known()) s.exact = false;
  }
  s.bytes = s.numel() * static_cast<double>(dtype_size(v->type.elem));
  return s;
}

OperandShape OperandShape::of(const RtValue* v) {
  OperandShape s;
  if (!v) return s;
  if (v->is_tensor()) {
    s.present = true;
    s.dtype = v->tensor.dtype();
    s.dims = v->tensor.dims();
    s.bytes = static_cast<double>(v->tensor.nbytes());
  } else if (v->is_sequence()) {
    if (!v->sequence.empty()) s.dtype = v->sequence[0].dtype();
    for (const Tensor& t : v->sequence) s.bytes += static_cast<double>(t.nbytes());
  }
  return s;
}

NodeCost node_cost(const Node& n, std::span<const OperandShape> inputs,
                   std::span<const OperandShape> outputs) {
  NodeCost c;
  const Operands x(inputs, outputs, c.exact);
  const CostRule rule = rule_for(n);
  apply_rule(n, rule, x, c);
  c.flops += 2 * c.macs;
  for (const OperandShape& s : inputs) c.exact &= s.exact;
  for (const OperandShape& s : outputs) c.exact &= s.exact;
  c.bytes = bytes_moved(rule.access, inputs, outputs);
  return c;
}

NodeCost node_cost(const Node& n) {
  std::vector<OperandShape> in, out;
  for (const Value* v : n.inputs) in.push_back(OperandShape::of(v));
  for (const Value* v : n.outputs) out.push_back(OperandShape::of(v));
  return node_cost(n, in, out);
}

}  // namespace kiln
