// TfIdfVectorizer and ImageDecoder.
#include <algorithm>
#include <map>

#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

namespace {

// ---------------------------------------------------------------------------------------------
// TfIdfVectorizer: counts the pool's n-grams (n in [min_gram_length, max_gram_length], items of an
// n-gram up to max_skip_count apart) in each row of X ([C] or [B, C]).

struct NgramPool {
  // key: the n-gram's items (as strings or integers), value: output column
  std::vector<std::map<std::vector<int64_t>, int64_t>> ints;      // by n - 1
  std::vector<std::map<std::vector<std::string>, int64_t>> strs;  // by n - 1
  int64_t width = 0;
};

NgramPool build_pool(const Node& n, bool strings) {
  const auto counts = attr_ints(n, "ngram_counts");
  const auto indexes = attr_ints(n, "ngram_indexes");
  const auto pool_i = attr_ints(n, "pool_int64s");
  const auto pool_s = attr_strings(n, "pool_strings");
  KILN_CHECK(!strings || !pool_s.empty() || pool_i.empty(), ErrorKind::kBadModel,
             "{}string input needs pool_strings", n.where());
  const int64_t pool_size = static_cast<int64_t>(strings ? pool_s.size() : pool_i.size());
  NgramPool p;
  for (int64_t ix : indexes) {
    KILN_CHECK(ix >= 0, ErrorKind::kBadModel, "{}negative ngram index", n.where());
    p.width = std::max(p.width, ix + 1);
  }
  p.ints.resize(counts.size());
  p.strs.resize(counts.size());
  size_t id = 0;
  for (size_t lvl = 0; lvl < counts.size(); ++lvl) {
    const int64_t gram = static_cast<int64_t>(lvl) + 1;
    const int64_t start = counts[lvl];
    const int64_t end = lvl + 1 < counts.size() ? counts[lvl + 1] : pool_size;
    KILN_CHECK(start >= 0 && start <= end && end <= pool_size && (end - start) % gram == 0,
               ErrorKind::kBadModel, "{}ngram_counts do not fit the pool", n.where());
    for (int64_t k = start; k < end; k += gram, ++id) {
      KILN_CHECK(id < indexes.size(), ErrorKind::kBadModel,
                 "{}ngram_indexes has fewer entries than the pool has n-grams", n.where());
      if (strings)
        p.strs[lvl][std::vector<std::string>(pool_s.begin() + k, pool_s.begin() + k + gram)] =
            indexes[id];
      else
        p.ints[lvl][std::vector<int64_t>(pool_i.begin() + k, pool_i.begin() + k + gram)] =
            indexes[id];
    }
  }
  return p;
}

void infer_tfidf(InferContext& ctx) {
  int64_t width = 0;
  for (int64_t ix : attr_ints(ctx.node(), "ngram_indexes")) width = std::max(width, ix + 1);
  const auto& s = ctx.input_shape(0);
  std::optional<Shape> out;
  if (s) {
    if (s->size() == 1)
      out = Shape{Dim(width)};
    else if (s->size() == 2)
      out = Shape{(*s)[0], Dim(width)};
    else
      ctx.fail_here("input must be [C] or [N, C]");
  }
  ctx.set_output(0, DataType::kFloat, out);
}

void run_tfidf(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const bool strings = x.dtype() == DataType::kString;
  if (!strings && x.dtype() != DataType::kInt32 && x.dtype() != DataType::kInt64)
    ctx.fail_here("input must be int32, int64 or string");
  if (x.rank() != 1 && x.rank() != 2) ctx.fail_here("input must be [C] or [N, C]");
  const NgramPool pool = build_pool(n, strings);
  const int64_t min_n = attr_int(n, "min_gram_length", 1);
  const int64_t max_n = attr_int(n, "max_gram_length", 1);
  const int64_t max_skip = attr_int(n, "max_skip_count", 0);
  const std::string mode = attr_string(n, "mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    ctx.fail_here(fmt::format("unknown mode '{}'", mode));
  if (min_n < 1 || max_n < min_n || max_skip < 0)
    ctx.fail_here("invalid gram lengths or skip count");
  const auto weights = attr_floats(n, "weights");
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t C = x.rank() == 2 ? x.dim(1) : x.dim(0);
  const int64_t W = pool.width;
  Tensor out(DataType::kFloat,
             x.rank() == 2 ? std::vector<int64_t>{rows, W} : std::vector<int64_t>{W});
  float* po = out.data<float>();
  std::vector<int64_t> ki;
  std::vector<std::string> ks;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> count(W, 0.0);
    for (int64_t gram = min_n; gram <= max_n && gram <= static_cast<int64_t>(pool.ints.size());
         ++gram) {
      // A stride of C or more fits no n-gram of two or more in a row: skips beyond C - 1 count
      // nothing (and a hostile max_skip_count of 2^63 - 1 would loop for ever).
      const int64_t skips = gram == 1 ? 0 : std::min<int64_t>(max_skip, std::max<int64_t>(C - 1, 0));
      for (int64_t skip = 0; skip <= skips; ++skip) {
        const int64_t stride = skip + 1;
        for (int64_t s = 0; s + (gram - 1) * stride < C; ++s) {
          if (strings) {
            ks.clear();
            for (int64_t g = 0; g < gram; ++g) ks.push_back(x.strings()[r * C + s + g * stride]);
            auto it = pool.strs[gram - 1].find(ks);
            if (it != pool.strs[gram - 1].end()) count[it->second] += 1;
          } else {
            ki.clear();
            for (int64_t g = 0; g < gram; ++g) ki.push_back(x.get_i64(r * C + s + g * stride));
            auto it = pool.ints[gram - 1].find(ki);
            if (it != pool.ints[gram - 1].end()) count[it->second] += 1;
          }
        }
      }
    }
    for (int64_t c = 0; c < W; ++c) {
      const double w = c < static_cast<int64_t>(weights.size()) ? weights[c] : 1.0;
      double v = count[c];
      if (mode == "IDF")
        v = v > 0 ? w : 0;
      else if (mode == "TFIDF")
        v *= w;
      po[r * W + c] = static_cast<float>(v);
    }
  }
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// ImageDecoder: kiln carries no image codecs. The op is known (so models load and shapes infer),
// running it is an unsupported-feature error.

void infer_image_decoder(InferContext& ctx) {
  const std::string fmt_ = attr_string(ctx.node(), "pixel_format", "RGB");
  int64_t channels = 3;
  if (fmt_ == "Grayscale")
    channels = 1;
  else if (fmt_ != "RGB" && fmt_ != "BGR")
    ctx.fail_here(fmt::format("unknown pixel_format '{}'", fmt_));
  ctx.set_output(0, DataType::kUInt8, Shape{Dim(), Dim(), Dim(channels)});
}

void run_image_decoder(KernelContext& ctx) {
  fail(ErrorKind::kUnsupported,
       "{}ImageDecoder is not supported: kiln has no image codecs (decode the image before "
       "running the model)",
       ctx.node().where());
}

}  // namespace

void register_misc_text_ops(OpRegistry& r) {
  r.add("", "TfIdfVectorizer")
      .versions(9)
      .inputs(1, 1)
      .attr("max_gram_length", AttrKind::kInt, true)
      .attr("max_skip_count", AttrKind::kInt, true)
      .attr("min_gram_length", AttrKind::kInt, true)
      .attr("mode", AttrKind::kString, true)
      .attr("ngram_counts", AttrKind::kInts, true)
      .attr("ngram_indexes", AttrKind::kInts, true)
      .attr("pool_int64s", AttrKind::kInts)
      .attr("pool_strings", AttrKind::kStrings)
      .attr("weights", AttrKind::kFloats)
      .shape(infer_tfidf)
      .run(run_tfidf);
  r.add("", "ImageDecoder")
      .versions(20)
      .inputs(1, 1)
      .attr("pixel_format", AttrKind::kString)
      .shape(infer_image_decoder)
      .run(run_image_decoder);
}

}  // namespace kiln
