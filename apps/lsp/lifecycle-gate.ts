// The LSP lifecycle, enforced on the incoming messages before the library dispatches them (it
// does not itself): before `initialize`, a request is answered ServerNotInitialized (-32002) and a
// notification is dropped; after `shutdown`, a request is answered InvalidRequest (-32600) and a
// notification is dropped. `exit` always passes (the library ends the process on it, with code 0
// after a shutdown request and 1 without). Responses to the server's own requests always pass.
import { ErrorCodes, Message, type DataCallback, type MessageReader, type MessageWriter, type RequestMessage } from 'vscode-languageserver/node';

export type Lifecycle = 'uninitialized' | 'running' | 'shut down';

export interface GatedReader extends MessageReader {
  readonly lifecycle: Lifecycle;
}

/** `reader` with the lifecycle rules applied; refusals are written to `writer` and logged. */
export function gateLifecycle(reader: MessageReader, writer: MessageWriter, log: (line: string) => void): GatedReader {
  let lifecycle: Lifecycle = 'uninitialized';
  const refuse = (req: RequestMessage, code: number, message: string) => {
    log(`${req.method} (id ${String(req.id)}) refused: ${message}`);
    void writer.write({ jsonrpc: '2.0', id: req.id, error: { code, message } } as Message).catch((e: unknown) => log(`refusal not sent: ${(e as Error).message}`));
  };
  const admit = (msg: Message): boolean => {
    if (Message.isRequest(msg)) {
      if (lifecycle === 'uninitialized' && msg.method !== 'initialize') {
        refuse(msg, ErrorCodes.ServerNotInitialized, `${msg.method}: the server is not initialized yet; send "initialize" first`);
        return false;
      }
      if (lifecycle === 'shut down') {
        refuse(msg, ErrorCodes.InvalidRequest, `${msg.method}: the server has shut down; only the "exit" notification is accepted now`);
        return false;
      }
      if (msg.method === 'initialize') lifecycle = 'running';
      else if (msg.method === 'shutdown') lifecycle = 'shut down';
      return true;
    }
    if (Message.isNotification(msg) && msg.method !== 'exit' && lifecycle !== 'running') {
      log(`${msg.method} dropped: ${lifecycle === 'uninitialized' ? 'the server is not initialized yet' : 'the server has shut down'}`);
      return false;
    }
    return true;
  };
  return {
    get lifecycle() {
      return lifecycle;
    },
    onError: reader.onError,
    onClose: reader.onClose,
    onPartialMessage: reader.onPartialMessage,
    listen: (callback: DataCallback) => reader.listen((msg) => (admit(msg) ? callback(msg) : undefined)),
    dispose: () => reader.dispose(),
  };
}
