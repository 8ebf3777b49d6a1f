#include "runtime/random_inputs.h"

#include <algorithm>
#include <random>

#include "support/error.h"

namespace kiln {

namespace {

// The number of valid positions an integer value indexes into, over all its uses (0: none known).
int64_t index_bound(const Value& v) {
  int64_t bound = 0;
  auto narrow = [&](int64_t n) { bound = bound == 0 ? n : std::min(bound, n); };
  for (const Use& u : v.uses) {
    const Node& n = *u.node;
    const bool gather = n.op_type == "Gather" || n.op_type == "GatherElements";
    if (gather && u.input_index == 1 && n.inputs[0]) {
      const TypeInfo& data = n.inputs[0]->type;
      const Attribute* a = n.attr("axis");
      if (!data.shape || data.shape->empty()) continue;
      int64_t axis = a ? a->i : 0;
      const int64_t rank = static_cast<int64_t>(data.shape->size());
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) continue;
      const Dim& d = (*data.shape)[axis];
      if (d.is_known() && d.value() > 0) narrow(d.value());
    }
  }
  return bound;
}

}  // namespace

std::vector<int64_t> concrete_dims(const Value& v, const RandomInputOptions& opts) {
  const TypeInfo& t = v.type;
  KILN_CHECK(t.kind == TypeInfo::Kind::kTensor, ErrorKind::kBadInput,
             "input '{}': cannot make up a value of this type; give input files", v.name);
  KILN_CHECK(t.shape.has_value(), ErrorKind::kBadInput,
             "input '{}' has no known shape; give input files", v.name);
  std::vector<int64_t> dims;
  for (const Dim& d : *t.shape) {
    if (d.is_known()) {
      dims.push_back(d.value());
    } else if (d.is_symbolic()) {
      auto it = opts.dims.find(d.to_string());
      dims.push_back(it != opts.dims.end() ? it->second : opts.default_dim);
    } else {
      dims.push_back(opts.default_dim);
    }
  }
  return dims;
}

std::vector<RtValue> random_inputs(const std::vector<const Value*>& inputs,
                                   const RandomInputOptions& opts) {
  std::mt19937_64 rng(opts.seed);
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };  // [0, 1)
  std::vector<RtValue> feeds;
  for (const Value* v : inputs) {
    Tensor t(v->type.elem, concrete_dims(*v, opts));
    const DataType dt = t.dtype();
    KILN_CHECK(dt != DataType::kString && dt != DataType::kUndefined, ErrorKind::kBadInput,
               "input '{}': cannot make up {} values; give input files", v->name, dtype_name(dt));
    const int64_t indexed = dt == DataType::kBool ? 0 : index_bound(*v);
    const int64_t bound = dt == DataType::kBool ? 2 : std::max<int64_t>(indexed, 2);
    const bool ones = opts.masks_of_ones && is_integer(dt) && indexed == 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (ones)
        t.set_f64(i, 1);
      else if (is_integer(dt) || dt == DataType::kBool)
        t.set_f64(i, static_cast<double>(static_cast<int64_t>(unit() * bound)));
      else
        t.set_f64(i, unit() * 2 - 1);
    }
    feeds.push_back(RtValue::of(std::move(t)));
  }
  return feeds;
}

}  // namespace kiln
