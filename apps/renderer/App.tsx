// Must run before any zod schema is used (see the file).
import './lib/zod-csp.js';
import { useEffect, useState } from 'react';
import { CachePanel } from './components/CachePanel.js';
import { MemoryPanel } from './components/MemoryPanel.js';
import { Compare } from './components/Compare.js';
import { Engines } from './components/Engines.js';
import { EnginePanel, EngineView } from './components/EngineView.js';
import { loadFiles } from './lib/engine-view-state.js';
import { FarmPanel } from './components/FarmPanel.js';
import { History } from './components/History.js';
import { LogPanel } from './components/LogPanel.js';
import { ModelPanel } from './components/ModelPanel.js';
import { OptionsForm } from './components/OptionsForm.js';
import { PhaseTree } from './components/PhaseTree.js';
import { StatusLine } from './components/StatusLine.js';
import { Timeline } from './components/Timeline.js';
import { Toolbar } from './components/Toolbar.js';
import { useController } from './hooks.js';
import { shortcutFor } from './lib/shortcuts.js';
import { PanelTabs } from './components/PanelTabs.js';

/**
 * Below this width the side panels collapse into tabs under the tree (styles.css has the same
 * breakpoint). Where the page cannot ask (a DOM without matchMedia, as in unit tests), the wide
 * layout is used.
 */
const NARROW_QUERY = '(max-width: 1180px)';

function useMediaQuery(query: string): boolean {
  const mq = typeof window !== 'undefined' && typeof window.matchMedia === 'function' ? window.matchMedia(query) : null;
  const [matches, setMatches] = useState(() => mq?.matches ?? false);
  useEffect(() => {
    if (!mq) return;
    const on = () => setMatches(mq.matches);
    on();
    mq.addEventListener?.('change', on);
    return () => mq.removeEventListener?.('change', on);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [query]);
  return matches;
}

export function App() {
  const c = useController();
  const [dragging, setDragging] = useState(false);
  const narrow = useMediaQuery(NARROW_QUERY);

  useEffect(() => {
    let last = { action: '', at: 0 };
    const run = (a: 'open' | 'build' | 'stop' | 'save') => {
      // In Electron one key press may arrive twice, as the page's keydown and as the menu
      // accelerator's host action (which one wins is platform-dependent): run it once.
      const now = performance.now();
      if (last.action === a && now - last.at < 300) return;
      last = { action: a, at: now };
      if (a === 'open') void c.openModel();
      else if (a === 'build') void c.build();
      else if (a === 'stop') void c.stop();
      else void c.save();
    };
    const onKey = (e: KeyboardEvent) => {
      const a = shortcutFor(e, navigator.platform.startsWith('Mac'));
      if (!a) return;
      // Stop means nothing while idle; let the key through then.
      if (a === 'stop' && !c.isRunning()) return;
      e.preventDefault();
      run(a);
    };
    window.addEventListener('keydown', onKey);
    const offHost = c.client.onHostAction?.(run);
    const offOpen = c.client.onOpenRequest?.((p) => void c.openModelPath(p));
    return () => {
      window.removeEventListener('keydown', onKey);
      offHost?.();
      offOpen?.();
    };
  }, [c]);

  // The model and the form, in both layouts.
  const leftColumn = (
    <aside className="col-left">
      <ModelPanel />
      <OptionsForm />
    </aside>
  );
  return (
    <div
      className={`app${dragging ? ' dragging' : ''}`}
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        setDragging(true);
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDragging(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        const f = e.dataTransfer.files[0];
        // JSON is layer information (and its profile) for the Engine view; anything else a model.
        if (f && /\.json$/i.test(f.name)) void loadFiles([...e.dataTransfer.files]);
        else if (f) void c.openDroppedFile(f);
      }}
    >
      <Toolbar />
      {narrow ? (
        // A narrow window: the tree takes the height; the rest share one tabbed area under it.
        <div className="layout narrow">
          {leftColumn}
          <main className="col-main">
            <PhaseTree />
          </main>
          <div className="row-bottom">
            <PanelTabs
              initial="log"
              tabs={[
                { id: 'log', label: 'Log', panel: <LogPanel /> },
                { id: 'timeline', label: 'Timeline', panel: <Timeline /> },
                { id: 'cache', label: 'Cache', panel: <CachePanel /> },
                { id: 'memory', label: 'Memory', panel: <MemoryPanel /> },
                {
                  id: 'history',
                  label: 'History',
                  // The farm panel shows only on a `serve --queue`; it belongs with the builds.
                  panel: (
                    <>
                      <History />
                      <FarmPanel />
                    </>
                  ),
                },
                { id: 'compare', label: 'Compare', panel: <Compare /> },
                { id: 'engines', label: 'Engines', panel: <Engines /> },
                { id: 'engine', label: 'Layers', panel: <EnginePanel /> },
              ]}
            />
          </div>
        </div>
      ) : (
        <div className="layout">
          {leftColumn}
          <main className="col-main">
            <PhaseTree />
            <Timeline />
          </main>
          <aside className="col-right">
            <CachePanel />
            <MemoryPanel />
            <History />
            <FarmPanel />
            <Compare />
            <Engines />
            <EnginePanel />
          </aside>
          <div className="row-bottom">
            <LogPanel />
          </div>
        </div>
      )}
      <StatusLine />
      <EngineView />
      {dragging && (
        <div className="drop-overlay" aria-hidden="true">
          Drop an ONNX model to open it, or layer JSON (with its profile) for the Engine view
        </div>
      )}
    </div>
  );
}
