import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { createNotifier } from '../notifier.js';

class FakeNotification extends EventEmitter {
  static made: FakeNotification[] = [];
  static supported = true;
  shown = false;
  constructor(readonly options: { title: string; body: string }) {
    super();
    FakeNotification.made.push(this);
  }
  static isSupported() {
    return FakeNotification.supported;
  }
  show() {
    this.shown = true;
  }
}

describe('notifications', () => {
  it('keeps each shown notification referenced until it is clicked or closed, so its click handler survives', () => {
    FakeNotification.made = [];
    const onClick = vi.fn();
    const n = createNotifier(FakeNotification, onClick);
    n.notify('Build succeeded', 'resnet.onnx after 3.0 s');
    n.notify('Build failed', 'x.onnx after 1.0 s');
    expect(FakeNotification.made.map((m) => [m.options.title, m.shown])).toEqual([
      ['Build succeeded', true],
      ['Build failed', true],
    ]);
    expect(n.live).toBe(2);
    FakeNotification.made[0].emit('click');
    expect(onClick).toHaveBeenCalledTimes(1);
    expect(n.live).toBe(1);
    FakeNotification.made[1].emit('close');
    expect(n.live).toBe(0);
  });

  it('lets go of a notification that failed, and of the oldest ones past a bound (Linux may never report close)', () => {
    FakeNotification.made = [];
    const log = vi.fn();
    const n = createNotifier(FakeNotification, () => undefined, log);
    n.notify('a', 'b');
    FakeNotification.made[0].emit('failed', {}, 'no notification server');
    expect(n.live).toBe(0);
    expect(log).toHaveBeenCalledWith('notification failed: no notification server');
    for (let i = 0; i < 50; i++) n.notify(`t${i}`, 'b');
    expect(n.live).toBe(20);
  });

  it('shows nothing where notifications are not supported', () => {
    FakeNotification.made = [];
    FakeNotification.supported = false;
    try {
      const n = createNotifier(FakeNotification, () => undefined);
      n.notify('a', 'b');
      expect(FakeNotification.made).toEqual([]);
    } finally {
      FakeNotification.supported = true;
    }
  });
});
