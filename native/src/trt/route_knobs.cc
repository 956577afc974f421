#include "route_knobs.h"

#include <cstddef>
#include <memory>
#include <utility>

namespace tbs::trt {
namespace {

// Just enough JSON for the database: objects, arrays, strings (escapes kept as written except
// \" and \\, which no knob name or pattern needs more of), and scalars skipped. Depth-limited so
// that a hostile file cannot exhaust the stack.
struct Value {
  enum class Kind { kString, kObject, kArray, kOther } kind = Kind::kOther;
  std::string text;
  std::vector<std::pair<std::string, Value>> members;
  std::vector<Value> items;
};

class Reader {
 public:
  explicit Reader(std::string const& s) : s_(s) {}
  bool document(Value& out) {
    if (!value(out, 0)) return false;
    space();
    return at_ == s_.size();
  }

 private:
  void space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  bool string(std::string& out) {
    if (at_ >= s_.size() || s_[at_] != '"') return false;
    for (++at_; at_ < s_.size(); ++at_) {
      char c = s_[at_];
      if (c == '"') {
        ++at_;
        return true;
      }
      if (c == '\\') {
        if (++at_ >= s_.size()) return false;
        char e = s_[at_];
        out += (e == '"' || e == '\\' || e == '/') ? std::string(1, e) : std::string("\\") + e;
        continue;
      }
      out += c;
    }
    return false;
  }
  bool value(Value& out, int depth) {
    if (depth > 64) return false;
    space();
    if (at_ >= s_.size()) return false;
    char c = s_[at_];
    if (c == '"') {
      out.kind = Value::Kind::kString;
      return string(out.text);
    }
    if (c == '{' || c == '[') {
      bool object = c == '{';
      out.kind = object ? Value::Kind::kObject : Value::Kind::kArray;
      ++at_;
      space();
      if (at_ < s_.size() && s_[at_] == (object ? '}' : ']')) {
        ++at_;
        return true;
      }
      for (;;) {
        std::string key;
        if (object) {
          space();
          if (!string(key)) return false;
          space();
          if (at_ >= s_.size() || s_[at_++] != ':') return false;
        }
        Value v;
        if (!value(v, depth + 1)) return false;
        if (object) {
          out.members.emplace_back(std::move(key), std::move(v));
        } else {
          out.items.push_back(std::move(v));
        }
        space();
        if (at_ >= s_.size()) return false;
        char d = s_[at_++];
        if (d == ',') continue;
        return d == (object ? '}' : ']');
      }
    }
    // A number, true, false or null: skipped up to the next delimiter.
    size_t start = at_;
    while (at_ < s_.size() && s_[at_] != ',' && s_[at_] != '}' && s_[at_] != ']' && s_[at_] != ' ' && s_[at_] != '\n' && s_[at_] != '\t' &&
           s_[at_] != '\r') {
      ++at_;
    }
    return at_ > start;
  }

  std::string const& s_;
  size_t at_ = 0;
};

Value const* member(Value const& object, char const* name) {
  for (auto const& m : object.members) {
    if (m.first == name) return &m.second;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> routeKnobPatterns(std::string const& json) {
  std::vector<std::string> out;
  Value root;
  if (!Reader(json).document(root) || root.kind != Value::Kind::kObject) return out;
  Value const* options = member(root, "tuner_options");
  if (options == nullptr || options->kind != Value::Kind::kArray) return out;
  for (auto const& entry : options->items) {
    if (entry.kind != Value::Kind::kObject) continue;
    Value const* option = member(entry, "option");
    if (option == nullptr || option->kind != Value::Kind::kString || option->text.empty()) continue;
    std::string knob = option->text[0] == '-' ? option->text : "-" + option->text;
    Value const* allowed = member(entry, "allowed_values");
    if (allowed == nullptr || allowed->kind != Value::Kind::kString || allowed->text.empty()) {
      out.push_back(knob);
    } else if (allowed->text.rfind(knob + "=", 0) == 0) {
      out.push_back(allowed->text);
    } else {
      out.push_back(knob + (allowed->text[0] == '=' ? "" : "=") + allowed->text);
    }
  }
  return out;
}

}  // namespace tbs::trt
