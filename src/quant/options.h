// What `kiln quantize` is asked to do: the mode, the format written, the types, the calibration
// method and which nodes to leave alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace kiln::quant {

enum class Mode { kDynamic, kStatic, kFloat16, kBFloat16 };
enum class Format { kQdq, kQOperator };
enum class RangeMethod { kMinMax, kEntropy, kPercentile };
enum class PerChannel { kDefault, kOn, kOff };  // default: per channel for Conv, per tensor else

struct QuantizeOptions {
  Mode mode = Mode::kDynamic;
  Format format = Format::kQdq;
  PerChannel per_channel = PerChannel::kDefault;
  DataType activation_type = DataType::kUInt8;  // static: uint8 asymmetric or int8 symmetric
  DataType weight_type = DataType::kInt8;       // symmetric
  RangeMethod method = RangeMethod::kMinMax;
  double percentile = 99.99;
  std::vector<std::string> include_ops;    // empty: the mode's default ops
  std::vector<std::string> exclude_ops;
  std::vector<std::string> exclude_nodes;
  bool keep_io_types = true;  // fp16/bf16: inputs and outputs stay float32
  // bf16: every op whose schema takes bfloat16 computes in it (the fp16 mode's form), for
  // runtimes with bf16 kernels; default: only the weights are stored bf16 (bf16_weights.cc)
  bool bf16_whole_graph = false;
  // int8 modes: what the nodes kept out of int8 by --exclude-nodes (and --max-loss) become:
  // float32, or bf16 weights read through Casts (computed in bf16 where the CPU has it)
  DataType fallback = DataType::kFloat;
};

// "dynamic" ... ; each fails (kBadInput) naming the flag and what it takes.
Mode parse_mode(const std::string& s);
Format parse_format(const std::string& s);
RangeMethod parse_method(const std::string& s);
DataType parse_quant_type(const std::string& flag, const std::string& s);  // "int8" | "uint8"
DataType parse_fallback(const std::string& s);                            // "float" | "bf16"
std::string mode_name(Mode m);
std::string method_name(RangeMethod m);

// The options as words: what `kiln quantize`'s flags and a compile request's "quantize" (kiln
// serve) both take, mapped to QuantizeOptions by one function.
struct QuantizeWords {
  std::string mode = "dynamic", format = "qdq", activation_type = "uint8", weight_type = "int8";
  std::string method = "minmax";
  std::optional<bool> per_channel;  // none: per channel for Conv, per tensor else
  double percentile = 99.99;
  std::vector<std::string> include_ops, exclude_ops, exclude_nodes;
  bool keep_io_types = true, bf16_whole_graph = false;
  std::string fallback = "float";
};
// Fails (kBadInput) on a bad word, naming it as `prefix` + the field's name with '_' as `sep`
// ("--" and '-' for the flags: "--activation-type 'x': expected int8 or uint8").
QuantizeOptions quantize_options(const QuantizeWords& w, const std::string& prefix, char sep);

// Ops each mode quantizes (bf16: whose weights it stores bf16) when --include-ops is not given,
// and every op kiln can quantize.
std::vector<std::string> default_ops(Mode m);
std::vector<std::string> quantizable_ops(Mode m, Format f);

}  // namespace kiln::quant
