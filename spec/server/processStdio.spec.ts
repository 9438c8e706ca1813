/**
 * Pipe-mode stdio on the TypeScript executor: the child gets real pipes (FIFOs, `stdioPipes.ts`)
 * on fds 0/1/2, like the binary, and starting many processes leaks no fd, FIFO or directory.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { b64, outputText, RawClient, startParams } from './rawClient.js';

let ours: RunningExecServer | undefined;
let binary: RunningExecServer;
let home = '';
const clients: RawClient[] = [];

async function connect(server: RunningExecServer): Promise<RawClient> {
  const client = await RawClient.connect(server.url);
  clients.push(client);
  await client.handshake();
  return client;
}

/** Runs a pipe-mode process to `process/closed`; returns its stdout. */
async function run(
  client: RawClient,
  processId: string,
  argv: string[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  await client.call('process/start', startParams(processId, argv, extra));
  await client.waitClosedNotification(processId);
  return outputText(client, processId);
}

const openFds = (): number => readdirSync('/proc/self/fd').length;

/** Our fds close asynchronously (libuv handle close); waits, bounded, for the count to settle. */
async function settledFdCount(target: number): Promise<number> {
  let count = openFds();
  for (let attempt = 0; attempt < 40 && count > target; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    count = openFds();
  }
  return count;
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'execrx-stdio-home-'));
  // bash sources ~/.bashrc when it thinks rshd started it (a socket on stdin, SHLVL < 2).
  writeFileSync(join(home, '.bashrc'), 'echo bashrc-sourced\n');
  [ours, binary] = await Promise.all([startTsExecServer(), startCodexExecServer()]);
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await Promise.all([ours?.stop(), binary?.stop()]);
  rmSync(home, { recursive: true, force: true });
});

describe('pipe-mode stdio', () => {
  const kinds =
    'for fd in 0 1 2; do if [ -p /dev/fd/$fd ]; then echo $fd:pipe; elif [ -S /dev/fd/$fd ]; then echo $fd:socket; else echo $fd:other; fi; done';

  it.each([
    ['ours', () => ours as RunningExecServer],
    ['the binary', () => binary],
  ])('gives the child pipes on fds 0, 1 and 2 (%s)', async (_name, server) => {
    const client = await connect(server());
    expect(await run(client, 'kinds', ['sh', '-c', kinds], { pipeStdin: true })).toBe(
      '0:pipe\n1:pipe\n2:pipe\n',
    );
    // Without pipeStdin, stdin is /dev/null on both.
    expect(await run(client, 'null-stdin', ['sh', '-c', 'ls -L -l /dev/fd/0 | cut -c1'])).toBe(
      'c\n',
    );
  });

  it.each([
    ['ours', () => ours as RunningExecServer],
    ['the binary', () => binary],
  ])('lets the child reopen /dev/stdout and /dev/stderr (%s)', async (_name, server) => {
    const client = await connect(server());
    await client.call(
      'process/start',
      startParams('reopen', ['sh', '-c', 'echo out > /dev/stdout; echo err > /dev/stderr']),
    );
    await client.waitClosedNotification('reopen');
    const byStream = (stream: string): string =>
      client
        .notifications('process/output', 'reopen')
        .filter((m) => m.params?.stream === stream)
        .map((m) => Buffer.from(m.params?.chunk as string, 'base64').toString())
        .join('');
    expect([byStream('stdout'), byStream('stderr')]).toEqual(['out\n', 'err\n']);
    expect(client.notifications('process/exited', 'reopen')[0]?.params?.exitCode).toBe(0);
  });

  it.each([
    ['ours', () => ours as RunningExecServer],
    ['the binary', () => binary],
  ])('does not make bash -c with pipeStdin read ~/.bashrc (%s)', async (_name, server) => {
    const client = await connect(server());
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
    expect(await run(client, 'bash', ['bash', '-c', 'echo body'], { pipeStdin: true, env })).toBe(
      'body\n',
    );
  });

  it.each([
    ['ours', () => ours as RunningExecServer],
    ['the binary', () => binary],
  ])('keeps stdin writable after the exit, for a background reader (%s)', async (_name, server) => {
    const client = await connect(server());
    // sh gives background jobs /dev/null as stdin, hence fd 3. `cat` holds stdin and stderr
    // after sh exits.
    const script = 'read line; echo "got $line"; exec 3<&0; cat <&3 >&2 & echo "pid $!"';
    await client.call(
      'process/start',
      startParams('bg', ['sh', '-c', script], { pipeStdin: true }),
    );
    await client.call('process/write', { processId: 'bg', chunk: b64('one\n'), writeId: 'a' });
    await client.waitFor((m) => m.method === 'process/exited' && m.params?.processId === 'bg');
    await client.call('process/write', { processId: 'bg', chunk: b64('two\n'), writeId: 'b' });
    await client.waitFor(() => outputText(client, 'bg').endsWith('two\n'));
    const pid = Number(/pid (\d+)/.exec(outputText(client, 'bg'))?.[1]);
    expect(outputText(client, 'bg')).toBe(`got one\npid ${pid}\ntwo\n`);
    // `cat` keeps stderr open, so no `closed` until it dies (terminate no longer applies:
    // the leader has exited); then EOF, then `closed` last.
    expect(client.notifications('process/closed', 'bg')).toHaveLength(0);
    process.kill(pid, 'SIGKILL');
    await client.waitClosedNotification('bg');
    expect(client.processEvents('bg').at(-1)?.method).toBe('process/closed');
  });
});

