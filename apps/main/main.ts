// Electron main: wires the modules of apps/main together and owns the app's lifecycle. Each
// concern lives in its own module; this file only decides the order things happen in.
//
// Not run here: the Electron binary cannot be downloaded on the machines this was written on.
// The modules are unit-tested with Electron mocked; this wiring was only type-checked.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { app, BrowserWindow, crashReporter, dialog, ipcMain, Menu, Notification, powerSaveBlocker, protocol, session, shell } from 'electron';
import { createBuildService } from '../service/build-service.js';
import { startDesktopStudio } from '../service/watched/studio-probe.js';
import { APP_INDEX_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, createAppProtocolHandler } from './app-protocol.js';
import { enginesDir, resolveAppLayout } from './app-paths.js';
import { applyIdentity } from './app-identity.js';
import { modelPathFromArgv } from './argv.js';
import { BuildFeedback } from './build-feedback.js';
import { startLocalCrashDumps } from './crash-dumps.js';
import { createDialogs } from './dialogs.js';
import { moveLegacyEngines } from './engines-folder.js';
import { registerIpcHandlers } from './ipc-handlers.js';
import { PUSH, type HostAction } from './ipc-channels.js';
import { buildMenuTemplate, setBuildRunning } from './menu.js';
import { createNotifier } from './notifier.js';
import { OpenRequests } from './open-requests.js';
import { BuildSleepGuard } from './power-save.js';
import { installQuitGuard, type QuitGuard } from './quit-guard.js';
import { RecentFiles } from './recent-files.js';
import { SaveFolders } from './save-folders.js';
import { PluginChoices } from './plugin-choices.js';
import { createSenderCheck } from './sender-check.js';
import { askStopRunningBuild } from './stop-confirm.js';
import { SubscriptionHub } from './subscription-hub.js';
import { createMainWindow, hardenSession } from './window.js';
import { createUtilityLauncher } from './worker-launcher.js';
import { sweepTempEngines } from '../service/temp-engines.js';
import { installQuitSignals } from './quit-signals.js';
import { dropTestOnlyEnv } from './test-env.js';
import { TrtLocation } from './trt-location.js';

const log = (m: string) => console.error(`[trt-build-studio] ${m}`);

// Name, desktop name (the window's app id on Linux) and Windows AppUserModelID, before 'ready'.
applyIdentity(app);

// A packaged app ignores test-only variables (TBS_TEST_*, TBS_E2E_*): gone before anything reads them.
const droppedTestEnv = dropTestOnlyEnv(process.env, app.isPackaged);
if (droppedTestEnv.length) log(`packaged app: ignoring test-only variables ${droppedTestEnv.join(', ')}`);

// Tests (and users who want a throwaway profile) can keep recent files etc. out of the real profile.
if (process.env.TBS_USER_DATA_DIR) app.setPath('userData', path.resolve(process.env.TBS_USER_DATA_DIR));

// Must happen before 'ready': the scheme's privileges are fixed when Chromium starts.
protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);
// Crash dumps kept locally, never uploaded (crash-dumps.ts); before 'ready' so every process is covered.
try {
  log(`crash dumps (local only) go to ${startLocalCrashDumps(crashReporter, () => app.getPath('crashDumps'))}`);
} catch (e) {
  log(`crash reporter not started: ${(e as Error).message}`);
}

if (!app.requestSingleInstanceLock()) {
  // Another instance has the lock; it receives our argv through 'second-instance'.
  app.quit();
} else {
  start();
}

