// The signature of an ONNX op version: the values it takes and gives (its formal parameters and
// the types each allows) and its attributes, from one of two tables (op_types_table.h), neither of which needs libonnx at run
// time: libonnx 1.12's schema registry as generated rows for the versions it knows (ai.onnx up to
// opset 17, ai.onnx.ml 3, ai.onnx.preview.training 1), and kiln's table generated from the ONNX
// spec for the newer ones and for the few libonnx has wrong (Erf-13, GridSample-16).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace kiln {

struct FormalTypes {
  std::string type_str;            // a type parameter ("T") or one type ("tensor(int64)")
  std::vector<std::string> types;  // what it allows, ONNX spelling, in the spec's order
  bool variadic = false;           // the last formal, repeated for the remaining values
  bool homogeneous = true;         // a variadic whose values share one type (not Loop's V)
  bool optional = false;           // may be omitted (an empty name, or absent at the end);
                                   // a variadic: may take no value
};

struct AttributeSpec {
  std::string name;
  AttrKind kind = AttrKind::kUndefined;
  bool required = false;
};

struct OpTypes {
  std::string source;  // "libonnx" or "kiln's table", for tests and reports
  int since = 0;       // the version of the op this is
  std::vector<FormalTypes> inputs, outputs;
  std::vector<AttributeSpec> attributes;  // by name
};

// How many values a side's formals take: optional formals may be left out at the end, a variadic
// one takes one or more (none if it is also optional). hi is INT_MAX after a variadic.
std::pair<int, int> formal_counts(const std::vector<FormalTypes>& formals);

// The signature of op_type in `opset` of `domain` (ai.onnx is ""), or null where kiln knows none:
// an op or domain neither source has, an opset before the op existed, a deprecated version.
// Thread-safe; the result lives as long as the process.
const OpTypes* find_op_types(const std::string& domain, const std::string& op_type, int opset);

// The newest opset version of `domain` (ai.onnx is "") whose ops kiln knows, or 0 for a domain it
// does not know (not ONNX). A model importing a newer one may use ops whose meaning changed.
int newest_known_opset(const std::string& domain);

// Indexes both tables now, so that processes forked afterwards share them instead of each
// indexing them again.
void load_op_types();

}  // namespace kiln
