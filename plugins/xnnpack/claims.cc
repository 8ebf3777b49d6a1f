// Which nodes the xnnpack plugin takes: what XNNPACK's 2022-02 subgraph API computes, in float32,
// for the layouts the plugin keeps (images NHWC inside a partition, the rest row-major).
#include <algorithm>
#include <string>

#include "graph_view.h"

namespace kiln_xnnpack {

namespace {

constexpr int32_t XNN_MAX_DIMS = 6;  // XNN_MAX_TENSOR_DIMS of the 2022-02 snapshot

std::string dims_text(const kiln_value_desc& v) {
  std::string s = "[";
  for (int32_t i = 0; i < v.rank; ++i) s += (i ? "," : "") + std::to_string(v.dims[i]);
  return s + "]";
}

std::string dtype_text(kiln_dtype t) {
  switch (t) {
    case 2: return "uint8";
    case 3: return "int8";
    case 6: return "int32";
    case 7: return "int64";
    case 9: return "bool";
    case 10: return "float16";
    case 11: return "float64";
    case 16: return "bfloat16";
    default: return "type " + std::to_string(t);
  }
}

bool is_scalar_constant(const kiln_value_desc* v) { return v && v->data && numel(*v) == 1; }

// Padding and strides that XNNPACK's 2-D windows take: explicit pads (auto_pad NOTSET or VALID).
std::string window_check(const kiln_node_desc& n) {
  const std::string pad = attr_string(n, "auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return "attribute auto_pad=" + pad;
  const auto pads = attr_ints(n, "pads", {0, 0, 0, 0});
  const auto strides = attr_ints(n, "strides", {1, 1});
  const auto dilations = attr_ints(n, "dilations", {1, 1});
  if (pads.size() != 4) return "not a 2-D window (pads)";
  if (strides.size() != 2) return "not a 2-D window (strides)";
  if (dilations.size() != 2) return "not a 2-D window (dilations)";
  // XNNPACK takes them as uint32: out-of-range values are refused here, not wrapped.
  for (int64_t p : pads)
    if (p < 0 || p > 65535) return "attribute pads out of range";
  for (const auto* v : {&strides, &dilations})
    for (int64_t s : *v)
      if (s < 1 || s > 65535) return "attribute strides or dilations out of range";
  return "";
}

std::string conv_check(const GraphView& g, const kiln_node_desc& n) {
  const kiln_value_desc* x = g.in(n, 0);
  const kiln_value_desc* w = g.in(n, 1);
  const kiln_value_desc* b = g.in(n, 2);
  if (x->rank != 4) return "not a 2-D convolution (input rank " + std::to_string(x->rank) + ")";
  if (!w || !w->data || w->rank != 4) return "weights not constant";
  if (g.in_id(n, 2) >= 0 && (!b || !b->data)) return "bias not constant";
  const std::vector<int64_t> k = attr_ints(n, "kernel_shape", {w->dims[2], w->dims[3]});
  if (k.size() != 2 || k[0] != w->dims[2] || k[1] != w->dims[3]) return "attribute kernel_shape differs from the weights";
  const int64_t group = attr_int(n, "group", 1);
  if (group < 1 || x->dims[1] % group != 0 || w->dims[1] * group != x->dims[1] || w->dims[0] % group != 0)
    return "attribute group=" + std::to_string(group) + " does not match the weights";
  return window_check(n);
}

std::string pool_check(const GraphView& g, const kiln_node_desc& n, bool max) {
  if (g.in(n, 0)->rank != 4) return "not a 2-D pool";
  if (attr_int(n, "ceil_mode", 0) != 0) return "attribute ceil_mode=1";
  if (max && attr_int(n, "storage_order", 0) != 0) return "attribute storage_order=1";
  if (max && g.out(n, 1)) return "the Indices output";
  const std::vector<int64_t> k = attr_ints(n, "kernel_shape", {});
  if (k.size() != 2) return "not a 2-D pool (kernel_shape)";
  if (k[0] < 1 || k[1] < 1 || k[0] > 65535 || k[1] > 65535) return "attribute kernel_shape out of range";
  if (max && k[0] * k[1] < 2) return "a 1x1 max pool";
  if (!max) {
    const std::vector<int64_t> pads = attr_ints(n, "pads", {0, 0, 0, 0});
    if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
      return "average pool with padding (count_include_pad semantics differ)";
  }
  return window_check(n);
}

std::string binary_check(const GraphView& g, const kiln_node_desc& n) {
  if (n.n_inputs != 2) return "not 2 inputs";
  const kiln_value_desc* y = g.out(n, 0);
  if (y->rank > 4) return "rank " + std::to_string(y->rank);
  for (int k = 0; k < 2; ++k) {
    const kiln_value_desc* a = g.in(n, k);
    if (a->data) continue;  // constants are laid out for the result at compile
    if (y->rank == 4 && (a->rank != 4 || !std::equal(a->dims, a->dims + 4, y->dims)))
      return "broadcast of a non-constant image " + dims_text(*a) + " to " + dims_text(*y) + " (layout)";
  }
  return "";
}

std::string reshape_check(const GraphView& g, const kiln_node_desc& n) {
  const kiln_value_desc* x = g.in(n, 0);
  const kiln_value_desc* y = g.out(n, 0);
  if (y->rank == 4) return "a reshape into an image (layout)";
  if (x->rank == 4 && x->dims[2] * x->dims[3] != 1)
    return "flattening an image of " + std::to_string(x->dims[2]) + "x" + std::to_string(x->dims[3]) +
           " pixels (layout)";
  if (y->rank > 6) return "rank " + std::to_string(y->rank);
  return "";
}

std::string gemm_check(const GraphView& g, const kiln_node_desc& n) {
  const kiln_value_desc* a = g.in(n, 0);
  const kiln_value_desc* b = g.in(n, 1);
  const kiln_value_desc* c = g.in(n, 2);
  if (a->rank != 2 || a->data) return "A not a 2-D activation";
  if (!b || !b->data || b->rank != 2) return "B not constant";
  if (attr_int(n, "transA", 0) != 0) return "attribute transA=1";
  if (attr_float(n, "alpha", 1.0f) != 1.0f) return "attribute alpha != 1";
  if (c) {
    const int64_t N = attr_int(n, "transB", 0) ? b->dims[0] : b->dims[1];
    if (!c->data || numel(*c) != N || (c->rank == 2 && c->dims[0] != 1))
      return "C not a constant row of " + std::to_string(N);
    if (attr_float(n, "beta", 1.0f) != 1.0f) return "attribute beta != 1";
  }
  return "";
}

std::string op_check(const GraphView& g, const kiln_node_desc& n) {
  const std::string op = n.op_type;
  if (!g.out(n, 0)) return "no first output";
  if (op == "Conv") return conv_check(g, n);
  if (op == "MaxPool") return pool_check(g, n, true);
  if (op == "AveragePool") return pool_check(g, n, false);
  if (op == "GlobalAveragePool") return g.in(n, 0)->rank == 4 ? "" : "not a 2-D pool";
  if (op == "Relu" || op == "Sigmoid" || op == "HardSwish" || op == "Abs" || op == "Neg" ||
      op == "Floor" || op == "Ceil" || op == "Sqrt" || op == "LeakyRelu" || op == "Elu")
    return "";
  if (op == "Clip") {
    for (int k = 1; k < 3; ++k)
      if (g.in_id(n, k) >= 0 && !is_scalar_constant(g.in(n, k))) return "min/max not constant";
    return "";
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min")
    return binary_check(g, n);
  if (op == "Flatten" || op == "Reshape") {
    if (op == "Reshape" && !(g.in(n, 1) && g.in(n, 1)->data)) return "shape not constant";
    return reshape_check(g, n);
  }
  if (op == "Gemm") return gemm_check(g, n);
  if (op == "MatMul") {
    const kiln_value_desc* a = g.in(n, 0);
    const kiln_value_desc* b = g.in(n, 1);
    if (a->rank < 2 || a->rank > 3 || a->data) return "A of rank " + std::to_string(a->rank);
    if (!b || !b->data || b->rank != 2) return "B not a constant matrix";
    return "";
  }
  if (op == "Softmax") {
    const int rank = g.in(n, 0)->rank;
    const int64_t axis = attr_int(n, "axis", n.opset >= 13 ? -1 : 1);
    if (rank < 1 || rank > 3) return "rank " + std::to_string(rank);
    if (axis != -1 && axis != rank - 1) return "attribute axis=" + std::to_string(axis) + " (not the last)";
    if (n.opset < 13 && rank != 2) return "opset-" + std::to_string(n.opset) + " Softmax of rank " + std::to_string(rank);
    return "";
  }
  return "op not supported";
}

}  // namespace

std::string why_not(const GraphView& g, int32_t i, const std::vector<std::string>& excluded) {
  const kiln_node_desc& n = g.node(i);
  if (n.domain[0] != '\0') return std::string("domain ") + n.domain;
  if (std::find(excluded.begin(), excluded.end(), n.op_type) != excluded.end())
    return "excluded by the plugin's options";
  const bool shape_input = std::string(n.op_type) == "Reshape";
  for (int k = 0; k < n.n_inputs; ++k) {
    const kiln_value_desc* v = g.in(n, k);
    if (!v) continue;
    if (v->rank < 0) return std::string("dynamic dims of '") + v->name + "'";
    if (v->rank > XNN_MAX_DIMS) return "rank " + std::to_string(v->rank) + " (XNNPACK takes up to 6)";
    if (shape_input && k == 1) continue;
    if (v->dtype != KILN_DTYPE_FLOAT) return "dtype " + dtype_text(v->dtype) + " (float32 only)";
  }
  for (int k = 0; k < n.n_outputs; ++k) {
    const kiln_value_desc* v = g.out(n, k);
    if (!v) continue;
    if (v->rank < 0) return std::string("dynamic dims of '") + v->name + "'";
    if (v->rank > XNN_MAX_DIMS) return "rank " + std::to_string(v->rank) + " (XNNPACK takes up to 6)";
    if (v->dtype != KILN_DTYPE_FLOAT) return "dtype " + dtype_text(v->dtype) + " (float32 only)";
    for (int32_t d = 0; d < v->rank; ++d)
      if (v->dims[d] <= 0) return "an empty tensor";
  }
  if (n.n_inputs == 0 || !g.in(n, 0)) return "no input";
  return op_check(g, n);
}

}  // namespace kiln_xnnpack
