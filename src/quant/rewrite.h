// The graph rewrites of each mode, and the small edits they share.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/options.h"
#include "quant/qparams.h"
#include "quant/selection.h"

namespace kiln::quant {

using TensorRanges = std::map<std::string, Range>;

// The model being rewritten, its main graph, the ai.onnx opset new nodes take, and the record of
// what happened to each node.
struct Rewrite {
  Model& model;
  Graph& graph;
  const QuantizeOptions& options;
  std::vector<NodeDecision>& decisions;
  int opset;
};

// A new initializer (named after `base`) and a new node appended to the graph; the caller sorts
// the graph when done (finish_rewrite).
Value* add_constant(Rewrite& r, const std::string& base, Tensor t);
Node* add_op(Rewrite& r, const std::string& op, const std::string& name,
             const std::vector<Value*>& inputs, int outputs = 1, const std::string& domain = "");
// Every read of `from` (but by `except`) now reads `to`.
void redirect_uses(Graph& g, Value* from, Value* to, const Node* except = nullptr);
// `by` makes old's (single) output from now on, under its name, and old is removed.
void take_over_output(Graph& g, Node& old, Node& by);
// Sorts the graph, drops what nothing reads (the float weights replaced), infers types again.
void finish_rewrite(Rewrite& r);

// Constant nodes (and Identities of initializers) giving a Conv, MatMul or Gemm its weight or
// bias become initializers, so the weight is found as one.
void weights_as_initializers(Graph& g);

// The weight's channel axis for per-channel quantization, or -1 for per tensor: Conv's output
// channels (0), MatMul's columns (1), Gemm's N (0 with transB, else 1). Per channel needs
// DequantizeLinear's axis (opset 13).
int weight_axis(const Node& n, const QuantizeOptions& o, int opset);

// The activation tensor after n (its output, or the Relu/Clip reading only it), whose range the
// quantized output takes.
Value* quantized_output(const Graph& g, const Node& n);

// The tensors static quantization needs ranges of, for the selected nodes (of any graph).
std::vector<std::string> tensors_to_calibrate(const Graph& g, const Selection& s,
                                              const QuantizeOptions& o);

// A QuantizeLinear -> DequantizeLinear pair on each tensor (every reader then reads the DQ); the
// parameters chosen for each, by name.
std::map<std::string, QuantParams> insert_activation_qdq(Rewrite& r,
                                                         const std::vector<std::string>& tensors,
                                                         const TensorRanges& ranges);

void quantize_dynamic(Rewrite& r, const Selection& s);
void quantize_static_qdq(Rewrite& r, const Selection& s, const TensorRanges& ranges);
void quantize_static_qoperator(Rewrite& r, const Selection& s, const TensorRanges& ranges);

// fp16/bf16: counts of what the conversion did.
struct FloatConversion {
  int64_t converted_initializers = 0;  // and Constant nodes
  int64_t clamped_values = 0;      // beyond the type's range, clamped to its largest finite value
  int64_t flushed_values = 0;      // nonzero values that became 0 (below the smallest subnormal)
  int64_t casts_added = 0;
};
FloatConversion convert_float_precision(Rewrite& r, DataType to);
// bf16's default form: the weights of Conv, ConvTranspose, MatMul, Gemm and Gather's tables
// stored bf16, each read through a Cast to float32; every op stays float32. Needs opset 13.
// With `only`: those nodes alone (by label; the int8 modes' --fallback bf16), their labels
// appended to `stored` instead of a decision recorded.
FloatConversion store_weights_bf16(Rewrite& r, const std::set<std::string>* only = nullptr,
                                   std::vector<std::string>* stored = nullptr);

}  // namespace kiln::quant
