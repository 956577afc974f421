// The page's Content-Security-Policy forbids eval, and zod, which the renderer uses to check
// build-view snapshots, probes for eval (`new Function`) before compiling fast parsers. The probe
// is caught, but Chromium still reports the refused eval as a console error. Telling zod up front
// not to try keeps the console clean (console errors are how CSP problems get noticed) at no cost
// that matters for a few snapshots per build.
import { z } from 'zod';

z.config({ jitless: true });
