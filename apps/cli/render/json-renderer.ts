// --json: exactly the protocol's events, one per line; the last line is build.finished.
// Nothing else ever goes to stdout (messages go to stderr), so `| jq` always works.
import type { BuildEvent } from '../../shared/protocol.js';
import type { BuildRenderer } from './renderer.js';

export class JsonRenderer implements BuildRenderer {
  constructor(private readonly out: NodeJS.WritableStream = process.stdout) {}

  begin(): void {}

  events(events: BuildEvent[]): void {
    let chunk = '';
    for (const e of events) chunk += JSON.stringify(e) + '\n';
    this.out.write(chunk);
  }

  stopping(kind: 'cancel' | 'kill', signal: string): void {
    process.stderr.write(kind === 'cancel' ? `${signal}: stopping the build at the next step (again to kill it)\n` : `${signal}: killing the build worker\n`);
  }

  end(): void {}
}
