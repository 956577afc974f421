// Minimal JSON object writer for the few rare events (started, cache stats, finished) whose
// payload travels to JS as text; the hot events travel as numbers.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace tbs {

inline void appendJsonString(std::string& out, std::string const& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':  // as JSON.stringify writes them (event_lines.h keeps its text identical)
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

class JsonObject {
 public:
  JsonObject& str(char const* key, std::string const& v) {
    keyOf(key);
    appendJsonString(out_, v);
    return *this;
  }
  JsonObject& num(char const* key, double v) {
    keyOf(key);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out_ += buf;
    return *this;
  }
  JsonObject& integer(char const* key, int64_t v) {
    keyOf(key);
    out_ += std::to_string(v);
    return *this;
  }
  JsonObject& boolean(char const* key, bool v) {
    keyOf(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonObject& null(char const* key) {
    keyOf(key);
    out_ += "null";
    return *this;
  }
  JsonObject& raw(char const* key, std::string const& json) {
    keyOf(key);
    out_ += json;
    return *this;
  }
  std::string done() const { return out_ + "}"; }

 private:
  void keyOf(char const* key) {
    out_ += first_ ? "" : ",";
    first_ = false;
    appendJsonString(out_, key);
    out_ += ':';
  }
  std::string out_ = "{";
  bool first_ = true;
};

}  // namespace tbs
