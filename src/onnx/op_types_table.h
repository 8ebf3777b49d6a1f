// kiln's own table of ONNX type constraints for the op versions libonnx 1.12 does not know
// (ai.onnx 18 and newer, ai.onnx.ml 4 and newer, ai.onnx.preview), generated from the ONNX spec by
// tools/gen_op_types.py into op_types_table.cc. op_types.h reads it; nothing else should.
#pragma once

#include <span>

namespace kiln {

// One op version as the spec's change log gives it, in a compact text form:
//   inputs/outputs  "A:T B:T axes:tensor(int64)?"  NAME:TYPE, TYPE a type parameter or a type;
//                   suffix ? optional, * variadic of one type, + variadic of several types
//   type_params     "T: tensor(float) tensor(double); I: tensor(int64)"
struct OpTypesRow {
  const char* domain;  // "" for ai.onnx
  const char* op_type;
  int since;        // the opset version of the domain this version appeared in
  bool deprecated;  // the version only marks the op deprecated; it has no signature
  const char* inputs;
  const char* outputs;
  const char* type_params;
};

std::span<const OpTypesRow> op_types_table();

// The newest opset version of each domain the spec the table was made from describes: nodes of a
// newer opset are beyond what kiln knows (their ops may have changed since).
struct OpTypesDomain {
  const char* domain;
  int newest;
};

std::span<const OpTypesDomain> op_types_table_domains();

}  // namespace kiln
