import { useEffect, useState } from 'react';
import type { BuildRecord, WatchedBuild } from '../../shared/protocol.js';
import { useApp, useController } from '../hooks.js';
import { formatBytes, formatDuration } from '../../shared/format.js';
import { fmtCount } from '../lib/panel-numbers.js';
import { recordDurationMs } from '../store/controller.js';
import { baseName, isUserPath, splitForMiddleEllipsis } from '../../shared/file-names.js';

/** How often the list is asked again (watched builds start without this page). */
export const HISTORY_POLL_MS = 2000;

/** This session's builds, newest first; picking one shows its tree and figures. */
export function History() {
  const c = useController();
  const history = useApp((s) => s.history);
  const live = useApp((s) => s.live);
  const names = useApp((s) => s.modelNames);
  const host = c.client.capabilities.host;
  // The browser opens a build's engine and manifest by link; the desktop opens the file manager at
  // them (and names their paths in the tooltip).
  const links = c.client.buildFileLinks?.bind(c.client);
  const show = c.client.showBuildFile?.bind(c.client);
  const [showError, setShowError] = useState<string | null>(null);
  // Builds this page did not start (a program under `watch`, docs/watch.md) appear in the list by
  // themselves: the list is asked again every few seconds while the page is shown, and a watched
  // build that starts while nothing runs on screen is followed live.
  useEffect(() => {
    const t = setInterval(() => {
      if (typeof document !== 'undefined' && document.hidden) return;
      void c.refreshHistory();
    }, HISTORY_POLL_MS);
    return () => clearInterval(t);
  }, [c]);
  const newWatched = history.find((r) => r.watched && r.state === 'running' && r.id !== live?.id);
  const idle = !live || live.outcome !== undefined;
  const followId = idle ? newWatched?.id : undefined;
  const [followed] = useState(() => new Set<string>());
  useEffect(() => {
    // Each watched build once: a user who picks another build afterwards keeps it on screen.
    if (followId && !followed.has(followId)) {
      followed.add(followId);
      c.watch(followId);
    }
  }, [c, followId, followed]);
  const reveal = (id: string, file: 'engine' | 'manifest') => {
    setShowError(null);
    show?.(id, file).catch((e: Error) => setShowError(e.message));
  };
  // The live build is mutated in place: subscribe to its outcome so its row follows at once.
  useApp((s) => s.live?.outcome?.status);
  // A running build's time counts up, once a second (not every frame).
  useApp((s) => (s.live && !s.live.outcome ? Math.floor(s.live.elapsedMs(Date.now()) / 1000) : -1));
  const rows = [...history].reverse();
  // The build on screen may have ended after the list was fetched (the record is updated a moment
  // after the stream's last event): its outcome comes from the stream, so the row never says
  // "running" beside a finished build.
  const liveFinal = live?.outcome?.status;
  const stateOf = (r: BuildRecord): string => (r.id === live?.id && liveFinal ? liveFinal : r.state);
  const nameOf = (r: BuildRecord) => (r.watched ? watchedName(r.watched) : (r.model?.fileName ?? names[r.modelPath] ?? baseName(r.modelPath)));
  // Two different models under one name (two "model.onnx" from different folders) are told apart
  // by their size, shown beside the name; the tooltip has the full name, path and size.
  const identities = new Map<string, Set<string>>();
  for (const r of rows) {
    const ids = identities.get(nameOf(r)) ?? new Set<string>();
    ids.add(identity(r));
    identities.set(nameOf(r), ids);
  }
  return (
    <section className="panel history" aria-labelledby="hist-h">
      <h2 id="hist-h">History</h2>
      {showError && (
        <p className="engine-msg error" role="alert">
          {showError}
        </p>
      )}
      {rows.length === 0 && <p className="muted">No builds in this session yet.</p>}
      {rows.length > 0 && (
        <table className="hist">
          <colgroup>
            <col />
            <col className="c-outcome" />
            <col className="c-time" />
            <col className="c-cache" />
          </colgroup>
          <thead>
            <tr>
              <th>Model</th>
              <th>Outcome</th>
              <th className="num">Time</th>
              <th className="num" title="timing-cache hits / entries added">
                Cache
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr
                key={r.id}
                className={r.id === live?.id ? 'current' : undefined}
                tabIndex={0}
                onClick={() => c.watch(r.id)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') c.watch(r.id);
                }}
                aria-label={`Build ${r.id}: ${stateOf(r)}`}
              >
                <td className="path" title={tooltip(r, nameOf(r), isUserPath(r.modelPath, nameOf(r), host))}>
                  <div className="name-cell">
                    <FileName name={nameOf(r)} />
                    {(identities.get(nameOf(r))?.size ?? 0) > 1 && <span className="muted"> ({r.model ? formatBytes(r.model.fileBytes) : shortPath(r.modelPath)})</span>}
                    {r.simulated && <span className="tag">sim</span>}
                    {r.watched && (
                      <span className="tag" title={`a build inside ${r.watched.program} (pid ${r.watched.pid}), watched through its ${r.watched.probe} probe`}>
                        watched · pid {r.watched.pid}
                      </span>
                    )}
                  </div>
                  {!links && show && r.engineAvailable && (
                    <div className="hist-files">
                      {(['engine', 'manifest'] as const).map((file, i) => (
                        <span key={file}>
                          {i > 0 && ' · '}
                          <button
                            type="button"
                            className="link"
                            title={`Show the build's ${file} in the file manager`}
                            onClick={(e) => {
                              e.stopPropagation();
                              reveal(r.id, file);
                            }}
                            onKeyDown={(e) => e.stopPropagation()}
                          >
                            {file}
                          </button>
                        </span>
                      ))}
                    </div>
                  )}
                  {links && r.engineAvailable && (
                    <div className="hist-files">
                      <a href={links(r.id).engine} onClick={(e) => e.stopPropagation()} download>
                        engine
                      </a>{' '}
                      ·{' '}
                      <a href={links(r.id).manifest} onClick={(e) => e.stopPropagation()} target="_blank" rel="noopener noreferrer">
                        manifest
                      </a>
                    </div>
                  )}
                </td>
                <td className={`outcome o-${stateOf(r)}`}>{r.outcome?.reused ? 'reused' : stateOf(r)}</td>
                <td className="num" title={stateOf(r) === 'running' || stateOf(r) === 'queued' ? 'so far' : undefined}>
                  {r.id === live?.id ? formatDuration(live.elapsedMs(Date.now())) : fmtDuration(r)}
                </td>
                <td className="num" title={cacheTitle(r, stateOf(r))}>
                  {cacheText(r, stateOf(r))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * A name on one line that, when the cell is too narrow, loses the middle: the head is cut with an
 * ellipsis by CSS, the tail (the stem's last characters and the extension) always shows, so
 * "resnet50-…-v2.onnx" still tells v1 from v2. The text is the whole name, for copying.
 */
function FileName({ name }: { name: string }) {
  const { head, tail } = splitForMiddleEllipsis(name);
  return (
    <span className={head ? 'file-name cut' : 'file-name'}>
      {head && <span className="name-head">{head}</span>}
      <span className="name-tail">{tail}</span>
    </span>
  );
}

/** A finished build's duration; a running one's time so far (from its start); "queued" before it starts. */
function fmtDuration(r: BuildRecord): string {
  const d = recordDurationMs(r);
  if (d !== undefined) return formatDuration(d);
  if (r.startedAt) return formatDuration(Date.now() - Date.parse(r.startedAt));
  return 'queued';
}

const isRunning = (state: string) => state === 'running' || state === 'queued' || state === 'cancelling';

/** Hits / entries added; "none" for a build that used no timing cache, nothing while running. */
function cacheText(r: BuildRecord, state: string): string {
  const cache = r.cache ?? r.outcome?.cache;
  if (!cache) return isRunning(state) ? '' : 'none';
  const hits = cache.hits === undefined ? '?' : fmtCount(cache.hits);
  return `${hits} / +${fmtCount(cache.added)}`;
}

function cacheTitle(r: BuildRecord, state: string): string {
  if (r.cache ?? r.outcome?.cache) return 'timing-cache hits / entries added';
  return isRunning(state) ? 'the timing-cache figures come when the build has them' : 'this build used no timing-cache file';
}

/** Builds of one model file share it; uploads have a new path each time, so size and graph count too. */
function identity(r: BuildRecord): string {
  return r.model ? `${r.model.fileBytes}|${r.model.nodeCount}|${r.model.graphName}` : r.modelPath;
}

/** `showPath`: the model's path means something to the user (not the browser's upload copy). */
function tooltip(r: BuildRecord, name: string, showPath: boolean): string {
  if (r.watched) return watchedTooltip(r.watched);
  const lines = [name];
  if (r.model) lines.push(`${formatBytes(r.model.fileBytes)}, ${fmtCount(r.model.nodeCount)} nodes`);
  if (showPath) lines.push(shortPath(r.modelPath));
  if (r.outputPath) lines.push(`engine: ${shortPath(r.outputPath)}`);
  if (r.outcome?.manifestPath) lines.push(`manifest: ${shortPath(r.outcome.manifestPath)}`);
  if (r.outcome?.reused) lines.push(`reused the engine of build ${r.outcome.reused.fromBuildId}`);
  return lines.join('\n');
}

/**
 * A watched build (a user's own program, docs/watch.md) goes by its program: the interpreter and
 * the script when there is one ("python3 build.py"), else the executable ("trtexec").
 */
function watchedName(w: WatchedBuild): string {
  const [first, second] = w.argv.length ? w.argv : [w.program];
  return second && !second.startsWith('-') && /^(python[\d.]*|node|bash|sh)$/.test(baseName(first)) ? `${baseName(first)} ${baseName(second)}` : baseName(first);
}

/** What is known of a watched build, and that the model file is not. */
function watchedTooltip(w: WatchedBuild): string {
  const cmd = w.argv.join(' ');
  const lines = [`watched: ${cmd.length > 300 ? `${cmd.slice(0, 299)}…` : cmd}`, `pid ${w.pid} · ${w.probe} probe${w.api ? ` · ${w.api}` : ''}`];
  lines.push(w.network?.name ? `network ${w.network.name}${w.network.layers !== undefined ? `, ${w.network.layers} layers` : ''}` : 'model unknown');
  return lines.join('\n');
}

/** The last two folders and the file: enough to tell copies apart without a screen-wide path. */
function shortPath(p: string): string {
  const parts = p.split(/[\\/]/).filter(Boolean);
  return parts.length > 3 ? `…/${parts.slice(-3).join('/')}` : p;
}
