#include "partition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace kiln_xnnpack {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// [N, C, H, W] <-> [N, H, W, C].
void nchw_to_nhwc(const float* src, float* dst, const std::vector<int64_t>& d) {
  const int64_t N = d[0], C = d[1], HW = d[2] * d[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const float* s = src + (n * C + c) * HW;
      float* o = dst + n * HW * C + c;
      for (int64_t p = 0; p < HW; ++p) o[p * C] = s[p];
    }
}

void nhwc_to_nchw(const float* src, float* dst, const std::vector<int64_t>& d) {
  const int64_t N = d[0], C = d[1], HW = d[2] * d[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < HW; ++p) {
      const float* s = src + (n * HW + p) * C;
      for (int64_t c = 0; c < C; ++c) dst[(n * C + c) * HW + p] = s[c];
    }
}

std::vector<size_t> inside_dims(const std::vector<int64_t>& d) {
  if (d.size() == 4) return {size_t(d[0]), size_t(d[2]), size_t(d[3]), size_t(d[1])};
  return std::vector<size_t>(d.begin(), d.end());
}

class Builder {
 public:
  Builder(const GraphView& g, Partition& p, xnn_subgraph_t sg) : g_(g), p_(p), sg_(sg) {}

  std::string build() {
    const kiln_graph_desc& d = g_.desc();
    for (int32_t i = 0; i < d.n_inputs; ++i)
      if (std::string e = port(d.inputs[i], static_cast<uint32_t>(i), XNN_VALUE_FLAG_EXTERNAL_INPUT, p_.inputs);
          !e.empty())
        return e;
    for (int32_t j = 0; j < d.n_outputs; ++j)
      if (std::string e = port(d.outputs[j], static_cast<uint32_t>(d.n_inputs + j), XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
                               p_.outputs);
          !e.empty())
        return e;
    for (int32_t i = 0; i < d.n_nodes; ++i)
      if (std::string e = node(d.nodes[i]); !e.empty())
        return std::string("node '") + d.nodes[i].name + "' (" + d.nodes[i].op_type + "): " + e;
    return "";
  }

 private:
  std::string port(int32_t vi, uint32_t external, uint32_t flag, std::vector<Port>& ports) {
    const kiln_value_desc& v = g_.desc().values[vi];
    Port pt{.image = is_image(v), .dims = dims_of(v)};
    const auto dims = inside_dims(pt.dims);
    if (xnn_define_tensor_value(sg_, xnn_datatype_fp32, dims.size(), dims.data(), nullptr, external, flag,
                                &pt.id) != xnn_status_success)
      return std::string("cannot define the boundary value '") + v.name + "'";
    if (pt.image) pt.staging.resize(numel(v));
    ids_[vi] = pt.id;
    ports.push_back(std::move(pt));
    return "";
  }

  // A constant kept for the runtime, defined with these (XNNPACK) dims.
  uint32_t constant(std::vector<float> data, const std::vector<size_t>& dims) {
    p_.constants.push_back(std::move(data));
    uint32_t id = XNN_INVALID_VALUE_ID;
    xnn_define_tensor_value(sg_, xnn_datatype_fp32, dims.size(), dims.data(), p_.constants.back().data(),
                            XNN_INVALID_VALUE_ID, 0, &id);
    return id;
  }

  // The id of an operand: made in the partition, a boundary value, or a constant laid out as the
  // values it meets (an image's operand in NHWC, padded to rank 4 first).
  uint32_t operand(int32_t vi, bool image_context) {
    auto it = ids_.find(vi);
    if (it != ids_.end()) return it->second;
    const kiln_value_desc& v = g_.desc().values[vi];
    if (!v.data) return XNN_INVALID_VALUE_ID;
    const float* src = static_cast<const float*>(v.data);
    std::vector<float> data(src, src + numel(v));
    std::vector<int64_t> d = dims_of(v);
    if (image_context) {
      while (d.size() < 4) d.insert(d.begin(), 1);
      std::vector<float> nhwc(data.size());
      nchw_to_nhwc(data.data(), nhwc.data(), d);
      data = std::move(nhwc);
    }
    const uint32_t id = constant(std::move(data), image_context ? inside_dims(d) : std::vector<size_t>(d.begin(), d.end()));
    ids_[vi] = id;
    return id;
  }

