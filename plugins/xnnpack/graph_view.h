// Reading kiln's graph description (include/kiln/backend_abi.h) inside the xnnpack plugin: values,
// attributes with their ONNX defaults, and the layout rule the plugin follows (a rank-4 float
// value is an image, NHWC inside a partition; every other value is row-major as kiln has it).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/backend_abi.h"

namespace kiln_xnnpack {

class GraphView {
 public:
  explicit GraphView(const kiln_graph_desc& g) : g_(g) {}
  const kiln_graph_desc& desc() const { return g_; }
  const kiln_node_desc& node(int32_t i) const { return g_.nodes[i]; }
  // The node's k-th input/output value, or null when omitted or absent.
  const kiln_value_desc* in(const kiln_node_desc& n, int k) const {
    return k < n.n_inputs && n.inputs[k] >= 0 ? &g_.values[n.inputs[k]] : nullptr;
  }
  const kiln_value_desc* out(const kiln_node_desc& n, int k) const {
    return k < n.n_outputs && n.outputs[k] >= 0 ? &g_.values[n.outputs[k]] : nullptr;
  }
  int32_t in_id(const kiln_node_desc& n, int k) const { return k < n.n_inputs ? n.inputs[k] : -1; }
  int32_t out_id(const kiln_node_desc& n, int k) const { return k < n.n_outputs ? n.outputs[k] : -1; }

 private:
  const kiln_graph_desc& g_;
};

inline const kiln_attr* find_attr(const kiln_node_desc& n, const char* name) {
  for (int32_t i = 0; i < n.n_attrs; ++i)
    if (std::strcmp(n.attrs[i].name, name) == 0) return &n.attrs[i];
  return nullptr;
}
inline int64_t attr_int(const kiln_node_desc& n, const char* name, int64_t dflt) {
  const kiln_attr* a = find_attr(n, name);
  return a && a->kind == KILN_ATTR_INT ? a->i : dflt;
}
inline float attr_float(const kiln_node_desc& n, const char* name, float dflt) {
  const kiln_attr* a = find_attr(n, name);
  return a && a->kind == KILN_ATTR_FLOAT ? a->f : dflt;
}
inline std::string attr_string(const kiln_node_desc& n, const char* name, const char* dflt) {
  const kiln_attr* a = find_attr(n, name);
  return a && a->kind == KILN_ATTR_STRING ? a->s : dflt;
}
inline std::vector<int64_t> attr_ints(const kiln_node_desc& n, const char* name, std::vector<int64_t> dflt) {
  const kiln_attr* a = find_attr(n, name);
  return a && a->kind == KILN_ATTR_INTS ? std::vector<int64_t>(a->ints, a->ints + a->n) : dflt;
}

inline int64_t numel(const kiln_value_desc& v) {
  int64_t n = 1;
  for (int32_t i = 0; i < v.rank; ++i) n *= v.dims[i];
  return n;
}
inline bool is_image(const kiln_value_desc& v) { return v.rank == 4; }
inline std::vector<int64_t> dims_of(const kiln_value_desc& v) {
  return v.rank > 0 ? std::vector<int64_t>(v.dims, v.dims + v.rank) : std::vector<int64_t>{};
}

// Why node i of g is not for XNNPACK, or "" when it is (claims.cc). `excluded`: ops the plugin's
// options refuse.
std::string why_not(const GraphView& g, int32_t i, const std::vector<std::string>& excluded);

}  // namespace kiln_xnnpack
