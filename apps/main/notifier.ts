// System notifications. Electron's Notification is an event emitter with no owner once shown: if
// nothing references it, it can be garbage-collected and its 'click' handler with it, so a click
// on "Build succeeded" would do nothing. Each live notification is kept until it is clicked,
// closed or fails, and at most MAX_KEPT are (Linux does not always report 'close').
export interface NotificationLike {
  on(event: 'click' | 'close' | 'failed', listener: (...args: unknown[]) => void): unknown;
  show(): void;
}

export interface NotificationClass {
  new (options: { title: string; body: string }): NotificationLike;
  isSupported(): boolean;
}

const MAX_KEPT = 20;

export interface Notifier {
  notify(title: string, body: string): void;
  /** Notifications shown and not yet clicked or closed. */
  readonly live: number;
}

export function createNotifier(Notification: NotificationClass, onClick: () => void, log?: (m: string) => void): Notifier {
  const live = new Set<NotificationLike>();
  return {
    notify(title, body) {
      if (!Notification.isSupported()) return;
      const n = new Notification({ title, body });
      const release = () => live.delete(n);
      n.on('click', () => {
        release();
        onClick();
      });
      n.on('close', release);
      n.on('failed', (_e, error) => {
        release();
        log?.(`notification failed: ${String(error)}`);
      });
      live.add(n);
      if (live.size > MAX_KEPT) live.delete(live.values().next().value!);
      n.show();
    },
    get live() {
      return live.size;
    },
  };
}
