import { useEffect, useState } from 'react';
import { useApp, useController } from '../hooks.js';

/** Electron remembers recent models; the browser host has no such list, so nothing shows there. */
export function RecentModels() {
  const c = useController();
  const model = useApp((s) => s.model);
  const [recent, setRecent] = useState<string[]>([]);
  const list = c.client.recentModels;

  useEffect(() => {
    if (!list) return;
    let live = true;
    list
      .call(c.client)
      .then((r) => live && setRecent(r))
      .catch(() => undefined); // a missing list is not worth an error message
    return () => {
      live = false;
    };
  }, [c, list, model]);

  if (!list || recent.length === 0) return null;
  return (
    <select
      aria-label="Recent models"
      value=""
      onChange={(e) => {
        if (e.target.value) void c.openModelPath(e.target.value);
      }}
    >
      <option value="">Recent…</option>
      {recent.map((p) => (
        <option key={p} value={p} title={p}>
          {p.split(/[\\/]/).pop()}
        </option>
      ))}
    </select>
  );
}