describe('output of concurrent children', () => {
  // Ours reads every child's output into one shared buffer (stdioPipes.ts, READ_BUFFER); a read
  // handed on late, or kept by reference, would show up here as another stream's bytes.
  it.each([
    ['ours', () => ours as RunningExecServer],
    ['the binary', () => binary],
  ])('delivers each stream of each process intact (%s)', async (_name, server) => {
    const client = await connect(server());
    const bytes = 1024 * 1024;
    const ids = ['one', 'two', 'three'];
    const script = (id: string): string =>
      `(yes out-${id} | head -c ${bytes}) & (yes err-${id} | head -c ${bytes} >&2) & wait`;
    await Promise.all(
      ids.map((id) => client.call('process/start', startParams(id, ['sh', '-c', script(id)]))),
    );
    await Promise.all(ids.map((id) => client.waitClosedNotification(id)));
    const expected = (line: string): string => `${line}\n`.repeat(bytes).slice(0, bytes);
    for (const id of ids) {
      const chunks = client.notifications('process/output', id);
      const streamText = (stream: string): string =>
        chunks
          .filter((m) => m.params?.stream === stream)
          .map((m) => Buffer.from(m.params?.chunk as string, 'base64').toString('latin1'))
          .join('');
      expect(streamText('stdout') === expected(`out-${id}`)).toBe(true);
      expect(streamText('stderr') === expected(`err-${id}`)).toBe(true);
    }
  });
});

describe('stdin backpressure (ours)', () => {
  it('answers a process/write once the child has taken the write before it, so a slow reader holds the writer back', async () => {
    const client = await connect(ours as RunningExecServer);
    // The child reads nothing for two seconds, then everything.
    const started = Date.now();
    await client.call(
      'process/start',
      startParams('slow', ['sh', '-c', 'sleep 2; exec head -c 3145728 >/dev/null; echo done'], {
        pipeStdin: true,
      }),
    );
    const chunk = Buffer.alloc(1024 * 1024, 0x61).toString('base64');
    const write = async (writeId: string): Promise<number> => {
      const answer = await client.call('process/write', { processId: 'slow', chunk, writeId });
      expect(answer).toEqual({ status: 'accepted' });
      return Date.now() - started;
    };
    // The first write has no write before it: answered while the child still sleeps.
    expect(await write('1')).toBeLessThan(1800);
    // The second is answered only once the child has taken the first, after its sleep.
    expect(await write('2')).toBeGreaterThanOrEqual(1900);
    // The third waits for the second only: the child is reading by now.
    await write('3');
    await client.waitClosedNotification('slow');
  });

  it('answers a write to a child that exited without reading its stdin', async () => {
    const client = await connect(ours as RunningExecServer);
    await client.call('process/start', startParams('gone', ['true'], { pipeStdin: true }));
    await client.waitClosedNotification('gone');
    const chunk = Buffer.alloc(1024 * 1024, 0x61).toString('base64');
    expect(await client.call('process/write', { processId: 'gone', chunk, writeId: '1' })).toEqual({
      status: 'accepted',
    });
  });
});

describe('cleanup', () => {
  it('leaks no fd or FIFO over many starts, and removes the FIFO directory on shutdown', async () => {
    // The FIFO stock is shared by the live sessions of this module's executors: stop the other
    // one, so the last session here is the last user.
    await ours?.stop();
    ours = undefined;
    const baseline = openFds();
    const executor = await startTsExecServer();
    try {
      const client = await RawClient.connect(executor.url);
      await client.handshake();
      // Warm-up: makes the FIFO stock and tells us its directory.
      const link = await run(client, 'warm', ['readlink', '/proc/self/fd/1']);
      const fifo = link.replace(/ \(deleted\)\n$/, '');
      expect(fifo).toMatch(/execrx-stdio-[^/]+\/fifo-\d+$/);
      const fifoDirectory = dirname(fifo);
      const before = openFds();

      for (let index = 0; index < 20; index += 1) {
        await run(client, `plain${index}`, ['true']);
      }
      // Failed starts return their FIFOs' fds too.
      for (let index = 0; index < 5; index += 1) {
        const failed = await client.request(
          'process/start',
          startParams(`missing${index}`, ['/nonexistent/program'], { pipeStdin: true }),
        );
        expect(failed.error?.code).toBe(-32603);
      }
      expect(await settledFdCount(before)).toBe(before);

      // With pipeStdin, our end of stdin stays open (writable, like the binary) until the
      // process is forgotten: exactly one fd per process.
      for (let index = 0; index < 20; index += 1) {
        const processId = `stdin${index}`;
        await client.call('process/start', startParams(processId, ['cat'], { pipeStdin: true }));
        await client.call('process/write', { processId, chunk: b64('x\n'), writeId: '1' });
        await client.call('process/terminate', { processId });
        await client.waitClosedNotification(processId);
      }
      expect(await settledFdCount(before + 20)).toBe(before + 20);
      // Used FIFOs are unlinked at once; only the unused stock is left (below the low-water
      // mark of 24, plus one batch of 96).
      expect(readdirSync(fifoDirectory).length).toBeLessThanOrEqual(23 + 96);

      await client.close();
      await executor.stop();
      expect(existsSync(fifoDirectory)).toBe(false);
      expect(await settledFdCount(baseline)).toBe(baseline);
    } finally {
      await executor.stop();
    }
  });
});
