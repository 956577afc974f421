// A `serve` child process as the benchmarks drive it: ready once it prints its URL (with the
// token) on stdout, then spoken to over its HTTP API with that token.
import type { ChildProcess } from 'node:child_process';

export interface ServeChild {
  proc: ChildProcess;
  base: string;
  token: string;
}

/** Resolves when `proc` (a started `serve`) has printed its URL; rejects, with its stderr, if it exits first. */
export function serveReady(proc: ChildProcess): Promise<ServeChild> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)$/m.exec(out);
      if (m) resolve({ proc, base: `http://127.0.0.1:${m[1]}`, token: decodeURIComponent(m[2]) });
    });
    proc.once('exit', (code) => reject(new Error(`serve exited (${code}): ${err.slice(-2000)}`)));
  });
}

/** One JSON call; a non-2xx answer throws with its body. */
export async function serveApi<T>(s: ServeChild, p: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${s.base}${p}`, {
    ...init,
    headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json', ...(init.headers as Record<string, string>) },
  });
  const body = (await res.json()) as T;
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${p}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}
