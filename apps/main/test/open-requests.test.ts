import { describe, expect, it } from 'vitest';
import { OpenRequests } from '../open-requests.js';
import { FakeWebContents } from './fake-electron.js';

describe('open requests from outside the page', () => {
  it('holds paths until the page asks, pushes later ones, and holds again after a reload', () => {
    const wc = new FakeWebContents();
    let target: FakeWebContents | null = null;
    const q = new OpenRequests(() => target);
    q.request('/a.onnx'); // before the window exists (command line)
    target = wc;
    q.request('/b.onnx'); // window exists, page not listening yet
    expect(wc.sent).toEqual([]);
    expect(q.take(wc.id)).toEqual(['/a.onnx', '/b.onnx']);
    q.request('/c.onnx');
    expect(wc.sent.map(([, m]) => m)).toEqual([{ path: '/c.onnx' }]);
    q.reset(); // reload: the new page has not subscribed yet
    q.request('/d.onnx');
    expect(wc.sent).toHaveLength(1);
    expect(q.take(wc.id)).toEqual(['/d.onnx']);
  });

  it('does not push to a destroyed window, or to a page of another webContents', () => {
    const wc = new FakeWebContents();
    const q = new OpenRequests(() => wc);
    q.request('/x.onnx');
    expect(q.take(wc.id + 100)).toEqual([]);
    expect(wc.sent).toEqual([]);
    expect(q.take(wc.id)).toEqual(['/x.onnx']);
    wc.destroyed = true;
    q.request('/y.onnx');
    expect(wc.sent).toEqual([]);
  });
});