  // The id the node's output k is written to (defined here unless it is a boundary output).
  uint32_t result(const kiln_node_desc& n, int k) {
    const int32_t vi = g_.out_id(n, k);
    auto it = ids_.find(vi);
    if (it != ids_.end()) return it->second;
    const auto dims = inside_dims(dims_of(g_.desc().values[vi]));
    uint32_t id = XNN_INVALID_VALUE_ID;
    xnn_define_tensor_value(sg_, xnn_datatype_fp32, dims.size(), dims.data(), nullptr, XNN_INVALID_VALUE_ID, 0, &id);
    return ids_[vi] = id;
  }

  std::string node(const kiln_node_desc& n) {
    const std::string op = n.op_type;
    const bool image = is_image(*g_.out(n, 0));
    const uint32_t x = operand(g_.in_id(n, 0), image && op != "Flatten" && op != "Reshape");
    if (x == XNN_INVALID_VALUE_ID) return "its input is not in the partition";
    xnn_status s = xnn_status_success;
    if (op == "Conv") return conv(n, x);
    if (op == "MaxPool" || op == "AveragePool") {
      const auto k = attr_ints(n, "kernel_shape", {});
      const auto st = attr_ints(n, "strides", {1, 1});
      const auto pd = attr_ints(n, "pads", {0, 0, 0, 0});
      const uint32_t y = result(n, 0);
      if (op == "MaxPool") {
        const auto dl = attr_ints(n, "dilations", {1, 1});
        s = xnn_define_max_pooling_2d(sg_, pd[0], pd[3], pd[2], pd[1], k[0], k[1], st[0], st[1], dl[0], dl[1],
                                      -kInf, kInf, x, y, 0);
      } else {
        s = xnn_define_average_pooling_2d(sg_, pd[0], pd[3], pd[2], pd[1], k[0], k[1], st[0], st[1], -kInf,
                                          kInf, x, y, 0);
      }
    } else if (op == "GlobalAveragePool") {
      s = xnn_define_global_average_pooling_2d(sg_, -kInf, kInf, x, result(n, 0), 0);
    } else if (op == "Relu") {
      s = xnn_define_clamp(sg_, 0.0f, kInf, x, result(n, 0), 0);
    } else if (op == "Clip") {
      const kiln_value_desc* lo = g_.in(n, 1);
      const kiln_value_desc* hi = g_.in(n, 2);
      s = xnn_define_clamp(sg_, lo ? *static_cast<const float*>(lo->data) : -kInf,
                           hi ? *static_cast<const float*>(hi->data) : kInf, x, result(n, 0), 0);
    } else if (op == "Sigmoid") {
      s = xnn_define_sigmoid(sg_, x, result(n, 0), 0);
    } else if (op == "HardSwish") {
      s = xnn_define_hardswish(sg_, x, result(n, 0), 0);
    } else if (op == "Abs") {
      s = xnn_define_abs(sg_, x, result(n, 0), 0);
    } else if (op == "Neg") {
      s = xnn_define_negate(sg_, x, result(n, 0), 0);
    } else if (op == "Floor") {
      s = xnn_define_floor(sg_, x, result(n, 0), 0);
    } else if (op == "Ceil") {
      s = xnn_define_ceiling(sg_, x, result(n, 0), 0);
    } else if (op == "Sqrt") {
      s = xnn_define_square_root(sg_, x, result(n, 0), 0);
    } else if (op == "LeakyRelu") {
      s = xnn_define_leaky_relu(sg_, attr_float(n, "alpha", 0.01f), x, result(n, 0), 0);
    } else if (op == "Elu") {
      s = xnn_define_elu(sg_, attr_float(n, "alpha", 1.0f), x, result(n, 0), 0);
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min") {
      const uint32_t b = operand(g_.in_id(n, 1), image);
      if (b == XNN_INVALID_VALUE_ID) return "its input is not in the partition";
      const uint32_t y = result(n, 0);
      if (op == "Add") s = xnn_define_add2(sg_, -kInf, kInf, x, b, y, 0);
      if (op == "Sub") s = xnn_define_subtract(sg_, -kInf, kInf, x, b, y, 0);
      if (op == "Mul") s = xnn_define_multiply2(sg_, -kInf, kInf, x, b, y, 0);
      if (op == "Div") s = xnn_define_divide(sg_, -kInf, kInf, x, b, y, 0);
      if (op == "Max") s = xnn_define_maximum2(sg_, x, b, y, 0);
      if (op == "Min") s = xnn_define_minimum2(sg_, x, b, y, 0);
    } else if (op == "Flatten" || op == "Reshape") {
      const auto d = inside_dims(dims_of(*g_.out(n, 0)));
      s = xnn_define_static_reshape(sg_, d.size(), d.data(), x, result(n, 0), 0);
    } else if (op == "Gemm" || op == "MatMul") {
      return fully_connected(n, x, op == "Gemm");
    } else if (op == "Softmax") {
      s = xnn_define_softmax(sg_, x, result(n, 0), 0);
    } else {
      return "op not supported";
    }
    return s == xnn_status_success ? "" : "XNNPACK refused the node (status " + std::to_string(int(s)) + ")";
  }

