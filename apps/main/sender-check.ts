// IPC is only answered for the top frame of one of our windows showing our own page. A frame that
// navigated elsewhere (should navigation blocking ever fail), an iframe, or another webContents
// gets nothing, so a compromised or foreign page cannot drive builds or dialogs.
import { isAppUrl } from './app-protocol.js';

/** The parts of IpcMainInvokeEvent the check reads. */
export interface SenderInfo {
  sender: { id: number };
  senderFrame: { url: string; parent: unknown } | null;
}

export function createSenderCheck(trustedWebContentsIds: () => Iterable<number>): (event: SenderInfo) => boolean {
  return (event) => {
    const frame = event.senderFrame;
    // A null frame means it navigated or was destroyed while the message was in flight.
    if (!frame || frame.parent !== null) return false;
    if (!isAppUrl(frame.url)) return false;
    for (const id of trustedWebContentsIds()) if (id === event.sender.id) return true;
    return false;
  };
}
