const { fork } = require('child_process');
const { readModel } = require('./dist/apps/service/model-reader.js');
(async () => {
  const { summary, layers } = await readModel('/tmp/tbs-big/many.onnx');
  const c = fork('dist/apps/worker/worker.js', [], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let n = 0, msgs = 0; const t0 = Date.now();
  c.on('message', (m) => { if (m.type === 'events') { n += m.events.length; msgs++; } if (m.type === 'result') console.log('result after', Date.now() - t0, 'ms; events', n, 'msgs', msgs, 'native duration', m.finished.durationMs); });
  c.send({ type: 'start', request: { buildId: 'x', backend: 'simulated', modelPath: '/tmp/tbs-big/many.onnx', outputPath: '/tmp/tbs-big/x.engine', options: { backend: 'simulated', simDuration: 2 }, layers } });
})();
