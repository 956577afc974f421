// Feeds a decoded network chunk to the SSE parser in pieces, giving the page a task boundary
// between pieces. When the page is busy, the fetch body piles up and one read returns up to a
// megabyte at once; parsing that (JSON.parse of thousands of events) in one task made the next
// animation frame late in traces of bench:ui (docs/benchmarks.md). Same total work, shorter tasks.

/** Characters parsed per task: a piece short enough to parse well within a frame (docs/benchmarks.md). */
export const PIECE_CHARS = 64 * 1024;

/**
 * Reads a response body as text, chunk by chunk, until it ends (true) or `stop()` says so after
 * a read or after `onText` (false; the body is cancelled).
 */
export async function readBodyText(body: ReadableStream<Uint8Array>, onText: (text: string) => void | Promise<void>, stop: () => boolean = () => false): Promise<boolean> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return true;
    if (!stop()) await onText(decoder.decode(value, { stream: true }));
    if (stop()) {
      await reader.cancel().catch(() => undefined);
      return false;
    }
  }
}

/** Returns control to the event loop (rendering can run) and resumes in a new task. */
export type Yielder = () => Promise<void>;

interface SchedulerLike {
  yield?: () => Promise<void>;
}

/** scheduler.yield() where the browser has it (resumes ahead of other tasks), else a message task. */
export function defaultYielder(): Yielder {
  const sched = (globalThis as { scheduler?: SchedulerLike }).scheduler;
  if (sched && typeof sched.yield === 'function') return () => sched.yield!();
  if (typeof MessageChannel === 'function') {
    // A message task, not setTimeout(0): nested timeouts are clamped to 4 ms. The channel is made
    // on first use: most streams never send a chunk big enough to need it.
    let ch: MessageChannel | undefined;
    const waiting: (() => void)[] = [];
    return () =>
      new Promise<void>((resolve) => {
        if (!ch) {
          ch = new MessageChannel();
          ch.port1.onmessage = () => waiting.shift()?.();
        }
        waiting.push(resolve);
        ch.port2.postMessage(null);
      });
  }
  return () => new Promise<void>((resolve) => setTimeout(resolve, 0));
}

/**
 * Pushes `text` into `push` in order, at most `piece` characters at a time, yielding between
 * pieces (never before the first, so a small chunk costs nothing extra). `stop` is checked after
 * each yield: a cancelled subscription must not deliver the rest.
 */
export async function feedInPieces(text: string, push: (piece: string) => void, yielder: Yielder, stop: () => boolean = () => false, piece = PIECE_CHARS): Promise<void> {
  if (text.length <= piece) {
    push(text);
    return;
  }
  for (let i = 0; i < text.length; i += piece) {
    if (i > 0) {
      await yielder();
      if (stop()) return;
    }
    push(text.slice(i, i + piece));
  }
}
