// Static quantization in the QDQ form onnxruntime.quantization.quantize_static writes: each
// calibrated activation passes through QuantizeLinear -> DequantizeLinear (uint8 asymmetric, or
// int8 symmetric), weights are int8 initializers read through DequantizeLinear (per channel along
// the output channels with an axis), biases int32 with scale in_scale * w_scale and zero point 0.
// The float ops stay; a runtime fuses DQ -> op -> Q into an integer kernel.
#include <fmt/format.h>

#include "opt/graph_edit.h"
#include "quant/rewrite.h"
#include "support/error.h"

namespace kiln::quant {

namespace {

bool symmetric_activations(const QuantizeOptions& o) { return o.activation_type == DataType::kInt8; }

Value* dequantized_constant(Rewrite& r, const std::string& base, const Tensor& q,
                            const QuantParams& p, DataType zp_type) {
  Value* qv = add_constant(r, base + "_quantized", q);
  Value* s = add_constant(r, base + "_scale", scale_tensor(p));
  Value* zp = add_constant(r, base + "_zero_point", zero_point_tensor(p, zp_type));
  Node* dq = add_op(r, "DequantizeLinear", base + "_DequantizeLinear", {qv, s, zp});
  if (p.axis >= 0) opt::set_attr_int(*dq, "axis", p.axis);
  return dq->outputs[0];
}

}  // namespace

std::map<std::string, QuantParams> insert_activation_qdq(Rewrite& r,
                                                         const std::vector<std::string>& tensors,
                                                         const TensorRanges& ranges) {
  std::map<std::string, QuantParams> params;
  for (const std::string& name : tensors) {
    Value* t = r.graph.lookup(name);  // this graph's, or an outer value a subgraph reads
    KILN_ASSERT(t, "a calibrated tensor is not in the graph");
    auto it = ranges.find(name);
    KILN_ASSERT(it != ranges.end(), "a tensor without a calibrated range");
    const QuantParams p = params_for(it->second, r.options.activation_type, symmetric_activations(r.options));
    params[name] = p;
    Value* s = add_constant(r, name + "_scale", scale_tensor(p));
    Value* zp = add_constant(r, name + "_zero_point", zero_point_tensor(p));
    Node* q = add_op(r, "QuantizeLinear", name + "_QuantizeLinear", {t, s, zp});
    Node* dq = add_op(r, "DequantizeLinear", name + "_DequantizeLinear", {q->outputs[0], s, zp});
    redirect_uses(r.graph, t, dq->outputs[0], q);
  }
  return params;
}

void quantize_static_qdq(Rewrite& r, const Selection& s, const TensorRanges& ranges) {
  const auto tensors = tensors_to_calibrate(r.graph, s, r.options);
  // Each node's activation input, read before the Q/DQ pairs rewire it.
  std::vector<std::string> inputs;
  for (Node* n : s.nodes) inputs.push_back(n->inputs[0]->name);
  const auto params = insert_activation_qdq(r, tensors, ranges);
  for (size_t k = 0; k < s.nodes.size(); ++k) {
    Node& n = *s.nodes[k];
    const std::string base = n.inputs[kWeightInput]->name;
    const int axis = weight_axis(n, r.options, r.opset);
    const QuantizedWeight qw = quantize_weight(n.inputs[kWeightInput]->data, r.options.weight_type, axis);
    r.graph.set_input(&n, kWeightInput, dequantized_constant(r, base, qw.values, qw.params, qw.params.type));
    std::string bias_note;
    const bool gemm = n.op_type == "Gemm";
    const Attribute* alpha = n.attr("alpha");
    const Attribute* beta = n.attr("beta");
    const bool plain_gemm = !gemm || ((!alpha || alpha->f == 1.0f) && (!beta || beta->f == 1.0f));
    if (n.has_input(2) && n.inputs[2]->is_constant() && n.inputs[2]->data.rank() == 1 && plain_gemm) {
      const Tensor& b = n.inputs[2]->data;
      const float in_scale = params.at(inputs[k]).scale[0];
      QuantParams bp;
      bp.type = DataType::kInt32;
      bp.axis = qw.params.axis >= 0 ? 0 : -1;
      for (float ws : qw.params.scale) {
        bp.scale.push_back(in_scale * ws);
        bp.zero_point.push_back(0);
      }
      const Tensor bq = quantize_bias(b, in_scale, qw.params.scale);
      r.graph.set_input(&n, 2, dequantized_constant(r, n.inputs[2]->name, bq, bp, DataType::kInt32));
      bias_note = ", bias int32";
    }
    const Value* y = quantized_output(r.graph, n);
    const bool out_q = params.contains(y->name);
    r.decisions.push_back(
        {node_label(n), n.op_type, "int8",
         fmt::format("QDQ: activation {} {}, weight {} {}{}{}", dtype_name(r.options.activation_type),
                     symmetric_activations(r.options) ? "symmetric" : "asymmetric",
                     dtype_name(r.options.weight_type), axis >= 0 ? "per channel" : "per tensor",
                     bias_note, out_q ? "" : ", output float (a model output)")});
  }
}

}  // namespace kiln::quant
