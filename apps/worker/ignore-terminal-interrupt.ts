// Imported first by worker.ts, so it runs before the rest of the worker loads.
// Ctrl-C in a terminal signals the whole foreground process group; the host turns it into a
// cancel (and a second Ctrl-C into a kill), so the worker must not die of it on its own. SIGTERM
// still ends the worker (Electron's utilityProcess.kill() sends SIGTERM).
process.on('SIGINT', () => {});
