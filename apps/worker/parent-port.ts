// The worker's one link to its host. The same worker file runs as an Electron utilityProcess
// (process.parentPort; messages arrive as `{ data }` events) and as a Node child_process
// (process.send / 'message'); this shim hides which.

export interface ParentLink {
  readonly kind: 'electron' | 'node';
  send(msg: unknown): void;
  onMessage(cb: (msg: unknown) => void): void;
  /** The host went away (Node: IPC channel closed). Electron kills utility processes itself. */
  onDisconnect(cb: () => void): void;
  /** Resolves once everything sent so far has left this process. */
  drain(): Promise<void>;
}

interface ElectronParentPort {
  postMessage(msg: unknown): void;
  on(event: 'message', cb: (e: { data: unknown }) => void): void;
}

export function connectToParent(): ParentLink {
  const port = (process as unknown as { parentPort?: ElectronParentPort }).parentPort;
  if (port) {
    return {
      kind: 'electron',
      send: (msg) => port.postMessage(msg),
      onMessage: (cb) => port.on('message', (e) => cb(e.data)),
      onDisconnect: () => {},
      // postMessage hands the message to Electron's IPC synchronously; a turn of the loop is
      // enough before exiting. (Not runnable here: no Electron binary on this machine.)
      drain: () => new Promise((r) => setTimeout(r, 20)),
    };
  }
  if (typeof process.send === 'function') {
    let pending = 0;
    let waiters: Array<() => void> = [];
    const settle = () => {
      if (--pending === 0) {
        const w = waiters;
        waiters = [];
        w.forEach((f) => f());
      }
    };
    return {
      kind: 'node',
      send: (msg) => {
        if (!process.connected) return;
        pending++;
        process.send!(msg, undefined, {}, settle);
      },
      onMessage: (cb) => process.on('message', (m) => cb(m)),
      onDisconnect: (cb) => process.on('disconnect', cb),
      drain: () => (pending === 0 ? Promise.resolve() : new Promise((r) => waiters.push(r))),
    };
  }
  throw new Error('the build worker must be started by the app (no parent message channel)');
}
