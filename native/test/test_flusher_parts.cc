// The flusher's data structures on their own: the record queue (front/pop and chunk reuse), the
// merge of several queues by sequence number (record_merge.h), and the emitted tree's index
// (emitted_tree.h) under many inserts and forgets, checked against a plain std::map model. The
// pipeline tests (test_pipeline.cc, stress_test.cc) check the same parts through the callbacks.
#include <algorithm>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "check.h"
#include "core/emitted_tree.h"
#include "core/record_merge.h"
#include "core/record_queue.h"

using namespace tbs;

namespace {

struct Rec {
  uint64_t seq = 0;
  int64_t payload = 0;
};

TEST(queue_front_pop_crosses_chunks_in_order) {
  SpscChunkQueue<Rec, 4> q;
  CHECK(q.front() == nullptr);
  for (uint64_t i = 0; i < 10; ++i) q.push(Rec{i, static_cast<int64_t>(i) * 10});
  for (uint64_t i = 0; i < 10; ++i) {
    Rec* r = q.front();
    CHECK(r != nullptr);
    if (r == nullptr) return;
    CHECK_EQ(r->seq, i);
    CHECK_EQ(r->payload, static_cast<int64_t>(i) * 10);
    q.pop();
  }
  CHECK(q.front() == nullptr);
  // Chunks handed back are reused: pushing again still reads back in order.
  for (uint64_t i = 10; i < 30; ++i) q.push(Rec{i, 0});
  for (uint64_t i = 10; i < 30; ++i) {
    Rec* r = q.front();
    CHECK(r != nullptr && r->seq == i);
    q.pop();
  }
  CHECK(q.front() == nullptr);
}

// One producer thread, the consumer here: every record arrives once, in order.
TEST(queue_concurrent_producer_loses_nothing) {
  SpscChunkQueue<Rec, 16> q;
  constexpr uint64_t kN = 200000;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kN; ++i) q.push(Rec{i, 0});
  });
  uint64_t next = 0;
  while (next < kN) {
    Rec* r = q.front();
    if (r == nullptr) {
      std::this_thread::yield();
      continue;
    }
    if (r->seq != next) {
      CHECK_EQ(r->seq, next);
      break;
    }
    q.pop();
    ++next;
  }
  producer.join();
  CHECK_EQ(next, kN);
}

TEST(merge_takes_records_in_sequence_and_stops_at_a_gap) {
  SpscChunkQueue<Rec, 4> a, b, c;
  RecordMerge<Rec, SpscChunkQueue<Rec, 4>> m;
  m.add(&a);
  m.add(&b);
  m.add(&c);
  // 0..11 spread over three queues, each ascending; 7 is not published yet.
  std::vector<int> owner = {0, 0, 1, 2, 1, 1, 0, -1, 2, 2, 0, 1};
  SpscChunkQueue<Rec, 4>* qs[] = {&a, &b, &c};
  for (uint64_t s = 0; s < owner.size(); ++s) {
    if (owner[s] >= 0) qs[owner[s]]->push(Rec{s, 0});
  }
  uint64_t next = 0;
  for (Rec* r; (r = m.find(next)) != nullptr; m.pop()) {
    CHECK_EQ(r->seq, next);
    ++next;
  }
  CHECK_EQ(next, 7u);
  CHECK_EQ(m.lowestFront(), 8u);
}

TEST(merge_lowest_front_skips_a_number_that_never_comes) {
  SpscChunkQueue<Rec, 4> a, b;
  RecordMerge<Rec, SpscChunkQueue<Rec, 4>> m;
  m.add(&a);
  m.add(&b);
  a.push(Rec{0, 0});
  a.push(Rec{3, 0});
  b.push(Rec{2, 0});
  CHECK(m.find(0) != nullptr);
  m.pop();
  CHECK(m.find(1) == nullptr);
  CHECK_EQ(m.lowestFront(), 2u);
  CHECK(m.find(2) != nullptr);
  m.pop();
  CHECK(m.find(3) != nullptr);
  m.pop();
  CHECK_EQ(m.lowestFront(), UINT64_MAX);
}

