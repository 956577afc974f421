// The event-stream worker (web host only): reads a build's SSE stream off the page's main thread.
// The work is in event-stream-reader.ts (tested there); this file only connects it to the
// worker's messages. web-client.ts starts one per followed build and ends it with the stream.
import { EventStreamReader, type StreamMessage, type StreamRequest } from './event-stream-reader.js';

interface WorkerScope {
  postMessage(m: StreamMessage, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent<StreamRequest>) => void) | null;
}

const scope = self as unknown as WorkerScope;
const reader = new EventStreamReader(fetch.bind(self), (m, transfer) => scope.postMessage(m, transfer ?? []));
scope.onmessage = (e) => reader.onRequest(e.data);
