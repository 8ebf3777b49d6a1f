// The dispatch lists: per op and element type, the implementations that may run a node, in the
// order they are tried, each with the first grouping sweep that tries it (kernel_table.h: Sweep).
// The reference kernel is implicitly last. A change of order changes which kernel runs a node,
// so dispatch_lists_golden.txt holds these lists as text and a unit test compares them.
#include "engine/kernel_table.h"
#include "engine/native/native_kernels.h"
#include "engine/onednn/onednn_kernels.h"

namespace kiln::engine {

namespace {

constexpr DataType kFloat = DataType::kFloat;
constexpr DataType kAnyType = DataType::kUndefined;  // after the node's own type's list
constexpr Sweep kProducers = Sweep::kProducers;
constexpr Sweep kFusing = Sweep::kFusing;
constexpr Sweep kAll = Sweep::kAll;

}  // namespace

const std::vector<DispatchList>& dispatch_lists() {
  static const std::vector<DispatchList> lists = {
      // Convolutions. A depthwise conv with the SiLU making its input takes that SiLU before the
      // expansion conv's group would take it as its epilogue; alone, oneDNN's depthwise kernel is
      // faster. A ConvTranspose whose kernel equals its strides is kiln's (oneDNN's took up to
      // 100x longer, one output channel worst). A Conv of the QDQ form (DequantizeLinear of its
      // input and weights) is an int8 conv taking the DequantizeLinear of its input and the
      // QuantizeLinear of its result.
      {{"Conv"}, kFloat,
       {{&kOnednnQuantConv, kProducers}, {&kCpuDepthwiseConv, kProducers}, {&kOnednnConv, kFusing}}},
      {{"QLinearConv", "ConvInteger"}, kAnyType, {{&kOnednnQLinearConv, kAll}}},
      {{"ConvTranspose"}, kFloat, {{&kCpuPatchDeconv, kFusing}, {&kOnednnDeconv, kFusing}}},
      // With constant int8 weights (QDQ, dynamic QDQ, ONNX Runtime's MatMulInteger form): int8;
      // a product of few multiply-adds on a constant float weight is kiln's (no oneDNN kernel).
      {{"MatMul", "Gemm"}, kFloat,
       {{&kOnednnQuantMatmul, kProducers}, {&kCpuSmallMatmul, kFusing}, {&kOnednnMatmul, kFusing}}},
      {{"MatMulInteger"}, kAnyType, {{&kOnednnQuantMatmul, kFusing}}},
      {{"QLinearMatMul"}, kAnyType, {{&kOnednnQuantMatmul, kAll}}},
      {{"Attention"}, kFloat, {{&kOnednnAttention, kAll}}},
      // Pools of channel blocks (what the convs write) are kiln's: oneDNN 2.6's AVX2 ones took
      // 3-5x ONNX Runtime's time there.
      {{"MaxPool"}, kFloat, {{&kOnednnQuantMaxPool, kFusing}, {&kCpuPool, kAll}, {&kOnednnPool, kAll}}},
      {{"AveragePool"}, kFloat, {{&kCpuPool, kAll}, {&kOnednnPool, kAll}}},
      {{"GlobalAveragePool", "GlobalMaxPool"}, kFloat, {{&kOnednnPool, kAll}}},
      {{"BatchNormalization"}, kFloat, {{&kOnednnBatchNorm, kAll}}},
      {{"Softmax", "LogSoftmax"}, kFloat, {{&kCpuSoftmax, kAll}}},
      {{"LayerNormalization"}, kFloat, {{&kCpuLayerNorm, kAll}}},
      {{"ReduceSum", "ReduceMean", "ReduceMax"}, kFloat, {{&kCpuReduce, kAll}}},
      {{"LSTM"}, kFloat, {{&kCpuLstm, kAll}}},
      {{"GRU"}, kFloat, {{&kCpuGru, kAll}}},
      // Elementwise ops: a chain of them is one pass.
      {{"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "HardSigmoid", "HardSwish", "Exp", "Sqrt",
        "Neg", "Abs", "Reciprocal", "Clip", "Gelu", "Sub", "Mul", "Div", "Max", "Min",
        "Pow"},
       kFloat,
       {{&kCpuElementwise, kAll}}},
      // The residual Add of the QDQ form (DequantizeLinear of both operands, QuantizeLinear of
      // the sum) reads and writes int8.
      {{"Add"}, kFloat, {{&kCpuQuantizedAdd, kFusing}, {&kCpuElementwise, kAll}}},
      // Quantization's boundaries, per tensor; per axis on the reference kernel.
      {{"QuantizeLinear"}, kFloat, {{&kCpuQuantizeLinear, kAll}}},
      {{"DequantizeLinear"}, kAnyType, {{&kCpuQuantizeLinear, kAll}}},
      {{"DynamicQuantizeLinear"}, kFloat, {{&kCpuDynamicQuantize, kAll}}},
      // Data movement. Concats are kiln's copies where their pieces' layouts allow (row-major
      // pieces of any type included), else oneDNN's; a Concat of a channel shuffle's groups is
      // the shuffle's step.
      {{"Concat"}, kFloat,
       {{&kCpuConcatNormalizing, kFusing},
        {&kCpuConcatLaidOut, kAll},
        {&kOnednnConcat, kAll},
        {&kCpuConcatShuffle, kFusing}}},
      {{"Concat"}, kAnyType, {{&kCpuConcat, kAll}}},
      {{"Split"}, kFloat, {{&kOnednnSplit, kAll}}},
      {{"Slice"}, kFloat, {{&kOnednnSlice, kAll}}},
      {{"Transpose"}, kAnyType, {{&kCpuTranspose, kAll}}},
      // float32 to and from float16 / bfloat16: a float16 model's edges (reduced_float.h).
      {{"Cast"}, kAnyType, {{&kCpuCast, kAll}}},
      {{"Gather"}, kAnyType, {{&kCpuGather, kAll}}},
      // A channel shuffle (Reshape, Transpose, Reshape) is one step; other reshapes are views.
      {{"Reshape"}, kFloat, {{&kCpuChannelShuffle, kFusing}}},
      {{"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}, kAnyType, {{&kEngineView, kAll}}},
      {{"Pad"}, kAnyType, {{&kCpuPad, kAll}}},
      // A Resize with constant scales or sizes is a planned step; any other makes its output.
      {{"Resize"}, kFloat, {{&kCpuResize, kAll}}},
      {{"Resize"}, kAnyType, {{&kCpuResizeContext, kAll}}},
      // Ops whose output shape depends on the data, or that detection models run by the hundred
      // on small tensors: kernels of the reference form.
      {{"NonMaxSuppression"}, kAnyType, {{&kCpuNms, kAll}}},
      {{"NonZero"}, kAnyType, {{&kCpuNonZero, kAll}}},
      {{"GatherND"}, kAnyType, {{&kCpuGatherNd, kAll}}},
  };
  return lists;
}

}  // namespace kiln::engine
