// In a narrow window the panels beside and under the phase tree share one tabbed area, so the
// tree keeps the height (at least 14 rows at 900×700 while building). Every panel stays mounted
// (hidden when not selected): they keep folding the build, and switching shows them at once.
import { useState, type ReactNode } from 'react';

export interface PanelTab {
  id: string;
  label: string;
  panel: ReactNode;
}

export function PanelTabs({ tabs, initial }: { tabs: PanelTab[]; initial: string }) {
  const [selected, setSelected] = useState(initial);
  const current = tabs.some((t) => t.id === selected) ? selected : tabs[0].id;
  const move = (by: number) => {
    const i = tabs.findIndex((t) => t.id === current);
    const next = tabs[(i + by + tabs.length) % tabs.length];
    setSelected(next.id);
    document.getElementById(`tab-${next.id}`)?.focus();
  };
  return (
    <div className="panel-tabs">
      <div
        role="tablist"
        aria-label="Panels"
        className="tab-strip"
        onKeyDown={(e) => {
          if (e.key === 'ArrowRight') move(1);
          else if (e.key === 'ArrowLeft') move(-1);
          else return;
          e.preventDefault();
        }}
      >
        {tabs.map((t) => (
          <button
            key={t.id}
            id={`tab-${t.id}`}
            type="button"
            role="tab"
            aria-selected={t.id === current}
            aria-controls={`tabpanel-${t.id}`}
            tabIndex={t.id === current ? 0 : -1}
            className="tab"
            onClick={() => setSelected(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      {tabs.map((t) => (
        <div key={t.id} id={`tabpanel-${t.id}`} role="tabpanel" aria-labelledby={`tab-${t.id}`} className="tab-panel" hidden={t.id !== current}>
          {t.panel}
        </div>
      ))}
    </div>
  );
}
