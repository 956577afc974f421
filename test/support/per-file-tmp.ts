// Vitest setup file: each test file gets a temp folder of its own as TMPDIR, and a state folder
// inside it as TBS_STATE_DIR, before any of its code runs. Files run two at a time (vitest.config.mts),
// and code that falls back on the temp folder (the default engine folder
// $TMPDIR/trt-build-studio/engines, crash records, build profiles) would otherwise share one
// folder between two files at once: one file's engines, profiles or cleanup would show up in the
// other's assertions. Each file runs in a process of its own (pool: forks), so this reaches only
// that file and the processes it starts (they inherit the environment). Files that name their own
// TBS_STATE_DIR or TMPDIR still do (they set it after this runs).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll } from 'vitest';

// Short name under the machine's temp folder: some tests put Unix sockets in it (a 108-byte limit).
const fileTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-t-'));
// Like the machine's /tmp (sticky, writable by all): tests that run the CLI as another user
// (nobody) must still reach their models in it; mkdtemp makes it 0700.
fs.chmodSync(fileTmp, 0o1777);
process.env.TMPDIR = fileTmp;
process.env.TBS_STATE_DIR = path.join(fileTmp, 'state');

// After the file's own afterAll hooks (after-hooks run last-registered first), which stop the
// processes that might still write here.
afterAll(() => fs.rmSync(fileTmp, { recursive: true, force: true }));
