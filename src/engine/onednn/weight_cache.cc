#include "engine/onednn/weight_cache.h"

#include <cstring>

#include "engine/onednn/dnnl_context.h"

namespace kiln::engine {

namespace {

// Constants a plan makes of the model's (a bias combined from a Gemm's C and an Add, scaled by
// beta) are new tensors in every plan: up to this size they are matched by their bytes, so a
// model run at many input shapes neither reorders nor keeps them once per plan.
constexpr size_t kMatchedByBytes = 1 << 16;

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() && a.nbytes() <= kMatchedByBytes &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace

dnnl::memory WeightCache::get(const Tensor& t, const dnnl::memory::desc& from,
                              const dnnl::memory::desc& to) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_)
    if ((e.source.raw() == t.raw() || same_bytes(e.source, t)) && e.from == from && e.to == to)
      return e.mem;
  const auto& eng = dnnl_engine();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->source.raw() != t.raw() || it->bytes.size() != to.get_size() ||
        it->from != desc_bytes(from) || it->to != desc_bytes(to))
      continue;
    dnnl::memory mem(to, eng, const_cast<uint8_t*>(it->bytes.data()));
    entries_.push_back({t, from, to, mem});
    owners_.push_back(std::move(it->owner));
    bytes_ += to.get_size();
    ++taken_;
    pending_.erase(it);
    return mem;
  }
  ++reordered_;
  dnnl::memory src(from, eng, const_cast<void*>(t.raw()));
  dnnl::memory dst(to, eng);
  dnnl::reorder(src, dst).execute(dnnl_stream(), src, dst);
  dnnl_stream().wait();
  entries_.push_back({t, from, to, dst});
  bytes_ += to.get_size();
  return dst;
}

}  // namespace kiln::engine

namespace kiln::engine {

std::string desc_bytes(const dnnl::memory::desc& d) {
  return std::string(reinterpret_cast<const char*>(&d.data), sizeof d.data);
}

void WeightCache::preload(const Tensor& source, std::string from_desc, std::string to_desc,
                          std::span<const uint8_t> packed, std::shared_ptr<void> owner) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.push_back({source, std::move(from_desc), std::move(to_desc), packed, std::move(owner)});
}

std::vector<WeightCache::Packed> WeightCache::packed() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Packed> out;
  for (const Entry& e : entries_)
    out.push_back({e.source.raw(), desc_bytes(e.from), desc_bytes(e.to),
                   {static_cast<const uint8_t*>(e.mem.get_data_handle()), e.to.get_size()}});
  return out;
}

}  // namespace kiln::engine
