#include "engine/random_inputs.h"

#include <algorithm>
#include <cctype>
#include <random>

#include "support/error.h"

namespace kiln::engine {

namespace {

bool name_has(std::string name, std::string_view part) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name.find(part) != std::string::npos;
}

Tensor random_tensor(const Value& v, const std::vector<int64_t>& dims, std::mt19937_64& rng) {
  const DataType t = v.type.elem;
  Tensor x(t, dims);
  const bool mask = name_has(v.name, "mask"), type = name_has(v.name, "type");
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int64_t> ids(0, 99), bit(0, 1);
  for (int64_t i = 0; i < x.numel(); ++i) {
    double value;
    if (mask) value = 1;
    else if (type) value = 0;
    else if (t == DataType::kBool) value = static_cast<double>(bit(rng));
    else if (is_integer(t)) value = static_cast<double>(ids(rng));
    else if (is_float(t)) value = normal(rng);
    else fail(ErrorKind::kUnsupported, "input '{}': cannot make random values of type {}", v.name, dtype_name(t));
    x.set_f64(i, value);
  }
  return x;
}

}  // namespace

std::vector<RtValue> random_inputs(const std::vector<const Value*>& inputs, uint64_t seed,
                                   const std::map<std::string, int64_t>& dims) {
  std::mt19937_64 rng(seed);
  std::vector<RtValue> out;
  for (const Value* v : inputs) {
    KILN_CHECK(v->type.is_tensor() && v->type.shape, ErrorKind::kUnsupported,
               "input '{}': random values need a tensor of known rank, not {}", v->name,
               v->type.to_string());
    std::vector<int64_t> d;
    for (const Dim& x : *v->type.shape) {
      if (x.is_known()) {
        d.push_back(x.value());
        continue;
      }
      auto it = dims.find(x.sym());
      d.push_back(it == dims.end() ? 1 : it->second);
    }
    out.push_back(RtValue::of(random_tensor(*v, d, rng)));
  }
  return out;
}

}  // namespace kiln::engine
