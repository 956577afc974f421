// What the pipeline hands to its consumer (the addon, or a test): protocol events in seq order,
// numeric fields inline and text only for the rare events. The addon turns a batch into one
// Float64Array + a string table; addon.ts turns those into protocol.ts objects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbs {

enum class EvType : uint8_t {
  kStarted = 0,     // text = JSON {backend, backendVersion, simulated, gpu}
  kPhaseStart = 1,  // a=id b=parentId(-1 = root) c=nameId d=nbSteps e=instance
  kPhaseStep = 2,   // a=id b=step c=stepsDone
  kPhaseFinish = 3, // a=id b=stepsDone c=early(0/1)
  kLog = 4,         // a=severity text=message
  kCacheStats = 5,  // text = JSON of protocol CacheStats
  kHeartbeat = 6,   // x=sinceLastCallbackMs a=cancelRequested
  kCancelling = 7,  // x=requestedAt(ms) a=CancelReason
  kFinished = 8,    // a=status(BuildOutcome::Status) text = JSON of the remaining fields
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
