// The JSON text of the hot events (phase.start, phase.step, phase.finish), written natively for the
// build worker's `eventLines` message (apps/shared/event-lines.ts). They are nearly every event of
// a fast build; JSON.stringify of each decoded object was the worker's largest cost (most of it
// turning the double `t` into its shortest text; the figures are in docs/benchmarks.md). Here a
// line costs a small fraction of that, and the text is byte for byte what JSON.stringify writes for
// the object addon.ts would decode from the same slots (same keys, same order, same number text):
// apps/worker/test/addon-lines.test.ts holds the two to that, event by event.
// Every other event gets an empty line: the worker decodes it into an object as before (they
// are rare, and the worker annotates some of them).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "events.h"
#include "json_writer.h"

namespace tbs {

// An integer slot as JavaScript's String(number) writes it (the slots hold integers well inside
// 2^53, so no exponent form can occur).
inline void appendJsInteger(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// `t` (ms since the build's start, made as nanoseconds / 1e6 by the pipeline) as JavaScript's
// String(t) writes it. When t is exactly n / 1e6 for an integer n of nanoseconds and below 2^32 ms
// (49 days: the doubles there are closer than 1e-6 apart, so no other multiple of 1e-6 rounds to
// t), the shortest text that reads back as t is n's digits with the point put in and trailing
// zeros dropped: integer formatting only. Anything else takes the general shortest form, which
// is JavaScript's for the values (fixed notation) it can reach here.
inline void appendJsMs(std::string& out, double t) {
  if (t >= 0 && t < 4294967296.0) {
    double scaled = t * 1e6;
    auto n = static_cast<int64_t>(std::llround(scaled));
    if (static_cast<double>(n) / 1e6 == t) {
      int64_t whole = n / 1000000;
      auto frac = static_cast<int32_t>(n % 1000000);
      appendJsInteger(out, whole);
      if (frac != 0) {
        char digits[7];
        for (int i = 5; i >= 0; --i) {
          digits[i] = static_cast<char>('0' + frac % 10);
          frac /= 10;
        }
        int len = 6;
        while (digits[len - 1] == '0') --len;
        out += '.';
        out.append(digits, static_cast<size_t>(len));
      }
      return;
    }
  }
  if (t == 0) {  // -0 too: String(-0) is "0"
    out += '0';
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, t, std::chars_format::fixed);
  out.append(buf, r.ptr);
}

// Builds the lines of one batch: `prefix` is `{"v":<version>,"buildId":<json string>` as the worker
// writes it (apps/worker/addon.ts), names[id] each name's JSON string (appendJsonString).
class EventLineWriter {
 public:
  explicit EventLineWriter(std::string prefix) : prefix_(std::move(prefix)) {}

  // Names that first appear in a batch, kept (as JSON text) for the starts that use them.
  void addNames(uint32_t firstNameId, std::vector<std::string> const& newNames) {
    if (names_.size() < firstNameId + newNames.size()) names_.resize(firstNameId + newNames.size());
    for (size_t i = 0; i < newNames.size(); ++i) {
      std::string& json = names_[firstNameId + i];
      json.clear();
      appendJsonString(json, newNames[i]);
    }
  }

  // One line per event, '\n' after each but the last; empty for the events the worker decodes.
  void append(std::string& out, OutEvent const& e) const {
    switch (e.type) {
      case EvType::kPhaseStart:
        head(out, e, "phase.start");
        out += ",\"parentId\":";
        if (e.b < 0) {
          out += "null";
        } else {
          appendJsInteger(out, e.b);
        }
        out += ",\"name\":";
        if (e.c >= 0 && static_cast<size_t>(e.c) < names_.size() && !names_[static_cast<size_t>(e.c)].empty()) {
          out += names_[static_cast<size_t>(e.c)];
        } else {
          out += "\"#";  // as addon.ts writes a name it does not know
          appendJsInteger(out, e.c);
          out += '"';
        }
        out += ",\"nbSteps\":";
        appendJsInteger(out, e.d);
        out += ",\"instance\":";
        appendJsInteger(out, e.e);
        out += '}';
        break;
      case EvType::kPhaseStep:
        head(out, e, "phase.step");
        out += ",\"step\":";
        appendJsInteger(out, e.b);
        out += ",\"stepsDone\":";
        appendJsInteger(out, e.c);
        out += '}';
        break;
      case EvType::kPhaseFinish:
        head(out, e, "phase.finish");
        out += ",\"stepsDone\":";
        appendJsInteger(out, e.b);
        out += e.c == 1 ? ",\"early\":true}" : ",\"early\":false}";
        break;
      default:
        break;
    }
  }

  std::string lines(std::vector<OutEvent> const& events) const {
    std::string out;
    out.reserve(events.size() * 140);
    for (size_t i = 0; i < events.size(); ++i) {
      if (i > 0) out += '\n';
      append(out, events[i]);
    }
    return out;
  }

 private:
  void head(std::string& out, OutEvent const& e, char const* type) const {
    out += prefix_;
    out += ",\"seq\":";
    appendJsInteger(out, static_cast<int64_t>(e.seq));
    out += ",\"t\":";
    appendJsMs(out, e.t);
    out += ",\"type\":\"";
    out += type;
    out += "\",\"id\":";
    appendJsInteger(out, e.a);
  }

  std::string prefix_;
  std::vector<std::string> names_;
};

}  // namespace tbs
