// Stop latency as a user sees it: from the moment a client sends POST /api/builds/{id}/cancel to
// the moment build.finished arrives on that build's SSE stream. bench:farm measures it on a farm
// serve (Stop travels serve → Redis → worker → build worker, and the ending back through Redis)
// and on a local serve on the same machine (Stop goes straight to the build worker), so the farm's
// own cost is the difference.
import * as http from 'node:http';
import { SseParser } from '../apps/service/http/sse-parser.js';
import type { BuildEvent } from '../apps/shared/protocol.js';
import { serveApi, type ServeChild } from './serve-child.js';

export interface Stats {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export function stats(values: number[]): Stats {
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN);
  const r = (x: number) => Math.round(x * 10) / 10;
  return { n: s.length, p50: r(at(0.5)), p99: r(at(0.99)), max: r(s.at(-1) ?? NaN) };
}

/** What one Stop took, and how the build ended (it must be `cancelled` for the figure to count). */
interface OneStop {
  ms: number;
  status: string;
}

/**
 * Starts one simulated build long enough never to end by itself, waits until it is running (its
 * first phase has begun on the SSE stream), sends Stop and times it to build.finished on the same
 * stream.
 */
function stopOne(s: ServeChild, body: Record<string, unknown>, timeoutMs: number): Promise<OneStop> {
  return new Promise((resolve, reject) => {
    let id = '';
    let stopAt = 0;
    let sent = false;
    let req: http.ClientRequest | undefined;
    const timer = setTimeout(() => {
      req?.destroy();
      reject(new Error(`stop latency: build ${id || '(not started)'} did not end within ${timeoutMs} ms of being started`));
    }, timeoutMs);
    const sendStop = () => {
      sent = true;
      stopAt = performance.now();
      serveApi(s, `/api/builds/${id}/cancel`, { method: 'POST', body: '{}' }).catch((e: Error) => {
        clearTimeout(timer);
        req?.destroy();
        reject(e);
      });
    };
    const parser = new SseParser((m) => {
      if (m.event !== 'message') return;
      const e = JSON.parse(m.data) as BuildEvent;
      if (!sent && e.type === 'phase.start') sendStop();
      if (e.type === 'build.finished') {
        const ms = performance.now() - stopAt;
        clearTimeout(timer);
        req?.destroy();
        if (!sent) reject(new Error(`stop latency: build ${id} finished (${e.status}) before it was stopped`));
        else resolve({ ms, status: e.status });
      }
    });
    serveApi<{ id: string }>(s, '/api/builds', { method: 'POST', body: JSON.stringify(body) }).then(
      (r) => {
        id = r.id;
        req = http.get(`${s.base}/api/builds/${id}/events?lastEventId=-1`, { headers: { Authorization: `Bearer ${s.token}` } }, (res) => {
          res.on('data', (chunk: Buffer) => parser.push(chunk));
          res.on('error', () => undefined);
        });
        req.on('error', () => undefined);
      },
      (e: Error) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/**
 * `n` Stops, one after the other (each build alone on the serve, so the figure is Stop's own path,
 * not a queue). `body` is the build request (model, simulated options, target on a farm).
 */
export async function measureStops(s: ServeChild, body: Record<string, unknown>, n: number, timeoutMs = 60_000): Promise<Stats & { notCancelled: number }> {
  const ms: number[] = [];
  let notCancelled = 0;
  for (let i = 0; i < n; i++) {
    const r = await stopOne(s, body, timeoutMs);
    if (r.status === 'cancelled') ms.push(r.ms);
    else notCancelled++;
  }
  return { ...stats(ms), notCancelled };
}
