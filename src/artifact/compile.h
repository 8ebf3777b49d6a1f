// `kiln compile`: an .onnx model into an artifact for one target. The model is checked, inferred
// and optimized (the -O level's passes or --passes), DequantizeLinear nodes dedicated as the engine
// does; where the target runs here, the declared shapes' plans are made under the target's ISA
// caps, their weights pre-packed, and the artifact (as the loader reads it back) is measured
// against the original on random inputs: latency, session creation, accuracy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "artifact/format/manifest.h"

namespace kiln::artifact {

struct CompileOptions {
  std::string model;                 // the .onnx file
  std::string target = "native";
  std::vector<std::string> shapes;   // NAME=V1,V2 or NAME=LO..HI, one per symbolic dim
  std::string passes;                // comma-separated passes; empty: the -O level's
  int level = 2;
  bool strict_shapes = false;        // refuse input dims outside the profiles at run time
  int threads = 0;
  bool allow_newer_opset = false;
  int measure_runs = 10;             // timed runs of each side when the target runs here; 0: none
  uint64_t seed = 0;                 // the random inputs' seed
  std::vector<std::string> backends; // in order of preference; empty: the target's (target.h)
  bool strict_backends = false;      // refuse any fallback off the first backend
};

struct CompileResult {
  std::string bytes;     // the artifact
  Manifest manifest;
  bool runs_here = false;
  std::vector<std::string> notes;  // what the command says besides the summary
};

CompileResult compile(const CompileOptions& o);

// The sha256 of what the model is: its bytes and every external data file it names (name and
// bytes), so that new weights beside an unchanged .onnx are a new model.
std::string model_content_sha256(const std::string& model_path);

// What the cache keys an artifact by: the model's content (model_content_sha256), the options
// that change the artifact, the target and this kiln (version and build).
std::string compile_key(const std::string& model_sha256, const CompileOptions& o);

}  // namespace kiln::artifact
