/**
 * Pipe-mode children started by the executor's spawner helper (src/server/spawner.ts): once the
 * helper is ready, children are its children, and everything a client sees (exit codes, death
 * by signal, stdin, output, spawn errors) is what a direct start gives; the helper's death and
 * the executor's stop are handled.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { b64, outputText, RawClient, startParams } from './rawClient.js';

const running: { executor: RunningExecServer; client: RawClient }[] = [];
let nextId = 0;

afterEach(async () => {
  for (const { executor, client } of running.splice(0)) {
    await client.close();
    await executor.stop();
  }
});

async function startExecutor(): Promise<RawClient> {
  const executor = await startTsExecServer();
  const client = await RawClient.connect(executor.url);
  await client.handshake();
  running.push({ executor, client });
  return client;
}

/** Runs argv to `process/closed`; returns its output and exit code. */
async function run(
  client: RawClient,
  argv: string[],
): Promise<{ output: string; exitCode: unknown }> {
  const processId = `p${nextId++}`;
  await client.call('process/start', startParams(processId, argv));
  await client.waitClosedNotification(processId);
  const exited = client.notifications('process/exited', processId)[0];
  return { output: outputText(client, processId), exitCode: exited?.params?.exitCode };
}

/** The pid of the process that started the child. */
async function parentPid(client: RawClient): Promise<number> {
  return Number((await run(client, ['sh', '-c', 'echo $PPID'])).output);
}

/** Starts children until one is the helper's (bounded); returns the helper's pid. */
async function helperPid(client: RawClient): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const pid = await parentPid(client);
    if (pid !== process.pid) return pid;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the spawner never became ready');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 100 && isAlive(pid); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

describe('the spawner', () => {
  it('starts the first child directly, later ones from the helper, with the same results', async () => {
    const client = await startExecutor();
    // The first start launches the helper and spawns directly meanwhile.
    const directError = await client.request(
      'process/start',
      startParams('missing-direct', ['/nonexistent/program']),
    );
    const helper = await helperPid(client);
    expect(helper).not.toBe(process.pid);

    const helperError = await client.request(
      'process/start',
      startParams('missing-helper', ['/nonexistent/program']),
    );
    expect(helperError.error).toEqual(directError.error);
    expect(helperError.error?.message).toContain('No such file or directory (os error 2)');

    expect(await run(client, ['sh', '-c', 'exit 7'])).toEqual({ output: '', exitCode: 7 });
    expect((await run(client, ['sh', '-c', 'kill -TERM $$'])).exitCode).toBe(128 + 15);
    // stdout and stderr are two pipes: their order against each other is not kept.
    const both = await run(client, ['sh', '-c', 'echo out; echo err >&2']);
    expect(both.exitCode).toBe(0);
    expect(['out\nerr\n', 'err\nout\n']).toContain(both.output);
    // The leader of its own session and process group, as a direct start makes it
    // (/proc/<pid>/stat fields 5 and 6: process group, session).
    const ids = await run(client, ['sh', '-c', 'echo $$ $(cut -d" " -f5,6 /proc/$$/stat)']);
    expect(ids.output.trim()).toMatch(/^(\d+) \1 \1$/);

    await client.call('process/start', startParams('cat', ['cat'], { pipeStdin: true }));
    await client.call('process/write', {
      processId: 'cat',
      chunk: b64('through stdin\n'),
      writeId: '1',
    });
    // The write is answered before cat has echoed it: wait (bounded) for the echo, then stop it.
    for (let attempt = 0; attempt < 100 && outputText(client, 'cat') === ''; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client.call('process/terminate', { processId: 'cat' });
    await client.waitClosedNotification('cat');
    expect(outputText(client, 'cat')).toBe('through stdin\n');
    expect(await parentPid(client)).toBe(helper);
  });

  it('reports a child of a helper that died as exited (-1) once it is gone, and starts a new helper', async () => {
    const client = await startExecutor();
    const helper = await helperPid(client);

    await client.call('process/start', startParams('orphan', ['sleep', '0.5']));
    process.kill(helper, 'SIGKILL');
    await client.waitClosedNotification('orphan', 10_000);
    expect(client.notifications('process/exited', 'orphan')[0]?.params?.exitCode).toBe(-1);

    // Starts go on: directly at first, then from a new helper.
    expect((await run(client, ['sh', '-c', 'exit 3'])).exitCode).toBe(3);
    const next = await helperPid(client);
    expect(next).not.toBe(helper);
  });

  it('never starts a child twice when the helper dies around a start', async () => {
    const client = await startExecutor();
    const directory = mkdtempSync(join(tmpdir(), 'execrx-spawner-'));
    try {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const helper = await helperPid(client);
        const marks = join(directory, `runs-${attempt}`);
        process.kill(helper, 'SIGKILL');
        // Sent at once: the request may never reach the helper (then the start is made
        // directly), or be in its hands when it dies (then the start fails: the child may
        // have started). Never both.
        const processId = `race-${attempt}`;
        const started = await client.request(
          'process/start',
          startParams(processId, ['sh', '-c', `echo run >> ${marks}; exit 5`]),
        );
        if (started.error === undefined) {
          await client.waitClosedNotification(processId);
          expect(readFileSync(marks, 'utf8')).toBe('run\n');
        } else {
          expect(started.error.message).toContain('spawner exited while starting');
          await new Promise((resolve) => setTimeout(resolve, 200));
          expect(['', 'run\n']).toContain(existsSync(marks) ? readFileSync(marks, 'utf8') : '');
        }
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('ends with the executor', async () => {
    const executor = await startTsExecServer();
    const client = await RawClient.connect(executor.url);
    await client.handshake();
    const helper = await helperPid(client);
    await client.close();
    await executor.stop();
    expect(await waitGone(helper)).toBe(true);
  });
});
