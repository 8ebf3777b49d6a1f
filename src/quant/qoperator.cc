// Static quantization in the QOperator form: QLinearConv and QLinearMatMul read and write uint8
// (or int8) tensors; QuantizeLinear enters the integer region where a float tensor feeds one,
// DequantizeLinear leaves it where a float op or a model output reads a result. A Relu or Clip
// after the op is absorbed: the output's range (from 0) does its clipping.
#include <fmt/format.h>

#include "opt/graph_edit.h"
#include "quant/rewrite.h"
#include "support/error.h"

namespace kiln::quant {

namespace {

struct QTensor {
  Value* q;
  Value* scale;
  Value* zero_point;
  QuantParams params;
};

class QOperatorRewrite {
 public:
  QOperatorRewrite(Rewrite& r, const TensorRanges& ranges) : r_(r), ranges_(ranges) {}

  // The integer form of float tensor t: made by a converted node, or a QuantizeLinear added now.
  QTensor& quantized(Value* t) {
    if (auto it = by_float_.find(t); it != by_float_.end()) return it->second;
    QTensor q = params_of(t->name);
    Node* ql = add_op(r_, "QuantizeLinear", t->name + "_QuantizeLinear", {t, q.scale, q.zero_point});
    q.q = ql->outputs[0];
    return by_float_[t] = q;
  }

  QTensor params_of(const std::string& name) {
    auto it = ranges_.find(name);
    KILN_ASSERT(it != ranges_.end(), "a tensor without a calibrated range");
    QTensor q{};
    q.params = params_for(it->second, r_.options.activation_type,
                          r_.options.activation_type == DataType::kInt8);
    q.scale = add_constant(r_, name + "_scale", scale_tensor(q.params));
    q.zero_point = add_constant(r_, name + "_zero_point", zero_point_tensor(q.params));
    return q;
  }

  void convert(Node& n) {
    Graph& g = r_.graph;
    const std::string label = node_label(n), op = n.op_type;  // n is removed below
    Value* y = quantized_output(g, n);
    Node* absorbed = y != n.outputs[0] ? y->producer : nullptr;
    QTensor& x = quantized(n.inputs[0]);
    const std::string base = n.inputs[kWeightInput]->name;
    const bool conv = n.op_type == "Conv";
    const int axis = conv ? weight_axis(n, r_.options, r_.opset) : -1;  // QLinearMatMul: per tensor
    const QuantizedWeight qw = quantize_weight(n.inputs[kWeightInput]->data, r_.options.weight_type, axis);
    Value* wq = add_constant(r_, base + "_quantized", qw.values);
    Value* ws = add_constant(r_, base + "_scale", scale_tensor(qw.params));
    Value* wzp = add_constant(r_, base + "_zero_point", zero_point_tensor(qw.params));
    QTensor out = params_of(y->name);
    std::vector<Value*> ins = {x.q, x.scale, x.zero_point, wq, ws, wzp, out.scale, out.zero_point};
    if (conv && n.has_input(2))
      ins.push_back(add_constant(r_, n.inputs[2]->name + "_quantized",
                                 quantize_bias(n.inputs[2]->data, x.params.scale[0], qw.params.scale)));
    Node* qn = add_op(r_, conv ? "QLinearConv" : "QLinearMatMul", label + "_quant", ins);
    if (conv)
      for (const Attribute& a : n.attrs) qn->attrs.push_back(a);
    out.q = qn->outputs[0];
    // Float readers (and the model's outputs) get a DequantizeLinear under y's name.
    Node* dq = add_op(r_, "DequantizeLinear", y->name + "_DequantizeLinear", {out.q, out.scale, out.zero_point});
    Node* last = absorbed ? absorbed : &n;
    if (absorbed) {
      g.set_input(absorbed, 0, nullptr);
      g.remove_node(&n);
    }
    const std::string absorbed_op = absorbed ? absorbed->op_type : "";
    take_over_output(g, *last, *dq);
    by_float_[y] = out;
    r_.decisions.push_back(
        {label, op, "int8",
         fmt::format("{}: activation {}, weight {} {}{}", qn->op_type,
                     dtype_name(r_.options.activation_type), dtype_name(r_.options.weight_type),
                     axis >= 0 ? "per channel" : "per tensor",
                     absorbed_op.empty() ? "" : ", " + absorbed_op + " absorbed")});
  }

 private:
  Rewrite& r_;
  const TensorRanges& ranges_;
  std::map<Value*, QTensor> by_float_;
};

}  // namespace

void quantize_static_qoperator(Rewrite& r, const Selection& s, const TensorRanges& ranges) {
  QOperatorRewrite q(r, ranges);
  for (Node* n : s.nodes) q.convert(*n);
}

}  // namespace kiln::quant