// The index against a model: random inserts (ids ascending, as sequence numbers are), closes and
// forgets, with parents; every find, open-children list and snapshot must match.
TEST(emitted_tree_matches_a_map_model) {
  constexpr size_t kRetain = 3000;  // with the open ones, past the index's first two sizes
  EmittedTree tree(kRetain);
  NameTable names;
  names.idOf("p", true);
  struct Model {
    int64_t parent;
    bool open;
  };
  std::map<int64_t, Model> model;
  std::vector<int64_t> finished;
  std::vector<int64_t> open;
  std::map<int64_t, int> openKids;
  std::mt19937 rng(7);
  int64_t nextId = 0;
  std::lock_guard<std::mutex> lk(tree.mutex());
  for (int op = 0; op < 40000; ++op) {
    if (open.empty() || (open.size() < 400 && rng() % 2 == 0)) {
      int64_t id = nextId;
      nextId += 1 + static_cast<int64_t>(rng() % 3);  // gaps, like finishes taking numbers
      int64_t parent = open.empty() || rng() % 4 == 0 ? -1 : open[rng() % open.size()];
      EmittedTree::Phase p;
      p.parentId = parent;
      tree.add(id, p, tree.slotOf(parent));
      model[id] = Model{parent, true};
      open.push_back(id);
      if (parent >= 0) ++openKids[parent];
    } else {
      // As the pipeline does, a phase closes only after its open children: pick a leaf.
      size_t k = rng() % open.size();
      while (openKids[open[k]] > 0) k = (k + 1) % open.size();
      int64_t id = open[k];
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
      if (model[id].parent >= 0) --openKids[model[id].parent];
      tree.close(tree.slotOf(id), 1, 1.0, false);
      model[id].open = false;
      finished.push_back(id);
      tree.forgetOldFinished();
      if (finished.size() > kRetain) {
        model.erase(finished.front());
        finished.erase(finished.begin());
      }
    }
  }
  // Every kept phase is found with its parent, and nothing forgotten is.
  for (int64_t id = 0; id < nextId; ++id) {
    EmittedTree::Phase* v = tree.find(id);
    auto it = model.find(id);
    CHECK_EQ(v != nullptr, it != model.end());
    if (v != nullptr && it != model.end()) {
      CHECK_EQ(v->parentId, it->second.parent);
      CHECK_EQ(v->open, it->second.open);
    }
  }
  // Open children of each open phase (closing a phase unlinked it through its parent's slot): exactly the open phases naming it as parent.
  for (int64_t id : open) {
    std::vector<int64_t> want;
    for (auto const& [cid, m] : model) {
      if (m.open && m.parent == id) want.push_back(cid);
    }
    std::sort(want.rbegin(), want.rend());
    CHECK(tree.openChildren(id) == want);
  }
  std::vector<int64_t> openNow = tree.openPhases();
  CHECK_EQ(openNow.size(), open.size());
}

TEST(emitted_tree_snapshot_lists_kept_phases_sorted) {
  EmittedTree tree(2);
  NameTable names;
  uint32_t nm = names.idOf("phase", true);
  {
    std::lock_guard<std::mutex> lk(tree.mutex());
    for (int64_t id = 0; id < 5; ++id) {
      EmittedTree::Phase p;
      p.nameId = nm;
      tree.add(id * 2, p, EmittedTree::kNoSlot);
    }
    for (int64_t id = 0; id < 4; ++id) tree.close(tree.slotOf(id * 2), 0, 2.0, false);
    tree.forgetOldFinished();  // keeps the last 2 finished (4, 6) and the open 8
  }
  std::vector<PhaseSnapshot> snap = tree.snapshot(names);
  CHECK_EQ(snap.size(), 3u);
  if (snap.size() == 3) {
    CHECK_EQ(snap[0].id, 4);
    CHECK_EQ(snap[1].id, 6);
    CHECK_EQ(snap[2].id, 8);
    CHECK_EQ(snap[2].endT, -1.0);
    CHECK_EQ(snap[0].name, std::string("phase"));
  }
}

}  // namespace

TEST_MAIN()