  std::string conv(const kiln_node_desc& n, uint32_t x) {
    const kiln_value_desc& w = *g_.in(n, 1);
    const kiln_value_desc* b = g_.in(n, 2);
    const int64_t O = w.dims[0], I = w.dims[1], KH = w.dims[2], KW = w.dims[3];
    const int64_t group = attr_int(n, "group", 1);
    const int64_t C = g_.in(n, 0)->dims[1];
    const auto st = attr_ints(n, "strides", {1, 1});
    const auto pd = attr_ints(n, "pads", {0, 0, 0, 0});
    const auto dl = attr_ints(n, "dilations", {1, 1});
    const float* wd = static_cast<const float*>(w.data);
    std::vector<float> bias = b ? std::vector<float>(static_cast<const float*>(b->data),
                                                     static_cast<const float*>(b->data) + O)
                                : std::vector<float>(O, 0.0f);
    const uint32_t bias_id = constant(std::move(bias), {size_t(O)});
    const uint32_t y = result(n, 0);
    xnn_status s;
    if (group == C && I == 1 && group > 1) {  // depthwise: [1, KH, KW, O]
      std::vector<float> f(O * KH * KW);
      for (int64_t o = 0; o < O; ++o)
        for (int64_t k = 0; k < KH * KW; ++k) f[k * O + o] = wd[o * KH * KW + k];
      const uint32_t f_id = constant(std::move(f), {1, size_t(KH), size_t(KW), size_t(O)});
      s = xnn_define_depthwise_convolution_2d(sg_, pd[0], pd[3], pd[2], pd[1], KH, KW, st[0], st[1], dl[0], dl[1],
                                              O / C, C, -kInf, kInf, x, f_id, bias_id, y, 0);
    } else {  // [O, KH, KW, I]
      std::vector<float> f(O * KH * KW * I);
      for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < I; ++i)
          for (int64_t k = 0; k < KH * KW; ++k) f[(o * KH * KW + k) * I + i] = wd[(o * I + i) * KH * KW + k];
      const uint32_t f_id = constant(std::move(f), {size_t(O), size_t(KH), size_t(KW), size_t(I)});
      s = xnn_define_convolution_2d(sg_, pd[0], pd[3], pd[2], pd[1], KH, KW, st[0], st[1], dl[0], dl[1], group, I,
                                    O / group, -kInf, kInf, x, f_id, bias_id, y, 0);
    }
    return s == xnn_status_success ? "" : "XNNPACK refused the convolution (status " + std::to_string(int(s)) + ")";
  }

  // Gemm (A [M, K] x B, + C) and MatMul (A [..., K] x B [K, N]) as fully connected: filter [N, K].
  std::string fully_connected(const kiln_node_desc& n, uint32_t x, bool gemm) {
    const kiln_value_desc& b = *g_.in(n, 1);
    const bool trans_b = gemm && attr_int(n, "transB", 0) != 0;
    const int64_t K = trans_b ? b.dims[1] : b.dims[0], N = trans_b ? b.dims[0] : b.dims[1];
    const float* bd = static_cast<const float*>(b.data);
    std::vector<float> f(N * K);
    for (int64_t r = 0; r < N; ++r)
      for (int64_t k = 0; k < K; ++k) f[r * K + k] = trans_b ? bd[r * K + k] : bd[k * N + r];
    const uint32_t f_id = constant(std::move(f), {size_t(N), size_t(K)});
    uint32_t bias_id = XNN_INVALID_VALUE_ID;
    if (const kiln_value_desc* c = gemm ? g_.in(n, 2) : nullptr) {
      const float* cd = static_cast<const float*>(c->data);
      bias_id = constant(std::vector<float>(cd, cd + N), {size_t(N)});
    }
    const xnn_status s = xnn_define_fully_connected(sg_, -kInf, kInf, x, f_id, bias_id, result(n, 0), 0);
    return s == xnn_status_success ? "" : "XNNPACK refused the fully connected node (status " + std::to_string(int(s)) + ")";
  }

  const GraphView& g_;
  Partition& p_;
  xnn_subgraph_t sg_;
  std::unordered_map<int32_t, uint32_t> ids_;
};

}  // namespace

