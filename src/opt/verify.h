// Proof by running both: the original and the optimized model on the same seeded random inputs,
// on the reference runtime, output by output.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/rt_value.h"
#include "runtime/compare.h"
#include "runtime/input_dims.h"
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
  // The symbolic dims kiln chose for the random sets ("h=32, w=32"; runtime/input_dims.h), and
  // why the first candidate (all 1) did not run, when it did not.
  std::string chosen_dims;
  std::string chosen_because;
};

// The reference side: input sets and the original model's outputs on them. Symbolic dims the
// options leave open are chosen so the original runs (search_input_dims: all 1 first, larger
// sizes where that fails), and the same dims serve every random set.
struct Reference {
  std::vector<std::vector<RtValue>> feeds;
  std::vector<std::vector<RtValue>> outputs;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  RandomInputOptions random;  // what the random sets were made with, every symbolic dim set
  std::string chosen_dims;    // the dims kiln chose among those ("h=32"), empty when none
  std::string chosen_because; // why smaller candidates did not run
  std::string chosen_hint;    // how the user sets them instead
};
Reference make_reference(Session& original, const VerifyOptions& opts);

// Runs `candidate` on the reference's inputs and compares. Fails (kRuntime) when the candidate's
// inputs or outputs are not those of the original.
VerifyReport check_against(Session& candidate, const Reference& ref, const VerifyOptions& opts);

}  // namespace kiln::opt
