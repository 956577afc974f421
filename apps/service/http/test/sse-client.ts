// A small SSE client over node:http for the tests: it records every message and comment, and
// resolves `ended` when the server ends the response.
import * as http from 'node:http';
import { BuildViewSnapshot } from '../../../shared/build-view-schema.js';
import { BuildEvent, BuildRecord } from '../../../shared/protocol.js';
import { SseParser, type SseMessage } from '../sse-parser.js';

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  messages: SseMessage[];
  comments: string[];
  /** Resolves when the server ends the stream (or the connection drops). */
  ended: Promise<void>;
  close(): void;
  /** Waits until a message satisfies `pred` (checks messages already received first). */
  waitFor(pred: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  snapshot(): BuildRecord;
  /** Every `event: reset`, its view schema-checked, and its `id:` checked against the view's seq. */
  resets(): BuildViewSnapshot[];
  /** Every non-snapshot message, parsed and schema-checked. */
  events(): BuildEvent[];
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const messages: SseMessage[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      const parser = new SseParser(
        (m) => {
          messages.push(m);
          for (const w of [...waiters]) w();
        },
        (c) => comments.push(c),
      );
      const ended = new Promise<void>((done) => {
        res.on('data', (chunk: Buffer) => parser.push(chunk));
        res.on('end', () => done());
        res.on('close', () => done());
        res.on('error', () => done());
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        comments,
        ended,
        close: () => req.destroy(),
        waitFor(pred, timeoutMs = 10_000) {
          return new Promise((ok, fail) => {
            const check = () => {
              const m = messages.find(pred);
              if (!m) return false;
              waiters.delete(check);
              clearTimeout(timer);
              ok(m);
              return true;
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`SSE: no matching message within ${timeoutMs} ms (got ${messages.length})`));
            }, timeoutMs);
            if (!check()) waiters.add(check);
          });
        },
        snapshot() {
          const first = messages[0];
          if (!first || first.event !== 'snapshot') throw new Error('SSE: first message is not the snapshot');
          return BuildRecord.parse(JSON.parse(first.data));
        },
        resets() {
          return messages
            .filter((m) => m.event === 'reset')
            .map((m) => {
              const v = BuildViewSnapshot.parse(JSON.parse(m.data));
              if (m.id !== String(v.seq)) throw new Error(`SSE: reset id ${m.id} does not match its view's seq ${v.seq}`);
              return v;
            });
        },
        events() {
          return messages
            .filter((m) => m.event === 'message')
            .map((m) => {
              const e = BuildEvent.parse(JSON.parse(m.data));
              if (m.id !== String(e.seq)) throw new Error(`SSE: id ${m.id} does not match seq ${e.seq}`);
              return e;
            });
        },
      });
    });
    req.on('error', reject);
  });
}
