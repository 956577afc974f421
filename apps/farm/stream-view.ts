// A build view rebuilt from what Redis still has of a build: its event stream and its record.
// For a record that carries no view of its own (serve's records before they carried one) or a
// mirror that did not see the build from its first event: the stream gives the tree, the logs and
// the ending; when the stream was trimmed from the front, the tree misses the trimmed phases but
// the record's outcome still gives the ending, so a finished build never reads as still queued.
import { BuildView, type BuildViewSnapshot } from '../shared/build-view.js';
import type { FarmRecord, FarmStore } from './farm-store.js';

const PAGE = 5000;

export async function viewFromStream(store: FarmStore, record: FarmRecord): Promise<BuildViewSnapshot> {
  const view = new BuildView(record.id);
  for (;;) {
    const events = await store.eventsAfter(record.id, view.seq, PAGE);
    const fresh = events.filter((e) => e.seq > view.seq && e.seq <= record.lastSeq);
    for (const e of fresh) view.apply(e);
    if (events.length < PAGE || fresh.length === 0 || view.seq >= record.lastSeq) break;
  }
  if (record.outcome && view.seq < record.outcome.seq) view.apply(record.outcome);
  return view.snapshot();
}