function start(): void {
  let win: BrowserWindow | null = null;
  let buildRunning = false;
  let runningCount = 0;
  /** Set once the app is ready: opens the window (again). */
  let openWindow: (() => void) | null = null;
  let quitGuard: QuitGuard | null = null;
  const layout = resolveAppLayout(app.getAppPath(), __dirname, app.isPackaged);
  const openRequests = new OpenRequests(() => (win && !win.isDestroyed() ? win.webContents : null));

  const initial = modelPathFromArgv(process.argv, process.cwd(), app.isPackaged);
  if (initial) openRequests.request(initial);

  app.on('second-instance', (_event, argv, cwd) => {
    const p = modelPathFromArgv(argv, cwd, app.isPackaged);
    if (p) openRequests.request(p);
    if (win && !win.isDestroyed()) {
      if (win.isMinimized()) win.restore();
      win.show();
      win.focus();
    } else if (quitGuard?.requestRelaunch()) {
      // The window is gone because we are quitting (builds being stopped): the user asked for
      // the app again, so it starts anew once the quit is done instead of the launch vanishing.
      log('launched again while quitting: relaunching once the builds have stopped');
    } else {
      openWindow?.();
    }
  });
  // macOS: files dropped on the dock icon or opened from Finder.
  app.on('open-file', (event, p) => {
    event.preventDefault();
    openRequests.request(p);
  });

  void app.whenReady().then(async () => {
    if (!existsSync(path.join(layout.rendererDir, 'index.html'))) {
      log(`the renderer is not built (${layout.rendererDir}/index.html missing): run "npm run build:renderer"`);
    }
    protocol.handle(APP_SCHEME, createAppProtocolHandler(layout.rendererDir));
    hardenSession(session.defaultSession);

    const userData = app.getPath('userData');
    const settingsFile = path.join(userData, 'settings.json');
    const trtLocation = new TrtLocation(settingsFile);
    const dialogs = createDialogs(process.env, { isPackaged: app.isPackaged });
    const launcher = createUtilityLauncher({
      workerPath: layout.workerPath,
      // Asked at each launch: a TensorRT location chosen in the app applies to the next worker.
      env: () => ({ ...layout.workerEnv, ...trtLocation.workerEnv() }),
      log,
      app,
      // What a crashing worker printed last (see worker-launcher.ts); the newest few are kept.
      stderrDir: path.join(app.getPath('logs'), 'workers'),
    });
    // Engines are large: the data folder, not the configuration folder they used to be in.
    const outputDir = enginesDir(process.env, app.getPath('home'));
    await moveLegacyEngines(path.join(userData, 'engines'), outputDir, log).catch((e: Error) => log(`moving old engines: ${e.message}`));
    // Temp engines left by a session that died (logout, SIGKILL): only files older than this
    // process, so no build of ours is writing them (service/temp-engines.ts says what else is checked).
    await sweepTempEngines(outputDir, { olderThanMs: Date.now() - process.uptime() * 1000, log }).catch((e: Error) => log(`sweeping temp engines: ${e.message}`));
    const service = createBuildService({ launcher: launcher.launch, outputDir });
    // Watched builds (docs/watch.md): programs run under `watch`, and the drop-in monitors, find the
    // app in the studio registry and show their builds here. Not run in a real Electron here.
    void startDesktopStudio(service, log);
    const sleepGuard = new BuildSleepGuard(powerSaveBlocker, log);

    const sendAction = (action: HostAction) => {
      if (win && !win.isDestroyed()) win.webContents.send(PUSH.hostAction, { action });
    };
    let recentList: string[] = [];
    const refreshMenu = () => {
      const template = buildMenuTemplate({
        isMac: process.platform === 'darwin',
        isPackaged: app.isPackaged,
        sendAction,
        recent: recentList,
        openRecent: (p) => openRequests.request(p),
        chooseTrtLocation: () => void chooseTrtLocation(),
      });
      const menu = Menu.buildFromTemplate(template);
      Menu.setApplicationMenu(menu);
      setBuildRunning(menu, buildRunning);
    };
    const recent = new RecentFiles(path.join(app.getPath('userData'), 'recent-models.json'), {
      addToOs: (p) => app.addRecentDocument(p),
      onChange: (list) => {
        recentList = list;
        refreshMenu();
      },
    });

    const chooseTrtLocation = async () => {
      const chosen = await dialogs.chooseTrtLibDir(win && !win.isDestroyed() ? win : null, trtLocation.get() ?? undefined);
      if (chosen === null) return;
      try {
        await trtLocation.set(chosen);
      } catch (e) {
        log(`TensorRT location not changed: ${(e as Error).message}`);
        return;
      }
      log(`TensorRT location: ${chosen} (TBS_TRT_LIB_DIR of the next worker)`);
      // The service keeps the backend list for a minute; the next listing must ask a worker that
      // has the new folder. Then the page lists the backends again (running builds carry on:
      // they live in main, and the reloaded page picks them up).
      service.forgetBackends();
      if (win && !win.isDestroyed()) win.webContents.reload();
    };
    const hub = new SubscriptionHub(service);
    const notifier = createNotifier(
      Notification,
      () => {
        if (win && !win.isDestroyed()) {
          win.show();
          win.focus();
        }
      },
      log,
    );
    const feedback = new BuildFeedback({
      service,
      window: () => win,
      notify: (title, body) => notifier.notify(title, body),
      setStopEnabled(running) {
        buildRunning = running;
        runningCount = running ? Math.max(1, feedback.activeCount) : 0;
        setBuildRunning(Menu.getApplicationMenu(), running);
        sleepGuard.set(running);
      },
    });

    registerIpcHandlers({
      ipcMain,
      service,
      isTrustedSender: createSenderCheck(() => (win && !win.isDestroyed() ? [win.webContents.id] : [])),
      dialogs,
      recent,
      openRequests,
      hub,
      windowOf: (event) => BrowserWindow.fromWebContents(event.sender),
      saveFolders: new SaveFolders(settingsFile, app.getPath('documents')),
      pluginChoices: new PluginChoices(path.join(app.getPath('userData'), 'plugin-libraries.json')),
      showInFolder: (file) => shell.showItemInFolder(file),
      onBuildStarted: (id, modelPath) => feedback.track(id, modelPath),
      annotateBackends: (list) => trtLocation.annotate(list),
      log,
    });

    const askToStop = () => askStopRunningBuild(dialog, win && !win.isDestroyed() ? win : null, runningCount);
    quitGuard = installQuitGuard({
      app,
      service,
      killWorkers: () => launcher.killAll(),
      isBuilding: () => buildRunning,
      confirmStop: askToStop,
      onStateChange: (state) => {
        if (state === 'done') {
          feedback.dispose();
          sleepGuard.set(false);
        }
      },
      log,
    });
    const guard = quitGuard;
    // SIGTERM/SIGINT (session manager, `kill`, Ctrl+C in the terminal) stop the builds and quit
    // without asking: nobody may be there to answer. Installed now, after Electron's own handlers
    // (quit-signals.ts says why the order matters).
    installQuitSignals(process, () => guard.quitConfirmed(), log);

    void recent.get().then((list) => {
      recentList = list;
      refreshMenu();
    });
    refreshMenu();

    openWindow = () => {
      if (win && !win.isDestroyed()) return;
      win = createMainWindow({ preloadPath: layout.preloadPath, url: APP_INDEX_URL, iconPath: layout.iconPath, log });
      wireWindow(win);
    };
    const wireWindow = (w: BrowserWindow) => {
      const contentsId = w.webContents.id;
      // Closing the window while a build runs asks first (the window stays until the user decides).
      w.on('close', (event) => {
        if (guard.state !== 'idle' || !buildRunning) return;
        event.preventDefault();
        void askToStop().then(
          (stop) => stop && guard.quitConfirmed(),
          (e: Error) => log(`could not ask before closing: ${e.message}; the build keeps running`),
        );
      });
      // A reload starts a fresh page: its old subscriptions and listeners are gone.
      w.webContents.on('did-start-navigation', (details) => {
        if (details.isMainFrame && !details.isSameDocument) {
          hub.closeAllFor(contentsId);
          openRequests.reset();
        }
      });
      // A preload that throws leaves the page without window.trtBuildStudio; the page says so
      // (apps/renderer/host-client.ts) and the error itself is here.
      w.webContents.on('preload-error', (_e, preloadPath, error) => log(`preload ${preloadPath} failed: ${error.stack ?? error.message}`));
      let lastRendererReload = 0;
      w.webContents.on('render-process-gone', (_e, details) => {
        hub.closeAllFor(contentsId);
        openRequests.reset();
        // Builds live in main and the service, so a reloaded page picks them up again; but a page
        // that dies on load would reload forever, so at most once every 10 s.
        const now = Date.now();
        const reload = details.reason !== 'clean-exit' && now - lastRendererReload > 10_000;
        log(`renderer gone (${details.reason})${reload ? '; reloading' : ''}`);
        if (reload && !w.isDestroyed()) {
          lastRendererReload = now;
          w.reload();
        }
      });
      w.on('closed', () => {
        hub.closeAllFor(contentsId);
        openRequests.reset();
        win = null;
      });
    };
    openWindow();
  });

  // Linux and Windows: closing the window quits (through the quit guard, which stops builds).
  app.on('window-all-closed', () => app.quit());
}
