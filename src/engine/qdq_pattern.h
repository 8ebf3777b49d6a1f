// The QDQ form of quantized models (what ONNX Runtime's quantizer and kiln's write): float ops
// between DequantizeLinear of int8/uint8 values and QuantizeLinear of their results. The engine's
// int8 implementations read it here, in one place: the quantization parameters of a Q or DQ
// node (constant, finite, positive scales; zero points of the quantized type), an activation read
// through a DequantizeLinear, a constant weight read through one, the QuantizeLinear ending a
// chain. Anything else is no match, so the node goes to the float or reference kernels (which
// report what is wrong with the model).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/graph_facts.h"
#include "engine/kernel_table.h"

namespace kiln::engine {

// y = (q - zero_point) * scale (DequantizeLinear), q = saturate(round_half_even(y / scale) +
// zero_point) (QuantizeLinear), per tensor (one scale) or along `axis`.
struct QuantParams {
  DataType type = DataType::kUndefined;  // of the quantized side: kInt8 or kUInt8
  std::vector<float> scale;              // one, or one per index of `axis`
  std::vector<int32_t> zero_point;       // as many as scale
  int axis = -1;                         // normalized; -1 per tensor

  bool per_tensor() const { return scale.size() == 1; }
};

// The parameters of a QuantizeLinear or DequantizeLinear of float32 and int8/uint8 whose scale
// (and zero point) are constant, the scales finite and positive, the zero point of the quantized
// type, and no block_size; nullopt otherwise.
std::optional<QuantParams> quant_params(const Node& n, const GraphFacts& f);

// An activation v = DequantizeLinear(q), q int8/uint8 computed at run time, per tensor.
struct DequantizedInput {
  const Node* dq = nullptr;
  const Value* q = nullptr;
  QuantParams params;
};
std::optional<DequantizedInput> dequantized_input(const Value* v, const GraphFacts& f);

// A constant weight v = DequantizeLinear(w), w a constant int8 tensor with zero points 0, per
// tensor or along `channel_axis` (the output channels). The DequantizeLinear itself is folded
// (its inputs are constant): v is also known as floats. Matched on w's type and dims alone: a
// weight the engine let go of once packed is not brought back for a new plan (the step binds its
// packed copy by value, Lowering::packed_constant).
struct DequantizedWeight {
  const Node* dq = nullptr;
  const Value* q = nullptr;
  const std::vector<int64_t>* dims = nullptr;  // q's
  QuantParams params;
};
std::optional<DequantizedWeight> dequantized_weight(const Value* v, const GraphFacts& f,
                                                    int channel_axis);

// v's dims when it is a constant int8 tensor of known dims, read without its bytes; else null.
const std::vector<int64_t>* int8_constant_dims(const Value* v, const GraphFacts& f);

// The QuantizeLinear that is v's one reader (free, v no graph output), per tensor, to int8 or
// uint8.
struct Requantize {
  const Node* q = nullptr;
  QuantParams params;
};
std::optional<Requantize> quantize_of(const Value* v, const MatchContext& ctx);

// Gives each reader of a DequantizeLinear's result that an int8 implementation may take (Conv,
// MatMul, Gemm, Add) a DequantizeLinear of its own (ONNX Runtime's quantizer shares one among all
// the readers of a tensor): the int8 implementation then takes the one it reads through as its
// prologue; the other readers keep sharing the original. Main graph only; graph outputs keep
// theirs. Returns how many nodes were added.
int dedicate_dequantize(Graph& g);

}  // namespace kiln::engine
