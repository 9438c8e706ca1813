/** `execrx serve --linux-sandbox-pid-namespace` and `--bwrap`, through the built CLI. */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readOnly } from '../support/sandboxProfiles.js';
import { RawClient, outputText, startParams } from '../server/rawClient.js';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

async function sandboxedRun(args: string[], script: string) {
  const server = startCli(['serve', '--no-warm-up', ...args]);
  await server.waitForStdout('\n');
  const url = server.stdoutSoFar().split('\n')[0] as string;
  const work = mkdtempSync(join(homedir(), '.cache', 'execrx-serve-sandbox-'));
  const client = await RawClient.connect(url);
  try {
    await client.handshake();
    const reply = await client.request(
      'process/start',
      startParams('p', ['/bin/sh', '-c', script], {
        cwd: `file://${work}`,
        sandbox: readOnly(work),
      }),
      20_000,
    );
    if (reply.error) return { error: reply.error, output: '' };
    await client.waitClosedNotification('p', 20_000);
    return { error: undefined, output: outputText(client, 'p') };
  } finally {
    await client.close();
    server.child.kill('SIGTERM');
    await server.result;
    rmSync(work, { recursive: true, force: true });
  }
}

describe('execrx serve sandbox options', () => {
  it("refuses an unknown PID namespace mode with the binary's wording", async () => {
    const result = await runCli(['serve', '--linux-sandbox-pid-namespace', 'shared']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "invalid value 'shared' for '--linux-sandbox-pid-namespace <MODE>': expected 'isolate' or 'inherit'",
    );
  });

  it('isolate by default; inherit lets the command see host processes', async () => {
    const script = `kill -0 ${process.pid} 2>/dev/null && echo visible || echo hidden`;
    expect((await sandboxedRun([], script)).output).toBe('hidden\n');
    expect((await sandboxedRun(['--linux-sandbox-pid-namespace', 'inherit'], script)).output).toBe(
      'visible\n',
    );
  });

  it('--bwrap naming no usable bubblewrap refuses sandboxed requests', async () => {
    const result = await sandboxedRun(['--bwrap', '/nonexistent/bwrap'], 'echo ran');
    expect(result.error?.code).toBe(-32602);
    expect(result.error?.message).toContain('sandbox intent cannot be enforced on this executor');
  });
});
