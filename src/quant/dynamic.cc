// Dynamic quantization in the form onnxruntime.quantization.quantize_dynamic writes: the weight
// int8 offline, the activation quantized per run by DynamicQuantizeLinear (uint8), the product in
// int32 by MatMulInteger (ConvInteger for a Conv, only when asked), then Cast to float and one Mul
// by a_scale * w_scale.
#include <fmt/format.h>

#include "opt/graph_edit.h"
#include "quant/rewrite.h"
#include "support/error.h"

namespace kiln::quant {

namespace {

Tensor transposed_2d(const Tensor& w) {
  Tensor t(w.dtype(), {w.dim(1), w.dim(0)});
  for (int64_t i = 0; i < w.dim(0); ++i)
    for (int64_t j = 0; j < w.dim(1); ++j) t.set_f64(j * w.dim(0) + i, w.get_f64(i * w.dim(1) + j));
  return t;
}

float float_attr(const Node& n, const char* name, float dflt) {
  const Attribute* a = n.attr(name);
  return a ? a->f : dflt;
}

// One node: its int8 weight, the integer op, the rescale, and (Gemm) the bias; the float node's
// output is then made by the last of these.
void quantize_node(Rewrite& r, Node& n) {
  Graph& g = r.graph;
  const std::string base = node_label(n), op = n.op_type;  // n is removed at the end
  const bool is_gemm = n.op_type == "Gemm";
  const bool is_conv = n.op_type == "Conv";
  Tensor w = n.inputs[kWeightInput]->data;
  int axis = weight_axis(n, r.options, r.opset);
  if (is_gemm && n.attr("transB") && n.attr("transB")->i) {
    w = transposed_2d(w);  // MatMulInteger takes B as [K, N]
    if (axis >= 0) axis = 1;
  }
  // MatMulInteger's b_zero_point is per column at most; ConvInteger's w_zero_point per channel.
  const QuantizedWeight qw = quantize_weight(w, r.options.weight_type, axis);
  Value* wq = add_constant(r, n.inputs[kWeightInput]->name + "_quantized", qw.values);
  // Symmetric weights have one zero point for every channel: written as a scalar, since ONNX
  // Runtime's ConvInteger takes no other (the per-channel scales are applied by the Mul after).
  QuantParams zp = qw.params;
  for (int32_t z : zp.zero_point) KILN_ASSERT(z == zp.zero_point[0], "symmetric zero points differ");
  zp.axis = -1;
  zp.zero_point.resize(1);
  Value* wzp = add_constant(r, n.inputs[kWeightInput]->name + "_zero_point", zero_point_tensor(zp));
  Tensor wscale = scale_tensor(qw.params);
  if (is_gemm) {
    const float alpha = float_attr(n, "alpha", 1.0f);
    for (int64_t i = 0; i < wscale.numel(); ++i) wscale.data<float>()[i] *= alpha;
  }
  if (is_conv && axis >= 0) {  // [C] scales broadcast over NCHW's channel axis: [C, 1, 1]
    std::vector<int64_t> dims(n.inputs[kWeightInput]->data.rank() - 1, 1);
    dims[0] = wscale.numel();
    wscale = wscale.reshaped(dims);
  }
  Value* ws = add_constant(r, n.inputs[kWeightInput]->name + "_scale", wscale);

  Node* dq = add_op(r, "DynamicQuantizeLinear", base + "_QuantizeLinear", {n.inputs[0]}, 3);
  Value* xq = dq->outputs[0];
  Value* xs = dq->outputs[1];
  Value* xzp = dq->outputs[2];
  Node* integer = nullptr;
  if (is_conv) {
    integer = add_op(r, "ConvInteger", base + "_quant", {xq, wq, xzp, wzp});
    for (const Attribute& a : n.attrs) integer->attrs.push_back(a);
  } else {
    integer = add_op(r, "MatMulInteger", base + "_quant", {xq, wq, xzp, wzp});
  }
  Node* cast = add_op(r, "Cast", base + "_output_quantized_cast", {integer->outputs[0]});
  opt::set_attr_int(*cast, "to", static_cast<int64_t>(DataType::kFloat));
  Node* scales = add_op(r, "Mul", base + "_scales_mul", {xs, ws});
  Node* rescale = add_op(r, "Mul", base + "_output_quantized_cast_output_mul",
                         {cast->outputs[0], scales->outputs[0]});
  Value* result = rescale->outputs[0];
  const bool has_bias = n.has_input(2);
  if (has_bias) {  // Gemm's C (beta folded in) or Conv's B, added in float
    Tensor c = n.inputs[2]->data.defined() ? n.inputs[2]->data.clone() : Tensor{};
    Value* bias = n.inputs[2];
    if (c.defined()) {
      const float beta = is_gemm ? float_attr(n, "beta", 1.0f) : 1.0f;
      for (int64_t i = 0; i < c.numel(); ++i) c.set_f64(i, c.get_f64(i) * beta);
      if (is_conv) {
        std::vector<int64_t> dims(n.inputs[kWeightInput]->data.rank() - 1, 1);
        dims[0] = c.numel();
        c = c.reshaped(dims);
      }
      bias = add_constant(r, n.inputs[2]->name + "_bias", c);
    } else {
      KILN_CHECK(!is_gemm || float_attr(n, "beta", 1.0f) == 1.0f, ErrorKind::kUnsupported,
                 "{}a Gemm with beta != 1 and a C computed at run time", n.where());
    }
    result = add_op(r, "Add", base + "_bias_add", {result, bias})->outputs[0];
  }
  take_over_output(g, n, *result->producer);
  r.decisions.push_back({base, op, "int8",
                         fmt::format("dynamic {}: weight {} {}, activation uint8 per run",
                                     is_conv ? "ConvInteger" : "MatMulInteger",
                                     dtype_name(r.options.weight_type),
                                     axis >= 0 ? "per channel" : "per tensor")});
}

}  // namespace

void quantize_dynamic(Rewrite& r, const Selection& s) {
  for (Node* n : s.nodes) quantize_node(r, *n);
}

}  // namespace kiln::quant
