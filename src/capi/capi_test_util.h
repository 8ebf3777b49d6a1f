// Small ONNX models as bytes for the C API's tests, built with ONNX's protobuf classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/proto.h"

namespace kiln::capi_test {

// A dim of a declared shape: a size, or a symbol when `sym` is set.
struct TestDim {
  int64_t size = 0;
  const char* sym = nullptr;
};

inline void set_type(onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<TestDim>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (const TestDim& d : dims) {
    auto* sd = shape->add_dim();
    if (d.sym) sd->set_dim_param(d.sym);
    else sd->set_dim_value(d.size);
  }
}

// One node `op` reading inputs in0, in1 ... (each of `elem` and `dims`) and writing `out`.
inline onnx::ModelProto one_node_model(const std::string& op, int n_inputs, int elem, const std::vector<TestDim>& dims,
                                       int out_elem, const std::vector<TestDim>& out_dims) {
  onnx::ModelProto mp;
  mp.set_ir_version(8);
  mp.add_opset_import()->set_version(17);
  auto* g = mp.mutable_graph();
  g->set_name("g");
  auto* node = g->add_node();
  node->set_op_type(op);
  node->set_name("n");
  for (int i = 0; i < n_inputs; ++i) {
    set_type(g->add_input(), "in" + std::to_string(i), elem, dims);
    node->add_input("in" + std::to_string(i));
  }
  node->add_output("out");
  set_type(g->add_output(), "out", out_elem, out_dims);
  return mp;
}

// out = in0 + in1, float[batch,4].
inline std::string add_model() {
  return one_node_model("Add", 2, 1, {{0, "batch"}, {4}}, 1, {{0, "batch"}, {4}}).SerializeAsString();
}

}  // namespace kiln::capi_test