std::string compile_partition(const GraphView& g, pthreadpool_t pool, Partition& p) {
  const kiln_graph_desc& d = g.desc();
  xnn_subgraph_t sg = nullptr;
  if (xnn_create_subgraph(static_cast<uint32_t>(d.n_inputs + d.n_outputs), 0, &sg) != xnn_status_success)
    return "xnn_create_subgraph failed";
  std::string err = Builder(g, p, sg).build();
  if (err.empty()) {
    // Its workers yield once a run ends: kiln's OpenMP threads run the steps between partitions.
    const xnn_status s = xnn_create_runtime_v2(sg, pool, XNN_FLAG_YIELD_WORKERS, &p.runtime);
    if (s != xnn_status_success) err = "xnn_create_runtime failed (status " + std::to_string(int(s)) + ")";
  }
  xnn_delete_subgraph(sg);
  return err;
}

std::string run_partition(Partition& p, const void* const* inputs, void* const* outputs) {
  p.externals.clear();
  std::vector<void*> ptrs;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    Port& pt = p.inputs[i];
    void* data = const_cast<void*>(inputs[i]);
    if (pt.image) {
      nchw_to_nhwc(static_cast<const float*>(inputs[i]), pt.staging.data(), pt.dims);
      data = pt.staging.data();
    }
    p.externals.push_back({pt.id, data});
    ptrs.push_back(data);
  }
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    Port& pt = p.outputs[j];
    void* data = pt.image ? pt.staging.data() : outputs[j];
    p.externals.push_back({pt.id, data});
    ptrs.push_back(data);
  }
  if (ptrs != p.bound) {
    if (xnn_setup_runtime(p.runtime, p.externals.size(), p.externals.data()) != xnn_status_success)
      return "xnn_setup_runtime failed";
    p.bound = ptrs;
  }
  if (xnn_invoke_runtime(p.runtime) != xnn_status_success) return "xnn_invoke_runtime failed";
  for (size_t j = 0; j < p.outputs.size(); ++j)
    if (p.outputs[j].image)
      nhwc_to_nchw(p.outputs[j].staging.data(), static_cast<float*>(outputs[j]), p.outputs[j].dims);
  return "";
}

}  // namespace kiln_xnnpack
