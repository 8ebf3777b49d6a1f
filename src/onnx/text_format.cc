#include "onnx/text_format.h"

#include <onnx/defs/parser.h>

#include "onnx/import.h"
#include "support/error.h"

namespace kiln {

Model parse_model_text(std::string_view text) {
  onnx::ModelProto mp;
  const std::string source(text);
  const auto status = onnx::OnnxParser::Parse(mp, source.c_str());
  KILN_CHECK(status.IsOK(), ErrorKind::kBadModel, "model text: {}", status.ErrorMessage());
  std::string bytes;
  KILN_CHECK(mp.SerializeToString(&bytes), ErrorKind::kBadModel, "model text: cannot serialize");
  return load_model_from_bytes(bytes, ".");
}

}  // namespace kiln
