const { BuildSession } = require('./dist/apps/service/build-session.js');
const N = 1000000;
let onMsg;
const ch = { pid: 1, send() {}, onMessage(cb) { onMsg = cb; }, onExit(cb) {}, kill() {} };
const s = new BuildSession('b', { modelPath: '/x', outputPath: '/tmp/none.engine', options: { backend: 'simulated' }, backend: 'simulated', backendInfo: { name: 'simulated', available: true }, summary: {}, layers: [] }, { cancelKillMs: 1000, retainEvents: 20000, onSlotFree() {} });
s.launch(() => ch);
let got = 0; s.subscribe((e) => (got += e.length));
const batches = []; let seq = 0; let id = 0;
for (let b = 0; b < N / 500; b++) { const evs = []; for (let i = 0; i < 500; i++) { const k = seq % 10; const e = k === 0 ? { v: 1, buildId: 'b', seq: seq++, t: seq, type: 'phase.start', id: ++id, parentId: null, name: 'Measuring tactic time', nbSteps: 4, instance: id } : k === 9 ? { v: 1, buildId: 'b', seq: seq++, t: seq, type: 'phase.finish', id, stepsDone: 4, early: false } : { v: 1, buildId: 'b', seq: seq++, t: seq, type: 'phase.step', id, step: 1, stepsDone: 2 }; evs.push(e); } batches.push({ type: 'events', events: evs }); }
setTimeout(() => { const t = process.hrtime.bigint(); for (const m of batches) onMsg(m); const ms = Number(process.hrtime.bigint() - t) / 1e6; console.log('ingest', Math.round(N / ms * 1000), 'events/s, delivered', got, 'phases', s.record().phases.length); process.exit(0); }, 10);
