import { useApp, useController } from '../hooks.js';

/** Primary actions. Names are exact: screen-reader users and the e2e tests find them by name. */
export function Toolbar() {
  const c = useController();
  const model = useApp((s) => s.model);
  const modelBusy = useApp((s) => s.modelBusy);
  const starting = useApp((s) => s.starting);
  const live = useApp((s) => s.live);
  useApp((s) => s.frame); // status and engine availability change with events
  const running = !!live && (live.status === 'Building' || live.status === 'Stopping');
  const web = c.client.capabilities.host === 'web';
  const simulated = live ? live.simulated : c.simulatorSelected();
  const mod = navigator.platform.startsWith('Mac') ? '⌘' : 'Ctrl+';

  return (
    <header className="toolbar" role="toolbar" aria-label="Build actions">
      <button type="button" onClick={() => void c.openModel()} disabled={modelBusy} title={`Open an ONNX model (${mod}O)`}>
        Open model…
      </button>
      <button
        type="button"
        className="primary"
        onClick={() => void c.build()}
        disabled={!model || starting || running}
        title={`Start a build with these options (${mod}B)`}
      >
        Build
      </button>
      <button
        type="button"
        className="danger"
        onClick={() => void c.stop()}
        disabled={!running || !!live?.forceRequested}
        title={live?.status === 'Stopping' ? 'Press again to kill the build worker now' : 'Stop at the next step boundary (Esc)'}
      >
        Stop
      </button>
      <button
        type="button"
        onClick={() => void c.save()}
        disabled={!live?.engineAvailable}
        title={web ? `Download the engine (${mod}S)` : `Save the engine to a file (${mod}S)`}
      >
        Save engine…
      </button>
      <span className="toolbar-spacer" />
      {model && <span className="toolbar-model" title={model.path}>{model.displayName}</span>}
      <BackendBadge simulated={simulated} />
    </header>
  );
}

function BackendBadge({ simulated }: { simulated: boolean | undefined }) {
  const live = useApp((s) => s.live);
  if (live?.backend === 'tensorrt') {
    return <span className="badge badge-trt">TensorRT {live.backendVersion ?? ''}</span>;
  }
  if (simulated) {
    return (
      <span className="badge badge-sim" title="Simulated backend: no TensorRT is involved and the output is not an engine">
        Simulated
      </span>
    );
  }
  return <span className="badge">TensorRT</span>;
}
