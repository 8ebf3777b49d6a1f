#include "serve/yaml_json.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <yaml-cpp/yaml.h>

#include "support/error.h"

namespace kiln::serve {

using json = nlohmann::json;

namespace {

constexpr const char* kStrTag = "tag:yaml.org,2002:str";
constexpr const char* kIntTag = "tag:yaml.org,2002:int";
constexpr const char* kFloatTag = "tag:yaml.org,2002:float";
constexpr const char* kBoolTag = "tag:yaml.org,2002:bool";
constexpr const char* kNullTag = "tag:yaml.org,2002:null";
constexpr const char* kSeqTag = "tag:yaml.org,2002:seq";
constexpr const char* kMapTag = "tag:yaml.org,2002:map";

bool is_digits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                               : c >= '0' && c < static_cast<char>('0' + base);
    if (!ok) return false;
  }
  return true;
}

// YAML 1.2 core schema's int: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+.
bool is_int(std::string_view s, int* base, std::string_view* digits) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
    *base = s[1] == 'x' ? 16 : 8;
    *digits = s.substr(2);
    return is_digits(*digits, *base);
  }
  *base = 10;
  *digits = s;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return is_digits(s, 10);
}

// YAML 1.2 core schema's float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_float(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

bool is_inf_or_nan(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s == ".inf" || s == ".Inf" || s == ".INF" || s == ".nan" || s == ".NaN" || s == ".NAN";
}

bool is_bool(std::string_view s, bool* value) {
  for (const char* t : {"true", "True", "TRUE"})
    if (s == t) return *value = true, true;
  for (const char* f : {"false", "False", "FALSE"})
    if (s == f) return *value = false, true;
  return false;
}

class Converter {
 public:
  explicit Converter(const std::string& what) : what_(what) {}

  json convert(const YAML::Node& n, int depth) {
    if (++values_ > kMaxYamlValues)
      fail_at(n, "more than {} values (aliases expanded): refused, not expanded", kMaxYamlValues);
    if (depth > kMaxYamlDepth) fail_at(n, "nested deeper than {} levels", kMaxYamlDepth);
    const std::string& tag = n.Tag();
    switch (n.Type()) {
      case YAML::NodeType::Null:
        return json(nullptr);
      case YAML::NodeType::Scalar:
        return scalar(n, tag);
      case YAML::NodeType::Sequence: {
        if (tag != "?" && tag != "!" && tag != kSeqTag) fail_at(n, "tag '{}' on a sequence is not read", tag);
        json out = json::array();
        for (const YAML::Node& item : n) out.push_back(convert(item, depth + 1));
        return out;
      }
      case YAML::NodeType::Map: {
        if (tag != "?" && tag != "!" && tag != kMapTag) fail_at(n, "tag '{}' on a mapping is not read", tag);
        json out = json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar()) fail_at(kv.first, "a mapping key must be a plain string");
          const std::string& key = kv.first.Scalar();
          if (out.contains(key)) fail_at(kv.first, "key '{}' appears twice", key);
          out[key] = convert(kv.second, depth + 1);
        }
        return out;
      }
      case YAML::NodeType::Undefined:
        break;
    }
    fail_at(n, "a value yaml-cpp could not read");
  }

 private:
  json scalar(const YAML::Node& n, const std::string& tag) {
    const std::string& s = n.Scalar();
    if (tag == "!" || tag == kStrTag) return json(s);  // quoted, or !!str
    const bool plain = tag == "?";
    if (!plain && tag != kIntTag && tag != kFloatTag && tag != kBoolTag && tag != kNullTag)
      fail_at(n, "tag '{}' is not read (kiln reads YAML's core schema: strings, numbers, booleans, null)", tag);
    if ((plain || tag == kNullTag) && (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"))
      return json(nullptr);
    bool b = false;
    if ((plain || tag == kBoolTag) && is_bool(s, &b)) return json(b);
    int base = 10;
    std::string_view digits;
    if ((plain || tag == kIntTag) && is_int(s, &base, &digits)) {
      if (digits.front() == '+') digits.remove_prefix(1);
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
      if (ec != std::errc() || end != digits.data() + digits.size())
        fail_at(n, "integer '{}' does not fit in 64 bits", s);
      return json(v);
    }
    if ((plain || tag == kFloatTag) && is_inf_or_nan(s)) fail_at(n, "'{}': JSON has no infinities or NaN", s);
    if ((plain || tag == kFloatTag) && is_float(s)) {
      const double v = std::strtod(s.c_str(), nullptr);
      if (!std::isfinite(v)) fail_at(n, "number '{}' is out of range", s);
      return json(v);
    }
    if (!plain) fail_at(n, "'{}' is not a value of its tag '{}'", s, tag);
    return json(s);
  }

  template <typename... Args>
  [[noreturn]] void fail_at(const YAML::Node& n, fmt::format_string<Args...> f, Args&&... args) {
    const YAML::Mark m = n.Mark();
    fail(ErrorKind::kBadInput, "'{}' line {}, column {}: {}", what_, m.line + 1, m.column + 1,
         fmt::format(f, std::forward<Args>(args)...));
  }

  const std::string& what_;
  int values_ = 0;
};

// The 1-based line of a document marker ("---" or "..." at a line's start) after the first
// document's content began, or 0: such a line starts or ends a document, never a value.
int second_document_line(std::string_view text) {
  bool content = false;
  int line = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view l = text.substr(at, end - at);
    ++line;
    at = end + 1;
    const bool marker = (l.substr(0, 3) == "---" || l.substr(0, 3) == "...") &&
                        (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (marker && content) return line;
    const size_t first = l.find_first_not_of(" \t\r");
    if (!marker && first != std::string_view::npos && l[first] != '#' && l[first] != '%') content = true;
    if (marker && l.substr(0, 3) == "---" && l.find_first_not_of(" \t\r", 3) != std::string_view::npos) content = true;
  }
  return 0;
}

}  // namespace

json yaml_to_json(std::string_view text, const std::string& what) {
  const int second = second_document_line(text);
  KILN_CHECK(second == 0, ErrorKind::kBadInput, "'{}' line {}: a second YAML document: one is read", what, second);
  YAML::Node doc;
  try {
    // Load, not LoadAll: yaml-cpp 0.7's LoadAll allocates without end on a stray ',' at the top
    // (found by YamlJson.RandomEditsEndInAValueOrAnError); documents are counted above instead.
    doc = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    fail(ErrorKind::kBadInput, "'{}' line {}, column {}: not YAML: {}", what, e.mark.line + 1, e.mark.column + 1,
         e.msg);
  }
  if (!doc.IsDefined()) return json(nullptr);
  try {
    return Converter(what).convert(doc, 0);
  } catch (const YAML::Exception& e) {  // yaml-cpp's accessors on a damaged node
    fail(ErrorKind::kBadInput, "'{}' line {}, column {}: {}", what, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
}

}  // namespace kiln::serve
