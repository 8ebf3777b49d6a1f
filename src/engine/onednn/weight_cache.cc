#include "engine/onednn/weight_cache.h"

#include <cstring>

#include "engine/onednn/dnnl_context.h"
#include "support/error.h"
#include "support/mapped_file.h"

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

// Two 64-bit hashes of t's bytes (word by word, each multiplied in with a different odd
// constant and mixed), with their count: what a let-go source is matched by.
std::array<uint64_t, 2> fingerprint_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  const size_t n = t.nbytes();
  uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0xc2b2ae3d27d4eb4full + n;
  const auto mix = [](uint64_t h, uint64_t w, uint64_t k) {
    h ^= w * k;
    h = (h << 27) | (h >> 37);
    return h * 0x165667b19e3779f9ull + 0x27d4eb2f165667c5ull;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    a = mix(a, w, 0x87c37b91114253d5ull);
    b = mix(b, w ^ i, 0x4cf5ad432745937full);
  }
  for (; i < n; ++i) {
    a = mix(a, p[i], 0x87c37b91114253d5ull);
    b = mix(b, p[i] ^ i, 0x4cf5ad432745937full);
  }
  return {a, b};
}

}  // namespace

void WeightCache::let_go_of_unshared_sources() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Entry& e : entries_)
    if (e.packed && !e.dropped && e.source.defined() && e.source.nbytes() > kMatchedByBytes &&
        e.source.holders() == 1) {
      e.fingerprint = fingerprint_of(e.source);
      e.source = Tensor();
    }
}

dnnl::memory WeightCache::get(const Tensor& t, const dnnl::memory::desc& from,
                              const dnnl::memory::desc& to) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<std::array<uint64_t, 2>> print;  // t's, computed when an entry needs it
  for (const Entry& e : entries_) {
    if (e.dropped || e.from != from || e.to != to) continue;
    if (e.fingerprint) {
      if (!print) print = fingerprint_of(t);
      if (*print == *e.fingerprint) return e.mem;
    } else if (e.source.raw() == t.raw() || same_bytes(e.source, t)) {
      return e.mem;
    }
  }
  const auto& eng = dnnl_engine();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->source.raw() != t.raw() || it->bytes.size() != to.get_size() ||
        it->from != desc_bytes(from) || it->to != desc_bytes(to))
      continue;
    dnnl::memory mem(to, eng, const_cast<uint8_t*>(it->bytes.data()));
    entries_.push_back({t, from, to, mem, /*packed=*/true});
    owners_.push_back(std::move(it->owner));
    bytes_ += to.get_size();
    ++taken_;
    pending_.erase(it);
    return mem;
  }
  // Already in the layout asked for: the primitive reads the tensor itself (the entry keeps it).
  if (from == to) {
    dnnl::memory mem(to, eng, const_cast<void*>(t.raw()));
    entries_.push_back({t, from, to, mem, /*packed=*/false});
    return mem;
  }
  ++reordered_;
  dnnl::memory src(from, eng, const_cast<void*>(t.raw()));
  dnnl::memory dst(to, eng);
  dnnl::reorder(src, dst).execute(dnnl_stream(), src, dst);
  dnnl_stream().wait();
  entries_.push_back({t, from, to, dst, /*packed=*/true});
  bytes_ += to.get_size();
  // A weight viewed in a mapped file (external data, an artifact's weights) leaves this process's
  // RSS once packed: whoever reads the plain form again faults it in from the file.
  release_mapped_pages(t.raw(), t.nbytes());
  return dst;
}

std::shared_ptr<const void> WeightCache::native_entry(const Tensor& t, const std::string& kind,
                                                      const std::function<NativeMade()>& make) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Native& e : natives_)
    if (!e.dropped && e.kind == kind && (e.source.raw() == t.raw() || same_bytes(e.source, t))) return e.made.data;
  natives_.push_back({t, kind, make()});
  bytes_ += natives_.back().made.bytes;
  return natives_.back().made.data;
}

std::shared_ptr<const void> WeightCache::derived_entry(const Value* w, const std::string& kind,
                                                       const std::function<std::shared_ptr<const void>()>& make) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const void>& made = derived_[{w, kind}];
  if (!made) made = make();
  return made;
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
    if (e.packed) out.push_back({e.source.raw(), desc_bytes(e.from), desc_bytes(e.to),
                   {static_cast<const uint8_t*>(e.mem.get_data_handle()), e.to.get_size()}});
  return out;
}

namespace {

// Reordering the packed copy (laid out by `to`) back into `from` gives t again, exactly: `from`
// lays out t's bytes, each element once, and `to` holds the same values in a plain blocked layout
// (not Winograd's transformed weights, not converted to another type such as bf16, no int8
// compensation appended: oneDNN reorders none of those back, or not exactly).
bool reads_back(const dnnl::memory::desc& from, const dnnl::memory::desc& to, const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : from.dims()) n *= d;
  return n == t.numel() && from.get_size() == t.nbytes() && to.data.format_kind == dnnl_blocked &&
         to.data.extra.flags == 0 && to.data_type() == from.data_type();
}

}  // namespace

bool WeightCache::drop_source(const Tensor& t, const void* tag) {
  std::lock_guard<std::mutex> lock(mu_);
  bool readable = false;
  for (const Entry& e : entries_) {
    if (e.dropped || e.source.raw() != t.raw()) continue;
    if (!e.packed) return false;
    readable = readable || reads_back(e.from, e.to, t);
  }
  for (const Native& e : natives_)
    if (!e.dropped && e.source.raw() == t.raw()) readable = true;  // every packing can unpack
  if (!readable) return false;
  for (Entry& e : entries_) {
    if (e.dropped || e.source.raw() != t.raw()) continue;
    e.source = Tensor();
    e.dropped = tag;
  }
  for (Native& e : natives_) {
    if (e.dropped || e.source.raw() != t.raw()) continue;
    e.source = Tensor();
    e.dropped = tag;
  }
  return true;
}

std::optional<dnnl::memory> WeightCache::find_dropped(const void* tag, const dnnl::memory::desc& from,
                                                      const dnnl::memory::desc& to) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_)
    if (e.dropped == tag && e.from == from && e.to == to) return e.mem;
  return std::nullopt;
}

Tensor WeightCache::restore_source(const void* tag, DataType dtype, const std::vector<int64_t>& dims) {
  std::lock_guard<std::mutex> lock(mu_);
  Tensor plain = Tensor::uninitialized(dtype, dims);
  bool made = false;
  for (Entry& e : entries_) {
    if (e.dropped != tag) continue;
    if (!made && reads_back(e.from, e.to, plain)) {
      dnnl::memory dst(e.from, dnnl_engine(), plain.raw());
      dnnl::memory src = e.mem;
      dnnl::reorder(src, dst).execute(dnnl_stream(), src, dst);
      dnnl_stream().wait();
      made = true;
    }
    e.source = plain;
    e.dropped = nullptr;
  }
  for (Native& e : natives_) {
    if (e.dropped != tag) continue;
    if (!made) e.made.unpack(plain.raw());
    made = true;
    e.source = plain;
    e.dropped = nullptr;
  }
  KILN_ASSERT(made, "a dropped weight has no packed copy to be read back from");
  ++restored_;
  return plain;
}

}  // namespace kiln::engine
