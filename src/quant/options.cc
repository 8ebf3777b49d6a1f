#include "quant/options.h"

#include "support/error.h"

namespace kiln::quant {

Mode parse_mode(const std::string& s) {
  if (s == "dynamic") return Mode::kDynamic;
  if (s == "static") return Mode::kStatic;
  if (s == "fp16") return Mode::kFloat16;
  if (s == "bf16") return Mode::kBFloat16;
  fail(ErrorKind::kBadInput, "--mode '{}': expected dynamic, static, fp16 or bf16", s);
}

Format parse_format(const std::string& s) {
  if (s == "qdq") return Format::kQdq;
  if (s == "qoperator") return Format::kQOperator;
  fail(ErrorKind::kBadInput, "--format '{}': expected qdq or qoperator", s);
}

RangeMethod parse_method(const std::string& s) {
  if (s == "minmax") return RangeMethod::kMinMax;
  if (s == "entropy") return RangeMethod::kEntropy;
  if (s == "percentile") return RangeMethod::kPercentile;
  fail(ErrorKind::kBadInput, "--method '{}': expected minmax, entropy or percentile", s);
}

DataType parse_quant_type(const std::string& flag, const std::string& s) {
  if (s == "int8") return DataType::kInt8;
  if (s == "uint8") return DataType::kUInt8;
  fail(ErrorKind::kBadInput, "{} '{}': expected int8 or uint8", flag, s);
}

DataType parse_fallback(const std::string& s) {
  if (s == "float") return DataType::kFloat;
  if (s == "bf16") return DataType::kBFloat16;
  fail(ErrorKind::kBadInput, "--fallback '{}': expected float or bf16", s);
}

std::string mode_name(Mode m) {
  switch (m) {
    case Mode::kDynamic: return "dynamic";
    case Mode::kStatic: return "static";
    case Mode::kFloat16: return "fp16";
    case Mode::kBFloat16: return "bf16";
  }
  return "?";
}

std::string method_name(RangeMethod m) {
  switch (m) {
    case RangeMethod::kMinMax: return "minmax";
    case RangeMethod::kEntropy: return "entropy";
    case RangeMethod::kPercentile: return "percentile";
  }
  return "?";
}

std::vector<std::string> default_ops(Mode m) {
  if (m == Mode::kStatic) return {"Conv", "MatMul", "Gemm"};
  if (m == Mode::kDynamic) return {"MatMul", "Gemm"};
  if (m == Mode::kBFloat16) return {"Conv", "ConvTranspose", "MatMul", "Gemm", "Gather"};  // weights
  return {};
}

std::vector<std::string> quantizable_ops(Mode m, Format f) {
  if (m == Mode::kDynamic) return {"MatMul", "Gemm", "Conv"};
  if (m == Mode::kStatic) return {"Conv", "MatMul", "Gemm"};
  return default_ops(m);
}

QuantizeOptions quantize_options(const QuantizeWords& w, const std::string& prefix, char sep) {
  const auto name = [&](std::string field) {
    for (char& c : field) c = c == '_' ? sep : c;
    return prefix + field;
  };
  return {.mode = parse_mode(w.mode),
          .format = parse_format(w.format),
          .per_channel = !w.per_channel ? PerChannel::kDefault : *w.per_channel ? PerChannel::kOn : PerChannel::kOff,
          .activation_type = parse_quant_type(name("activation_type"), w.activation_type),
          .weight_type = parse_quant_type(name("weight_type"), w.weight_type),
          .method = parse_method(w.method),
          .percentile = w.percentile,
          .include_ops = w.include_ops,
          .exclude_ops = w.exclude_ops,
          .exclude_nodes = w.exclude_nodes,
          .keep_io_types = w.keep_io_types,
          .bf16_whole_graph = w.bf16_whole_graph,
          .fallback = parse_fallback(w.fallback)};
}

}  // namespace kiln::quant
