// Values for a model's symbolic input dims when the user gives none: a size that every op of the
// model accepts, found by trying, smallest first. Setting every dim to 1 is not a valid input for
// most image and audio models with dynamic sizes (a 2x2 pool over a 1x1 image, a 512-sample window
// over one sample), and the error they then raise is about kiln's made-up input, not the model.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/random_inputs.h"

namespace kiln {

// The names of the symbolic dims of `inputs`, in order of first appearance.
std::vector<std::string> symbolic_input_dims(const std::vector<const Value*>& inputs);

// The dims of `inputs` that random inputs need a size for and `given` leaves open: symbolic ones
// by name, then "?" when some dims have no name (they all take given.default_dim). Empty when the
// inputs are not all tensors of known rank (random inputs cannot be made at all then).
std::vector<std::string> open_input_dims(const std::vector<const Value*>& inputs,
                                         const RandomInputOptions& given);

// Fails (kBadInput) when `dims` names a dim that no input has, listing the ones they have.
void check_dim_names(const std::vector<const Value*>& inputs,
                     const std::map<std::string, int64_t>& dims, const std::string& flag = "--dim");

struct DimSearch {
  RandomInputOptions inputs;         // `given` with every symbolic dim set: what worked
  std::vector<std::string> chosen;   // the dims kiln chose (not given), in input order
  int attempts = 0;                  // how many candidates were tried
  std::string first_failure;         // why the first candidate failed, when it did

  // "h=32, w=32" for the chosen dims; empty when kiln chose none.
  std::string describe() const;
  // How the user sets them instead: "--dim sets them", or --inputs where only unnamed dims were
  // chosen.
  std::string hint() const;
};

// Calls attempt(options) with the dims the caller did not give (given.dims) set to candidates (the
// unnamed dims, "?", all take one size: RandomInputOptions::default_dim):
// all 1 first; then up a ladder of sizes (2, 4, 8 ... 1024, and 224, 320, 640), first with the
// dims that lead an input (a batch) kept at 1, then with every dim at that size. The first
// attempt that returns without a kiln::Error wins. When every candidate fails (or there is no
// dim to choose), the first failure is raised again, with the dims tried and the --dim flags to
// pass. Candidates stop early once the attempts have taken `budget_s` seconds.
DimSearch search_input_dims(const std::vector<const Value*>& inputs,
                            const RandomInputOptions& given,
                            const std::function<void(const RandomInputOptions&)>& attempt,
                            double budget_s = 60);

}  // namespace kiln
