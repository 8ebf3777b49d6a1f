// Proof by running both: the original and the optimized model on the same seeded random inputs,
// on the reference runtime, output by output.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/rt_value.h"
#include "runtime/compare.h"
#include "runtime/random_inputs.h"
#include "runtime/session.h"

namespace kiln::opt {

struct VerifyOptions {
  std::vector<std::vector<RtValue>> given;  // input sets the caller has (real data), checked first
  int samples = 1;                  // random input sets after those, seeds seed .. seed + samples - 1
  RandomInputOptions inputs;        // seed and symbolic dim values
  Tolerance tolerance{1e-3, 1e-4};
};

struct OutputCheck {
  std::string name;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool ok = true;
  std::string reason;  // when not ok
};

struct VerifyReport {
  std::vector<OutputCheck> outputs;  // worst over the samples, in output order
  bool ok = true;
};

// The reference side: input sets and the original model's outputs on them.
struct Reference {
  std::vector<std::vector<RtValue>> feeds;
  std::vector<std::vector<RtValue>> outputs;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
};
Reference make_reference(Session& original, const VerifyOptions& opts);

// Runs `candidate` on the reference's inputs and compares. Fails (kRuntime) when the candidate's
// inputs or outputs are not those of the original.
VerifyReport check_against(Session& candidate, const Reference& ref, const VerifyOptions& opts);

}  // namespace kiln::opt
