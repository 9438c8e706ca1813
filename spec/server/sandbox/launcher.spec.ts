/**
 * The executor-wide sandbox settings, through a real executor: no usable bwrap means every
 * sandboxed start is refused (never run unconfined), and `inherit` runs without a PID
 * namespace.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { configureSandbox } from '../../../src/server/sandbox/launcher.js';
import { RawClient, outputText, startParams } from '../rawClient.js';
import { startTsExecServer } from '../../support/tsExecServer.js';
import type { RunningExecServer } from '../../support/codexExecServer.js';
import { hostProcessesMatching, readOnly, workspaceWrite } from '../../support/sandboxProfiles.js';

let server: RunningExecServer;
let client: RawClient;
let work: string;
let counter = 0;

beforeAll(async () => {
  work = mkdtempSync(join(homedir(), '.cache', 'execrx-launcher-'));
  server = await startTsExecServer();
  client = await RawClient.connect(server.url);
  await client.handshake();
});

afterEach(() => configureSandbox({ bwrapPath: undefined, pidNamespace: 'isolate' }));

afterAll(async () => {
  await client.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

async function start(argv: string[], writable = false) {
  counter += 1;
  const processId = `launcher-${counter}`;
  const sandbox = writable ? workspaceWrite(work) : readOnly(work);
  const reply = await client.request(
    'process/start',
    startParams(processId, argv, { cwd: `file://${work}`, sandbox }),
    20_000,
  );
  return { processId, reply };
}

describe('sandbox launcher', () => {
  it('refuses a sandboxed start when bwrap is missing, and nothing runs', async () => {
    configureSandbox({ bwrapPath: '/nonexistent/bwrap' });
    const marker = join(work, 'ran');
    const { reply } = await start(['/bin/sh', '-c', `touch ${marker}`]);
    expect(reply.error?.code).toBe(-32602);
    expect(reply.error?.message).toMatch(
      /^sandbox intent cannot be enforced on this executor: bubblewrap at \/nonexistent\/bwrap cannot set up the sandbox/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses when bwrap cannot set up its namespaces (here: a program that fails)', async () => {
    configureSandbox({ bwrapPath: '/bin/false' });
    const { reply } = await start(['/bin/true']);
    expect(reply.error?.code).toBe(-32602);
    expect(reply.error?.message).toContain('cannot set up the sandbox');
  });

  it('inherit: no PID namespace, so the command sees the host processes', async () => {
    configureSandbox({ pidNamespace: 'inherit' });
    const { processId, reply } = await start([
      '/bin/sh',
      '-c',
      `kill -0 ${process.pid} && echo host-visible`,
    ]);
    expect(reply.error).toBeUndefined();
    await client.waitClosedNotification(processId, 20_000);
    expect(outputText(client, processId)).toBe('host-visible\n');
  });

  it("inherit: terminate still ends the background children (they share bwrap's group)", async () => {
    configureSandbox({ pidNamespace: 'inherit' });
    const marker = `${43 + (process.pid % 1000) / 1000}`;
    const { processId, reply } = await start([
      '/bin/sh',
      '-c',
      `sleep ${marker} & sleep ${marker}`,
    ]);
    expect(reply.error).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await client.call('process/terminate', { processId })).toEqual({ running: true });
    await client.waitClosedNotification(processId, 20_000);
    expect(client.notifications('process/exited', processId)[0]?.params?.exitCode).toBe(137);
    expect(hostProcessesMatching(`sleep ${marker}`)).toBe('');
  });

  it('a missing carve-out stays protected while another process still uses its mount point', async () => {
    const long = await start(
      ['/bin/sh', '-c', 'sleep 1; mkdir .codex/late 2>&1; echo rc=$?'],
      true,
    );
    const short = await start(['/bin/true'], true);
    await client.waitClosedNotification(short.processId, 20_000);
    // The short process is gone; its release must not remove what the long one still masks.
    expect(existsSync(join(work, '.codex'))).toBe(true);
    await client.waitClosedNotification(long.processId, 20_000);
    expect(outputText(client, long.processId)).toContain('Read-only file system');
    expect(existsSync(join(work, '.codex', 'late'))).toBe(false);
    const deadline = Date.now() + 5_000;
    while (existsSync(join(work, '.codex')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(existsSync(join(work, '.codex'))).toBe(false);
  });

  it('isolate (the default): the host processes are out of reach', async () => {
    const { processId } = await start(['/bin/sh', '-c', `kill -0 ${process.pid} || echo hidden`]);
    await client.waitClosedNotification(processId, 20_000);
    expect(outputText(client, processId)).toContain('hidden\n');
  });
});
