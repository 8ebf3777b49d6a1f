#include "engine/plan.h"

#include <algorithm>

#include "engine/memory_plan.h"
#include "engine/threads.h"
#include "support/error.h"

namespace kiln::engine {

size_t SlotInfo::bytes() const {
  if (md) return md->get_size();
  if (!dims) return 0;
  size_t n = dtype_size(dtype);
  for (int64_t d : *dims) n *= static_cast<size_t>(d);
  return n;
}

Plan::Plan() = default;
Plan::~Plan() = default;

int Plan::add_slot(SlotInfo s) {
  slots.push_back(std::move(s));
  return static_cast<int>(slots.size()) - 1;
}

void Plan::finalize() {
  MemoryPlan mp = plan_memory(slots, steps, output_slots);
  arena_bytes_ = mp.arena_bytes;
  parallel_ = std::any_of(steps.begin(), steps.end(), [](const auto& st) { return st->threads != 1; });
  scratch_offset_ = (arena_bytes_ + 63) / 64 * 64;
  offset_ = std::move(mp.offset);
  release_after_ = std::move(mp.release_after);
  fresh_before_ = std::move(mp.fresh_before);
  placed_ = std::move(mp.placed);
  state_.slots.assign(slots.size(), RtValue{});
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].source == SlotInfo::Source::kConstant) state_.slots[s] = slots[s].constant;
  std::vector<bool> fresh(slots.size(), false);
  for (const auto& list : fresh_before_)
    for (int s : list) fresh[s] = true;
  for (const auto& st : steps)
    for (const StepOutput& o : st->outputs)
      KILN_ASSERT(o.memory != OutputMemory::kPlanned || offset_[o.slot] >= 0 || fresh[o.slot],
                  "a planned output without a buffer");
}

void Plan::bind(const std::shared_ptr<void>& buffer) {
  if (arena_ == buffer) return;
  arena_ = buffer;
  char* base = static_cast<char*>(arena_.get());
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].source != SlotInfo::Source::kConstant && offset_[s] >= 0)
      state_.slots[s] = base ? RtValue::of(Tensor::view(slots[s].dtype, *slots[s].dims, arena_, base + offset_[s]))
                             : RtValue{};
  scratchpad->data = base && scratchpad->bytes ? base + scratch_offset_ : nullptr;
}

void Plan::unbind() { bind(nullptr); }

std::string Plan::describe() const {
  auto slot = [&](int s) {
    if (s < 0) return std::string("-");
    const SlotInfo& i = slots[s];
    std::string layout;
    if (i.md) {
      layout = " strides";
      for (int k = 0; k < i.md->data.ndims; ++k)
        layout += (k ? "," : ":") + std::to_string(i.md->data.format_desc.blocking.strides[k]);
    }
    return fmt::format("#{} {}{}{}", s, i.name, i.dims ? dims_to_string(*i.dims) : "[?]", layout);
  };
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step* st = steps[i].get();
    out += fmt::format("{} {}:", st->kernel, st->node ? st->node->name : "");
    std::vector<int> placed = i < placed_.size() ? placed_[i] : std::vector<int>{};
    for (int s : st->inputs) {
      out += " " + slot(s);
      if (const auto it = std::find(placed.begin(), placed.end(), s); it != placed.end()) {
        out += " (in place)";
        placed.erase(it);  // a piece given twice is in place once
      }
    }
    out += " ->";
    for (const StepOutput& o : st->outputs)
      out += " " + slot(o.slot) + (o.share >= 0 ? fmt::format(" (shares #{})", o.share) : "");
    if (st->threads == 1) out += " [1 thread]";  // too small for a parallel region to pay
    out += "\n";
    if (const std::string d = st->detail(); !d.empty()) out += "  " + d + "\n";
  }
  for (const PlanChoice& c : choices) {
    std::string times;
    for (const auto& [name, us] : c.choice.micros) times += fmt::format("{}{} {:.0f} us", times.empty() ? "" : ", ", name, us);
    out += fmt::format("choice {}: {} ({}{}{})\n", c.key, c.choice.pick, choice_source_name(c.source),
                       times.empty() ? "" : ": ", times);
  }
  return out;
}

bool Plan::in_arena(const Tensor& t) const {
  const char* p = static_cast<const char*>(t.raw());
  const char* base = static_cast<const char*>(arena_.get());
  return p >= base && p < base + arena_bytes_;
}

void Plan::run_step(size_t i, RunObserver* observer) {
  Step& st = *steps[i];
  const int64_t start = observer ? steady_now_ns() : 0;
  try {
    if (st.threads > 0) {
      ThreadScope scope(st.threads);
      st.run(state_);
    } else {
      st.run(state_);
    }
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (!st.node || msg.find(st.node->where()) != std::string::npos) throw;
    throw Error(e.kind(), st.node->where() + msg);
  } catch (const dnnl::error& e) {
    fail(ErrorKind::kRuntime, "{}{} failed: {}", st.node ? st.node->where() : "", st.kernel,
         e.what());
  }
  // A value of the step's own that is a view into the arena (a reference kernel passing its input
  // through, an If's branch returning a view of an outer value) would outlive the bytes it views,
  // which the memory plan hands to later steps: it gets its own copy.
  for (const StepOutput& o : st.outputs) {
    RtValue& v = state_.slots[o.slot];
    if (o.memory == OutputMemory::kSelf && v.is_tensor() && v.tensor.defined() && in_arena(v.tensor))
      v = RtValue::of(v.tensor.clone());
  }
  if (observer) {
    std::vector<const RtValue*> ins;
    for (int s : st.inputs) ins.push_back(s >= 0 ? &state_.slots[s] : nullptr);
    std::vector<RtValue> outs;
    for (const StepOutput& o : st.outputs) outs.push_back(state_.slots[o.slot]);
    observer->on_node({.node = st.node, .kernel = st.kernel, .depth = 0, .inputs = ins,
                       .outputs = outs, .start_ns = start, .end_ns = steady_now_ns()});
  }
}

std::vector<RtValue> Plan::run(const std::vector<RtValue>& feeds, RunObserver* observer, RunMemory& memory) {
  bind(memory.at_least(run_bytes()));
  memory.start_run();
  state_.observer = observer;
  for (size_t i = 0; i < input_slots.size() && i < feeds.size(); ++i)
    if (input_slots[i] >= 0) state_.slots[input_slots[i]] = feeds[i];
  for (size_t i = 0; i < steps.size(); ++i) {
    // (A planned output is written whole by its step, as arena buffers are: nothing to clear.)
    for (int s : fresh_before_[i])
      state_.slots[s] = RtValue::of(memory.output_tensor(slots[s].dtype, *slots[s].dims));
    run_step(i, observer);
    for (int s : release_after_[i]) state_.slots[s] = RtValue{};
  }
  std::vector<RtValue> results;
  results.reserve(output_slots.size());
  for (int s : output_slots) {
    const RtValue& v = state_.slots[s];
    // Arena bytes are overwritten by the next run: the caller gets its own copy.
    results.push_back(v.is_tensor() && in_arena(v.tensor) ? RtValue::of(v.tensor.clone()) : v);
  }
  for (int s : input_slots)
    if (s >= 0) state_.slots[s] = RtValue{};
  for (int s : output_slots)
    if (slots[s].source == SlotInfo::Source::kStep && !in_arena(state_.slots[s].tensor))
      state_.slots[s] = RtValue{};
  state_.observer = nullptr;
  return results;
}

}  // namespace kiln::engine
