// The target table: the machines kiln compiles and places for, each with the CPU features it
// requires and its backends in order of preference. `native` is this machine. (The artifact work
// defines the same names; this table is the one place that says what each requires.)
#pragma once

#include <string>
#include <vector>

namespace kiln::backend {

struct Target {
  std::string name;                   // "x86-64-v3"
  std::string arch;                   // "x86-64" or "aarch64"
  std::string description;
  std::vector<std::string> features;  // CPU features it requires, as GCC names them ("avx2" ...)
  std::vector<std::string> backends;  // default order of preference
};

// The table, native excluded: x86-64, x86-64-v3, x86-64-v4, aarch64-linux.
const std::vector<Target>& targets();
// This machine: its arch, the features of the table that it has, the x86-64 order of backends.
Target native_target();
// A target by name ("native" included); fails (kBadInput) naming the known ones.
Target find_target(const std::string& name);
// What this machine lacks to run code for t: its arch when it differs, else the missing features.
std::vector<std::string> missing_on_host(const Target& t);

}  // namespace kiln::backend
