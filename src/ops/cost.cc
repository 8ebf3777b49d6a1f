#include "ops/cost.h"

#include "ops/attrs.h"

namespace kiln {

namespace {

// Product of a value's dims, symbolic and unknown dims taken as 1.
double numel(const Value* v, bool& exact) {
  if (!v || !v->type.shape) {
    exact = false;
    return 0;
  }
  double n = 1;
  for (const Dim& d : *v->type.shape) {
    if (d.is_known()) n *= static_cast<double>(d.value());
    else exact = false;
  }
  return n;
}

double dim(const Value* v, int i, bool& exact) {
  if (!v || !v->type.shape || v->type.shape->size() <= size_t(i < 0 ? -i - 1 : i)) {
    exact = false;
    return 1;
  }
  const Shape& s = *v->type.shape;
  const Dim& d = i < 0 ? s[s.size() + i] : s[i];
  if (!d.is_known()) {
    exact = false;
    return 1;
  }
  return static_cast<double>(d.value());
}

}  // namespace

NodeCost node_cost(const Node& n) {
  NodeCost c;
  const Value* out = n.outputs.empty() ? nullptr : n.outputs[0];
  const std::string& op = n.op_type;
  if (!n.domain.empty()) return c;
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    const int w_index = op == "QLinearConv" ? 3 : 1;
    const Value* w = n.has_input(w_index) ? n.inputs[w_index] : nullptr;
    // each output element: Cin/group * kernel elements
    double per_out = 1;
    if (w && w->type.shape) {
      for (size_t i = 1; i < w->type.shape->size(); ++i) per_out *= dim(w, int(i), c.exact);
    } else {
      c.exact = false;
    }
    c.macs = numel(out, c.exact) * per_out;
  } else if (op == "ConvTranspose") {
    const Value* w = n.has_input(1) ? n.inputs[1] : nullptr;
    double per_in = 1;
    if (w && w->type.shape) {
      const int64_t group = attr_int(n, "group", 1);
      per_in = dim(w, 1, c.exact);
      for (size_t i = 2; i < w->type.shape->size(); ++i) per_in *= dim(w, int(i), c.exact);
      (void)group;
    }
    c.macs = numel(n.has_input(0) ? n.inputs[0] : nullptr, c.exact) * per_in;
  } else if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const Value* a = n.has_input(0) ? n.inputs[0] : nullptr;
    const double k = a && a->type.shape && !a->type.shape->empty() ? dim(a, -1, c.exact) : 1;
    c.macs = numel(out, c.exact) * k;
  } else if (op == "Gemm") {
    const Value* a = n.has_input(0) ? n.inputs[0] : nullptr;
    const double k = attr_int(n, "transA", 0) ? dim(a, 0, c.exact) : dim(a, 1, c.exact);
    c.macs = numel(out, c.exact) * k;
  }
  if (c.macs > 0) {
    c.flops = 2 * c.macs;
  } else if (out) {
    c.flops = numel(out, c.exact);
  }
  return c;
}

}  // namespace kiln
