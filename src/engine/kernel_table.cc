#include "engine/kernel_table.h"

#include <fmt/format.h>

#include "engine/reference_step.h"
#include "support/error.h"

namespace kiln::engine {

std::string_view sweep_name(Sweep s) {
  switch (s) {
    case Sweep::kProducers: return "producers";
    case Sweep::kFusing: return "fusing";
    case Sweep::kAll: return "all";
  }
  return "?";
}

KernelTable::KernelTable(const std::vector<DispatchList>& lists) {
  for (const DispatchList& l : lists)
    for (std::string_view op : l.ops) {
      auto [it, fresh] = table_.emplace(std::pair{std::string(op), l.dtype}, l.entries);
      KILN_ASSERT(fresh, "an (op, element type) in two dispatch lists");
    }
}

std::vector<DispatchEntry> KernelTable::find(const Node& n, const GraphFacts& facts) const {
  std::vector<DispatchEntry> out;
  if (!n.domain.empty()) return out;
  const Value* key = nullptr;
  for (const Value* v : n.inputs)
    if (v) {
      key = v;
      break;
    }
  if (!key && !n.outputs.empty()) key = n.outputs[0];
  for (DataType t : {key ? facts.dtype(key) : DataType::kUndefined, DataType::kUndefined}) {
    auto it = table_.find({n.op_type, t});
    if (it != table_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
    if (t == DataType::kUndefined) break;
  }
  return out;
}

const KernelImpl& KernelTable::reference() {
  static const KernelImpl impl{.name = "reference", .match = match_reference,
                               .build = build_reference};
  return impl;
}

const KernelTable& KernelTable::global() {
  static const KernelTable table(dispatch_lists());
  return table;
}

std::string KernelTable::describe(std::string_view op) const {
  std::string s =
      "# Per op and element type, the implementations in the order they are tried, each with the\n"
      "# first grouping sweep that tries it (producers, fusing, all); the reference is last.\n"
      "# Element types not listed run on the reference kernel.\n";
  auto line = [&](const DispatchEntry& e, bool any_type) {
    s += fmt::format("  {:<26} {}{}\n", e.impl->name, sweep_name(e.sweep),
                     any_type ? ", from the list for any type" : "");
  };
  bool found = false;
  for (auto it = table_.begin(); it != table_.end();) {
    const std::string& name = it->first.first;
    auto end = it;
    while (end != table_.end() && end->first.first == name) ++end;
    if (op.empty() || op == name) {
      found = true;
      const auto any = table_.find({name, DataType::kUndefined});
      bool typed = false;
      for (auto l = it; l != end; ++l) {
        if (l->first.second == DataType::kUndefined) continue;
        typed = true;
        s += fmt::format("{} {}\n", name, dtype_name(l->first.second));
        for (const DispatchEntry& e : l->second) line(e, false);
        if (any != table_.end())
          for (const DispatchEntry& e : any->second) line(e, true);
        s += "  reference\n";
      }
      if (any != table_.end()) {
        s += fmt::format("{} {}\n", name, typed ? "other types" : "any type");
        for (const DispatchEntry& e : any->second) line(e, false);
        s += "  reference\n";
      }
    }
    it = end;
  }
  if (!found) s += fmt::format("{} any type\n  reference\n", op);
  return s;
}

}  // namespace kiln::engine
