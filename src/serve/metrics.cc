#include "serve/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace kiln::serve {

namespace {

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

std::string labels_text(const Labels& labels, const std::string& extra_name = "", const std::string& extra = "") {
  if (labels.empty() && extra_name.empty()) return "";
  std::string s = "{";
  for (const auto& [k, v] : labels) s += (s.size() > 1 ? "," : "") + k + "=\"" + escape_label_value(v) + "\"";
  if (!extra_name.empty()) s += (s.size() > 1 ? "," : "") + extra_name + "=\"" + extra + "\"";
  return s + "}";
}

const char* type_name(Metrics::Type t) {
  switch (t) {
    case Metrics::Type::kCounter: return "counter";
    case Metrics::Type::kGauge: return "gauge";
    case Metrics::Type::kHistogram: return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string escape_label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void Metrics::declare(const std::string& name, Type type, const std::string& help, std::vector<double> buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  Family& f = families_[name];
  f.type = type;
  f.help = help;
  std::sort(buckets.begin(), buckets.end());
  f.bounds = std::move(buckets);
}

Metrics::Family& Metrics::family(const std::string& name, Type type) {
  auto it = families_.find(name);
  if (it == families_.end() || it->second.type != type)
    fail(ErrorKind::kInternal, "metric {} is not declared as a {}", name, type_name(type));
  return it->second;
}

void Metrics::add(const std::string& counter, const Labels& labels, double by) {
  std::lock_guard<std::mutex> lock(mu_);
  family(counter, Type::kCounter).series[labels].value += by;
}

void Metrics::set(const std::string& gauge, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  family(gauge, Type::kGauge).series[labels].value = value;
}

void Metrics::observe(const std::string& histogram, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  Family& f = family(histogram, Type::kHistogram);
  Series& s = f.series[labels];
  if (s.buckets.empty()) s.buckets.assign(f.bounds.size() + 1, 0);  // the last: above every bound
  const size_t b = std::lower_bound(f.bounds.begin(), f.bounds.end(), value) - f.bounds.begin();
  ++s.buckets[b];
  ++s.count;
  s.value += value;
}

void Metrics::collect(const std::string& gauge, std::function<std::vector<std::pair<Labels, double>>()> collector) {
  std::lock_guard<std::mutex> lock(mu_);
  family(gauge, Type::kGauge).collector = std::move(collector);
}

double Metrics::value(const std::string& name, const Labels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto s = f->second.series.find(labels);
  if (s == f->second.series.end()) return 0;
  return f->second.type == Type::kHistogram ? static_cast<double>(s->second.count) : s->second.value;
}

std::string Metrics::render() const {
  // Collectors first, outside the lock (they may take other locks, or read a database).
  std::map<std::string, std::vector<std::pair<Labels, double>>> collected;
  {
    std::vector<std::pair<std::string, std::function<std::vector<std::pair<Labels, double>>()>>> collectors;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [name, f] : families_)
        if (f.collector) collectors.emplace_back(name, f.collector);
    }
    for (const auto& [name, c] : collectors) collected[name] = c();
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + f.help + "\n";
    out += "# TYPE " + name + " " + type_name(f.type) + "\n";
    if (auto c = collected.find(name); c != collected.end()) {
      for (const auto& [labels, v] : c->second) out += name + labels_text(labels) + " " + number(v) + "\n";
      continue;
    }
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::kHistogram) {
        out += name + labels_text(labels) + " " + number(s.value) + "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t b = 0; b < f.bounds.size(); ++b) {
        cumulative += s.buckets[b];
        out += name + "_bucket" + labels_text(labels, "le", number(f.bounds[b])) + " " + std::to_string(cumulative) + "\n";
      }
      out += name + "_bucket" + labels_text(labels, "le", "+Inf") + " " + std::to_string(s.count) + "\n";
      out += name + "_sum" + labels_text(labels) + " " + number(s.value) + "\n";
      out += name + "_count" + labels_text(labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

std::string route_label(const std::string& path) {
  static const std::map<std::string, std::string> parameter_after = {
      {"models", "{name}"}, {"versions", "{version}"}, {"aliases", "{alias}"},
      {"jobs", "{id}"},     {"artifacts", "{target}"}, {"reports", "{report}"}};
  std::string out;
  std::string previous;
  size_t start = 1;
  if (path.empty() || path[0] != '/') return "other";
  int segments = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string seg = path.substr(start, end - start);
    if (++segments > 8) return "other";
    auto p = parameter_after.find(previous);
    if (p != parameter_after.end() && !seg.empty()) {
      out += "/" + p->second;
      previous.clear();
    } else {
      const bool word = seg.size() <= 32 && std::all_of(seg.begin(), seg.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
      });
      if (!word) return "other";
      out += "/" + seg;
      previous = seg;
    }
    start = end + 1;
  }
  return out;
}

}  // namespace kiln::serve
