// What the pipeline hands to its consumer (the addon, or a test): protocol events in seq order,
// numeric fields inline and text only for the rare events. The addon turns a batch into one
// Float64Array + a string table; addon.ts turns those into protocol.ts objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tbs {

enum class EvType : uint8_t {
  kStarted = 0,      // text = JSON {backend, backendVersion, simulated, gpu}
  kPhaseStart = 1,   // a=id b=parentId(-1 = root) c=nameId d=nbSteps e=instance
  kPhaseStep = 2,    // a=id b=step c=stepsDone
  kPhaseFinish = 3,  // a=id b=stepsDone c=early(0/1)
  kLog = 4,          // a=severity text=message
  kCacheStats = 5,   // text = JSON of protocol CacheStats
  kHeartbeat = 6,    // x=sinceLastCallbackMs a=cancelRequested
  kCancelling = 7,   // x=requestedAt(ms) a=CancelReason
  kFinished = 8,     // a=status(BuildOutcome::Status) text = JSON of the remaining fields
};

// The addon hands a batch to JS as one Float64Array of kEventSlots numbers per event, in this
// order; kHeartbeat and kCancelling put x in slot "b", the text events their string index in
// slot "e". The addon exports this table (eventLayout) and addon.ts refuses to run against a
// layout other than the one it decodes, so the two sides cannot drift apart silently.
inline constexpr size_t kEventSlots = 8;
inline constexpr char const* kEventSlotNames[kEventSlots] = {"type", "seq", "t", "a", "b", "c", "d", "e"};
struct EvTypeName {
  EvType type;
  char const* name;
};
inline constexpr EvTypeName kEvTypeNames[] = {
    {EvType::kStarted, "started"},
    {EvType::kPhaseStart, "phaseStart"},
    {EvType::kPhaseStep, "phaseStep"},
    {EvType::kPhaseFinish, "phaseFinish"},
    {EvType::kLog, "log"},
    {EvType::kCacheStats, "cacheStats"},
    {EvType::kHeartbeat, "heartbeat"},
    {EvType::kCancelling, "cancelling"},
    {EvType::kFinished, "finished"},
};

struct OutEvent {
  EvType type = EvType::kLog;
  uint64_t seq = 0;
  double t = 0;  // ms since build start
  int64_t a = 0, b = 0, c = 0, d = 0, e = 0;
  double x = 0;
  std::string text;
};

struct EventBatch {
  std::vector<OutEvent> events;
  // Phase names are interned once per build: ids >= firstNameId first appear in this batch.
  uint32_t firstNameId = 0;
  std::vector<std::string> newNames;
  bool final = false;  // the batch that ends with build.finished
};

}  // namespace tbs
