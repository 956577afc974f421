import { useApp, useController } from '../hooks.js';
import { RecentModels } from './RecentModels.js';
import { modelTooltip } from '../../shared/file-names.js';

/** Primary actions. Names are exact: screen-reader users and the e2e tests find them by name. */
export function Toolbar() {
  const c = useController();
  const model = useApp((s) => s.model);
  const modelBusy = useApp((s) => s.modelBusy);
  const starting = useApp((s) => s.starting);
  const live = useApp((s) => s.live);
  // Primitive selectors: the toolbar re-renders when these change, not on every frame.
  const status = useApp((s) => s.live?.status);
  const engineAvailable = useApp((s) => !!s.live?.engineAvailable);
  const forceRequested = useApp((s) => !!s.live?.forceRequested);
  useApp((s) => s.live?.simulated);
  useApp((s) => s.backends);
  const running = status === 'Building' || status === 'Stopping';
  // Re-checked when the form, the model or the backends change (not every frame).
  useApp((s) => s.form);
  useApp((s) => s.model);
  const blocker = model && !running ? c.buildBlocker() : null;
  const web = c.client.capabilities.host === 'web';
  const simulated = live ? live.simulated : c.simulatorSelected();
  const mod = navigator.platform.startsWith('Mac') ? '⌘' : 'Ctrl+';

  return (
    <header className="toolbar" role="toolbar" aria-label="Build actions">
      <button type="button" onClick={() => void c.openModel()} disabled={modelBusy} title={`Open an ONNX model (${mod}O)`}>
        Open model…
      </button>
      <RecentModels />
      <button
        type="button"
        className="primary"
        onClick={() => void c.build()}
        disabled={!model || starting || running || blocker !== null}
        title={blocker ? `Not ready to build: ${blocker}` : `Start a build with these options (${mod}B)`}
        aria-describedby={blocker ? 'build-blocker' : undefined}
      >
        Build
      </button>
      <button
        type="button"
        className="danger"
        onClick={() => void c.stop()}
        disabled={!running || forceRequested}
        title={
          status === 'Stopping'
            ? 'Press again to kill the build worker now'
            : // The desktop menu adds Shift+F5: IBus (Ubuntu 22.04) takes Ctrl+. in text fields.
              `Stop at the next step boundary (${web ? 'Ctrl+.' : 'Ctrl+. or Shift+F5'})`
        }
      >
        Stop
      </button>
      <button type="button" onClick={() => void c.save()} disabled={!engineAvailable} title={web ? `Download the engine (${mod}S)` : `Save the engine to a file (${mod}S)`}>
        Save engine…
      </button>
      {blocker ? (
        <span id="build-blocker" className="build-blocker" title={blocker}>
          {blocker}
        </span>
      ) : (
        <span className="toolbar-spacer" />
      )}
      {model && (
        <span className="toolbar-model" title={modelTooltip(model.path, model.displayName, c.client.capabilities.host)}>
          {model.displayName}
        </span>
      )}
      <BackendBadge simulated={simulated} />
    </header>
  );
}

function BackendBadge({ simulated }: { simulated: boolean | undefined }) {
  const backend = useApp((s) => s.live?.backend);
  const version = useApp((s) => s.live?.backendVersion);
  if (backend === 'tensorrt') {
    return <span className="badge badge-trt">TensorRT {version ?? ''}</span>;
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
