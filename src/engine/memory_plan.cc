#include "engine/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "support/error.h"

namespace kiln::engine {

namespace {

constexpr size_t kAlign = 64;

size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Buffer {
  size_t bytes = 0;
  int first = 0, last = 0;  // steps: written first / read last
  int64_t offset = -1;
};

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// Greedy placement, largest first: each buffer goes at the lowest offset where it overlaps no
// placed buffer that is alive at the same time.
size_t place(std::vector<Buffer>& bufs) {
  std::vector<size_t> order(bufs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bufs[a].bytes > bufs[b].bytes; });
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t i : order) {
    Buffer& b = bufs[i];
    std::vector<std::pair<size_t, size_t>> busy;  // [start, end) of live neighbours
    for (size_t j : placed) {
      const Buffer& o = bufs[j];
      if (o.last < b.first || b.last < o.first) continue;
      busy.emplace_back(static_cast<size_t>(o.offset), static_cast<size_t>(o.offset) + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    size_t at = 0;
    for (const auto& [s, e] : busy) {
      if (at + b.bytes <= s) break;
      at = std::max(at, aligned(e));
    }
    b.offset = static_cast<int64_t>(at);
    total = std::max(total, at + b.bytes);
    placed.push_back(i);
  }
  return total;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<SlotInfo>& slots,
                       const std::vector<std::unique_ptr<Step>>& steps,
                       const std::vector<int>& outputs) {
  const int ns = static_cast<int>(slots.size());
  const int end = static_cast<int>(steps.size());  // graph outputs stay alive past the last step
  std::vector<int> parent(ns);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<int> first(ns, -1), last(ns, -1);
  std::vector<const StepOutput*> made_by(ns, nullptr);
  for (int i = 0; i < end; ++i) {
    for (int s : steps[i]->inputs)
      if (s >= 0) last[s] = std::max(last[s], i);
    for (int s : steps[i]->also_reads) last[s] = std::max(last[s], i);
    for (const StepOutput& o : steps[i]->outputs) {
      KILN_ASSERT(!made_by[o.slot], "a slot written by two steps");
      made_by[o.slot] = &o;
      first[o.slot] = i;
      last[o.slot] = std::max(last[o.slot], i);
      if (o.share >= 0) parent[find_root(parent, o.slot)] = find_root(parent, o.share);
    }
  }
  for (int s : outputs)
    if (s >= 0) last[s] = end;
  MemoryPlan mp;
  mp.fresh_before.assign(steps.size(), {});
  std::vector<bool> fresh(ns, false);
  for (int s : outputs) {
    const StepOutput* o = s >= 0 ? made_by[s] : nullptr;
    if (!o || o->memory != OutputMemory::kPlanned || o->share >= 0 || fresh[s]) continue;
    fresh[s] = true;
    mp.fresh_before[first[s]].push_back(s);
  }

  // One buffer per set of slots sharing memory; planned when every producer in it writes into a
  // planned buffer (a view of a kernel's own tensor or of an input needs no arena bytes).
  std::vector<bool> plannable(ns, true);
  std::vector<int> members(ns, 0);
  for (int s = 0; s < ns; ++s) {
    const int r = find_root(parent, s);
    ++members[r];
    const StepOutput* o = made_by[s];
    const bool planned =
        o && o->memory != OutputMemory::kSelf && slots[s].source == SlotInfo::Source::kStep;
    if (!planned || fresh[s]) plannable[r] = false;
  }
  // Inputs placed inside an output's buffer (PlacedInput): a slot alone in its set, written by a
  // step into a fresh planned buffer and read last by the placing step, joins the output's set at
  // its offset. Every share above is at offset 0, so `within` lies at its root's offset 0 too.
  std::vector<size_t> at(ns, 0);  // byte offset in the set's buffer
  mp.placed.assign(steps.size(), {});
  for (int i = 0; i < end; ++i) {
    for (const PlacedInput& h : steps[i]->placed_inputs) {
      const int p = h.slot, r = find_root(parent, h.within);
      const StepOutput* o = made_by[p];
      if (!o || o->memory != OutputMemory::kPlanned || o->share >= 0 || members[p] != 1 ||
          parent[p] != p || last[p] != i || r == p || !plannable[p] || !plannable[r] ||
          at[h.within] != 0 || h.offset + slots[p].bytes() > slots[h.within].bytes())
        continue;
      parent[p] = r;
      at[p] = h.offset;
      ++members[r];
      mp.placed[i].push_back(p);
    }
  }
  std::vector<int> buffer_of(ns, -1);
  std::vector<Buffer> bufs;
  mp.offset.assign(ns, -1);
  for (int s = 0; s < ns; ++s) {
    const int r = find_root(parent, s);
    if (!plannable[r] || !made_by[s] || made_by[s]->memory != OutputMemory::kPlanned) continue;
    if (buffer_of[r] < 0) {
      buffer_of[r] = static_cast<int>(bufs.size());
      bufs.push_back({0, first[s], last[s]});
    }
    Buffer& b = bufs[buffer_of[r]];
    KILN_ASSERT(slots[s].dims.has_value(), "a planned buffer of unknown size");
    b.bytes = std::max(b.bytes, aligned(at[s] + std::max<size_t>(slots[s].bytes(), 1)));
  }
  // Lifetimes span every slot of the set, views included.
  for (int s = 0; s < ns; ++s) {
    const int r = find_root(parent, s);
    if (buffer_of[r] < 0 || first[s] < 0) continue;
    Buffer& b = bufs[buffer_of[r]];
    b.first = std::min(b.first, first[s]);
    b.last = std::max(b.last, last[s]);
  }
  mp.arena_bytes = place(bufs);
  for (int s = 0; s < ns; ++s) {
    const int r = find_root(parent, s);
    if (buffer_of[r] >= 0 && made_by[s] && made_by[s]->memory == OutputMemory::kPlanned)
      mp.offset[s] = bufs[buffer_of[r]].offset + static_cast<int64_t>(at[s]);
  }
  // Values steps made for themselves (and views) are dropped after their last reader.
  mp.release_after.assign(steps.size(), {});
  for (int s = 0; s < ns; ++s) {
    if (!made_by[s] || mp.offset[s] >= 0 || last[s] >= end) continue;
    mp.release_after[std::max(first[s], last[s])].push_back(s);
  }
  return mp;
}

}  // namespace kiln::engine
