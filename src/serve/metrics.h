// kiln serve's metrics, scraped at GET /metrics in Prometheus' text exposition format (version
// 0.0.4): counters, gauges and histograms by name and labels. Families are declared once (name,
// type, help, a histogram's buckets); series are made on their first update. Thread-safe.
// Gauges that are read from elsewhere at scrape time (a queue's depth) are collectors, called
// by render().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kiln::serve {

using Labels = std::vector<std::pair<std::string, std::string>>;  // in the order written

class Metrics {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  void declare(const std::string& name, Type type, const std::string& help, std::vector<double> buckets = {});
  void add(const std::string& counter, const Labels& labels, double by = 1);
  void set(const std::string& gauge, const Labels& labels, double value);
  void observe(const std::string& histogram, const Labels& labels, double value);
  // Called by render(): the gauge's series now (replacing what set() gave).
  void collect(const std::string& gauge, std::function<std::vector<std::pair<Labels, double>>()> collector);
  // The value of a counter or gauge series, or a histogram's count (tests, collectors); 0 if none.
  double value(const std::string& name, const Labels& labels) const;

  std::string render() const;

 private:
  struct Series {
    double value = 0;               // a counter's or gauge's value; a histogram's sum
    uint64_t count = 0;             // a histogram's observations
    std::vector<uint64_t> buckets;  // a histogram's count per bucket (not cumulative)
  };
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    std::vector<double> bounds;
    std::map<Labels, Series> series;
    std::function<std::vector<std::pair<Labels, double>>()> collector;
  };
  Family& family(const std::string& name, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// Prometheus' escaping of a label value (backslash, double quote, newline).
std::string escape_label_value(const std::string& v);

// The route of a request path for the http metrics' `route` label: the values in a path (model
// names, versions, job ids, targets, aliases) replaced by their parameter's name, so that the
// label has a bounded set of values: "/v1/models/{name}/versions/{version}/compile".
std::string route_label(const std::string& path);

}  // namespace kiln::serve
