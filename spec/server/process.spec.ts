/**
 * `process/*` on the TypeScript executor over raw WebSocket JSON: notifications and their seq
 * ordering, PTY mode, `process/read` (afterSeq, maxBytes, long-poll), stdin writes and their
 * de-duplication, signal, terminate, env policy and start errors. A few exchanges also run
 * against the real binary and are compared structurally.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { b64, outputText, RawClient, startParams, type WireMessage } from './rawClient.js';
import { RETAINED_OUTPUT_BYTES } from '../../src/server/managedProcess.js';

let ours: RunningExecServer;
let binary: RunningExecServer;
const clients: RawClient[] = [];

async function connect(server: RunningExecServer = ours): Promise<RawClient> {
  const client = await RawClient.connect(server.url);
  clients.push(client);
  await client.handshake();
  return client;
}

beforeAll(async () => {
  [ours, binary] = await Promise.all([startTsExecServer(), startCodexExecServer()]);
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await Promise.all([ours?.stop(), binary?.stop()]);
});

/** Event kinds and seqs of a process, e.g. ['output:1', 'exited:2', 'closed:3']. */
function seqTrace(events: WireMessage[]): string[] {
  return events.map((m) => `${String(m.method).slice('process/'.length)}:${String(m.params?.seq)}`);
}

/** A pid is dead once it is gone or a zombie (PID 1 in a container may never reap it). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function becomesDead(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value === null) return 'null';
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as object).map(([key, inner]) => [key, shape(inner)]),
    );
  }
  return typeof value;
}

describe('process notifications', () => {
  it('streams stdout and stderr, then exited and closed, on one contiguous seq', async () => {
    const client = await connect();
    const script =
      "printf 'event output\\n'; sleep 0.1; printf 'event err\\n' >&2; sleep 0.1; exit 7";
    const started = await client.call('process/start', startParams('p1', ['sh', '-c', script]));
    expect(started).toEqual({ processId: 'p1', sandboxType: 'none' });
    await client.waitClosedNotification('p1');
    const events = client.processEvents('p1');
    expect(seqTrace(events)).toEqual(['output:1', 'output:2', 'exited:3', 'closed:4']);
    expect(events[0]?.params).toEqual({
      processId: 'p1',
      seq: 1,
      stream: 'stdout',
      chunk: b64('event output\n'),
    });
    expect(events[1]?.params).toEqual({
      processId: 'p1',
      seq: 2,
      stream: 'stderr',
      chunk: b64('event err\n'),
    });
    expect(events[2]?.params).toEqual({
      processId: 'p1',
      seq: 3,
      exitCode: 7,
      sandboxDenied: false,
    });
    expect(events[3]?.params).toEqual({ processId: 'p1', seq: 4 });
  });

  it('produces the same notification shapes and seqs as the binary', async () => {
    const run = async (server: RunningExecServer) => {
      const client = await connect(server);
      const script = 'printf out; sleep 0.1; printf err >&2; sleep 0.1; exit 3';
      const start = await client.request(
        'process/start',
        startParams('same', ['sh', '-c', script]),
      );
      await client.waitClosedNotification('same');
      const read = await client.request('process/read', {
        processId: 'same',
        afterSeq: 0,
        maxBytes: null,
        waitMs: 0,
      });
      return { start, events: client.processEvents('same'), read };
    };
    const [mine, theirs] = await Promise.all([run(ours), run(binary)]);
    expect(mine.start).toEqual(theirs.start);
    expect(mine.events).toEqual(theirs.events);
    expect(mine.read).toEqual(theirs.read);
  });

  it('keeps output of a big write in seq order, at most 64 KiB per chunk (the binary: 8 KiB)', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('big', ['sh', '-c', 'head -c 100000 /dev/zero']),
    );
    await client.waitClosedNotification('big');
    const events = client.processEvents('big');
    expect(events.map((m) => m.params?.seq)).toEqual(events.map((_m, index) => index + 1));
    const sizes = client
      .notifications('process/output', 'big')
      .map((m) => Buffer.from(String(m.params?.chunk), 'base64').length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(100_000);
    // One chunk per pipe read, not 8 KiB blocks (spec/conformance/DIVERGENCES.md).
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64 * 1024);
  });

  it('runs tty processes in an 80x24 pseudo-terminal with merged pty output', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('tty', ['sh', '-c', 'stty size; tty >/dev/null && echo is-a-tty; echo e >&2'], {
        tty: true,
      }),
    );
    await client.waitClosedNotification('tty');
    const output = outputText(client, 'tty');
    expect(output).toContain('24 80\r\n');
    expect(output).toContain('is-a-tty\r\n');
    expect(output).toContain('e\r\n');
    expect(
      client.notifications('process/output', 'tty').every((m) => m.params?.stream === 'pty'),
    ).toBe(true);
    expect(seqTrace(client.processEvents('tty')).slice(-2)).toEqual([
      `exited:${client.processEvents('tty').length - 1}`,
      `closed:${client.processEvents('tty').length}`,
    ]);
  });

  it('does not inject TERM into a tty child', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('term', ['sh', '-c', 'echo "[${TERM-unset}]"'], { tty: true }),
    );
    await client.waitClosedNotification('term');
    expect(outputText(client, 'term')).toContain('[unset]');
  });
});

describe('late output and retention', () => {
  it('gives output written after the exit seqs after the exit, like the binary', async () => {
    const run = async (server: RunningExecServer) => {
      const client = await connect(server);
      await client.call(
        'process/start',
        startParams('late', ['sh', '-c', '(sleep 0.3; echo late) & exit 4']),
      );
      await client.waitClosedNotification('late');
      return client.processEvents('late');
    };
    const [mine, theirs] = await Promise.all([run(ours), run(binary)]);
    expect(seqTrace(mine)).toEqual(['exited:1', 'output:2', 'closed:3']);
    expect(mine).toEqual(theirs);
  });

  it('retains at most RETAINED_OUTPUT_BYTES of output per process, evicting the oldest chunks while attached', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('flood', ['sh', '-c', `head -c ${RETAINED_OUTPUT_BYTES + 500_000} /dev/zero`]),
    );
    await client.waitClosedNotification('flood', 10_000);
    const events = client.processEvents('flood');
    const read = await client.call<{ chunks: { seq: number; chunk: string }[]; nextSeq: number }>(
      'process/read',
      {
        processId: 'flood',
        afterSeq: 0,
      },
    );
    const retained = read.chunks.reduce((sum, c) => sum + Buffer.from(c.chunk, 'base64').length, 0);
    expect(retained).toBeLessThanOrEqual(RETAINED_OUTPUT_BYTES);
    expect(retained).toBeGreaterThan(RETAINED_OUTPUT_BYTES - 70_000);
    expect(read.chunks[0]?.seq).toBeGreaterThan(1);
    expect(read.chunks.at(-1)?.seq).toBe(events.length - 2);
    expect(read.nextSeq).toBe(events.length + 1);
  });
});

describe('process/read', () => {
  it('replays retained output after afterSeq, honours maxBytes and reports nextSeq', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('r', ['sh', '-c', 'echo one; sleep 0.1; echo two; exit 3']),
    );
    await client.waitClosedNotification('r');
    const all = await client.call<Record<string, unknown>>('process/read', {
      processId: 'r',
      afterSeq: null,
      maxBytes: null,
      waitMs: null,
    });
    expect(all).toEqual({
      chunks: [
        { seq: 1, stream: 'stdout', chunk: b64('one\n') },
        { seq: 2, stream: 'stdout', chunk: b64('two\n') },
      ],
      nextSeq: 5,
      exited: true,
      exitCode: 3,
      closed: true,
      failure: null,
      sandboxDenied: false,
    });
    const limited = await client.call<Record<string, unknown>>('process/read', {
      processId: 'r',
      afterSeq: 0,
      maxBytes: 1,
    });
    expect(limited.chunks).toEqual([{ seq: 1, stream: 'stdout', chunk: b64('one\n') }]);
    expect(limited.nextSeq).toBe(2);
    const after = await client.call<Record<string, unknown>>('process/read', {
      processId: 'r',
      afterSeq: 2,
    });
    expect(after.chunks).toEqual([]);
    expect(after.nextSeq).toBe(5);
  });

  it('long-polls with waitMs until output arrives', async () => {
    const client = await connect();
    await client.call('process/start', startParams('lp', ['sh', '-c', 'sleep 0.3; echo late']));
    const started = Date.now();
    const read = await client.call<{ chunks: { chunk: string }[]; nextSeq: number }>(
      'process/read',
      { processId: 'lp', afterSeq: 0, waitMs: 5_000 },
      10_000,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(read.chunks.map((c) => Buffer.from(c.chunk, 'base64').toString())).toEqual(['late\n']);
  });

  it('returns an empty read after waitMs when nothing happens, without blocking other requests', async () => {
    const client = await connect();
    await client.call('process/start', startParams('idle', ['sleep', '5']));
    const readId = client.post('process/read', { processId: 'idle', afterSeq: 0, waitMs: 400 });
    const status = await client.request('environment/status', null);
    expect(status.result).toEqual({ status: 'ready' });
    expect(client.messages.some((m) => m.id === readId)).toBe(false);
    const read = await client.response(readId);
    expect(read.result).toMatchObject({
      chunks: [],
      nextSeq: 1,
      exited: false,
      exitCode: null,
      closed: false,
    });
    await client.call('process/terminate', { processId: 'idle' });
  });

  it('rejects unknown processes', async () => {
    const client = await connect();
    const reply = await client.request('process/read', { processId: 'ghost' });
    expect(reply.error).toEqual({ code: -32600, message: 'unknown process id ghost' });
  });
});

describe('process/write', () => {
  it('writes stdin once per writeId', async () => {
    const client = await connect();
    await client.call('process/start', startParams('cat', ['cat'], { pipeStdin: true }));
    expect(
      await client.call('process/write', { processId: 'cat', chunk: b64('first\n'), writeId: '1' }),
    ).toEqual({ status: 'accepted' });
    expect(
      await client.call('process/write', { processId: 'cat', chunk: b64('first\n'), writeId: '1' }),
    ).toEqual({ status: 'accepted' });
    expect(
      await client.call('process/write', {
        processId: 'cat',
        chunk: b64('second\n'),
        writeId: '2',
      }),
    ).toEqual({ status: 'accepted' });
    await client.waitFor(() => outputText(client, 'cat') === 'first\nsecond\n');
    await client.call('process/terminate', { processId: 'cat' });
    await client.waitClosedNotification('cat');
    expect(outputText(client, 'cat')).toBe('first\nsecond\n');
  });

  it('writes to a tty child', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('ttyin', ['sh', '-c', 'read x; echo got:$x'], { tty: true }),
    );
    await client.call('process/write', { processId: 'ttyin', chunk: b64('abc\n'), writeId: '1' });
    await client.waitClosedNotification('ttyin');
    expect(outputText(client, 'ttyin')).toContain('got:abc');
  });

  it('reports stdinClosed without pipeStdin, unknownProcess, and rejects an empty writeId', async () => {
    const client = await connect();
    await client.call('process/start', startParams('nostdin', ['sleep', '5']));
    expect(
      await client.call('process/write', { processId: 'nostdin', chunk: b64('x'), writeId: '1' }),
    ).toEqual({ status: 'stdinClosed' });
    expect(
      await client.call('process/write', { processId: 'ghost', chunk: b64('x'), writeId: '1' }),
    ).toEqual({ status: 'unknownProcess' });
    const empty = await client.request('process/write', {
      processId: 'nostdin',
      chunk: b64('x'),
      writeId: '',
    });
    expect(empty.error).toEqual({ code: -32602, message: 'writeId must not be empty' });
    await client.call('process/terminate', { processId: 'nostdin' });
  });
});

describe('process/write after exit', () => {
  it('still answers accepted once the child has gone, like the binary', async () => {
    const run = async (server: RunningExecServer) => {
      const client = await connect(server);
      await client.call('process/start', startParams('gone', ['true'], { pipeStdin: true }));
      await client.call('process/start', startParams('gonetty', ['true'], { tty: true }));
      await client.waitClosedNotification('gone');
      await client.waitClosedNotification('gonetty');
      return Promise.all(
        ['gone', 'gonetty'].map((processId) =>
          client.request('process/write', { processId, chunk: b64('x'), writeId: '1' }),
        ),
      );
    };
    const [mine, theirs] = await Promise.all([run(ours), run(binary)]);
    expect(mine.map((reply) => reply.result)).toEqual([
      { status: 'accepted' },
      { status: 'accepted' },
    ]);
    expect(mine).toEqual(theirs);
  });
});

describe('process/signal and process/terminate', () => {
  it('delivers SIGINT to the process group', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('int', [
        'sh',
        '-c',
        'trap "exit 7" INT; echo ready; while true; do sleep 0.05; done',
      ]),
    );
    await client.waitFor((m) => m.method === 'process/output' && m.params?.processId === 'int');
    expect(await client.call('process/signal', { processId: 'int', signal: 'interrupt' })).toEqual(
      {},
    );
    const exited = await client.waitFor(
      (m) => m.method === 'process/exited' && m.params?.processId === 'int',
    );
    expect(exited.params?.exitCode).toBe(7);
  });

  it('kills a pipe-mode process with exit code 137 and reports running: true, then false', async () => {
    const client = await connect();
    await client.call('process/start', startParams('k', ['sleep', '30']));
    expect(await client.call('process/terminate', { processId: 'k' })).toEqual({ running: true });
    await client.waitClosedNotification('k');
    expect(seqTrace(client.processEvents('k'))).toEqual(['exited:1', 'closed:2']);
    expect(client.processEvents('k')[0]?.params?.exitCode).toBe(137);
    expect(await client.call('process/terminate', { processId: 'k' })).toEqual({ running: false });
    expect(await client.call('process/terminate', { processId: 'ghost' })).toEqual({
      running: false,
    });
  });

  it('kills the whole process group, grandchildren included', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('tree', ['sh', '-c', 'sleep 30 & echo $!; wait']),
    );
    const pidMessage = await client.waitFor(
      (m) => m.method === 'process/output' && m.params?.processId === 'tree',
    );
    const grandchild = Number(
      Buffer.from(String(pidMessage.params?.chunk), 'base64').toString().trim(),
    );
    await client.call('process/terminate', { processId: 'tree' });
    await client.waitClosedNotification('tree');
    expect(await becomesDead(grandchild)).toBe(true);
  });

  it('reports exit code 1 for a terminated tty process, like the binary', async () => {
    const client = await connect();
    await client.call('process/start', startParams('kt', ['sleep', '30'], { tty: true }));
    expect(await client.call('process/terminate', { processId: 'kt' })).toEqual({ running: true });
    const exited = await client.waitFor(
      (m) => m.method === 'process/exited' && m.params?.processId === 'kt',
    );
    expect(exited.params?.exitCode).toBe(1);
  });
});

describe('process/start', () => {
  it('builds the environment from envPolicy and env, and passes arg0', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('env', ['sh', '-c', 'echo "$0|${A-}|${B-}|${MY_SECRET-gone}"'], {
        arg0: 'custom-name',
        env: { A: 'from-env', PATH: '/usr/bin:/bin' },
        envPolicy: {
          inherit: 'none',
          ignoreDefaultExcludes: false,
          exclude: [],
          set: { B: 'from-set', A: 'overridden', MY_SECRET: 's' },
          includeOnly: [],
        },
      }),
    );
    await client.waitClosedNotification('env');
    // Default excludes apply to the executor's own environment only; `set` is inserted after them.
    expect(outputText(client, 'env')).toBe('custom-name|from-env|from-set|s\n');
  });

  it('gives the child exactly `env` without a policy', async () => {
    const client = await connect();
    await client.call(
      'process/start',
      startParams('bare', ['/usr/bin/env'], { env: { ONLY: '1' } }),
    );
    await client.waitClosedNotification('bare');
    expect(outputText(client, 'bare')).toBe('ONLY=1\n');
  });

  it('answers start errors like the binary', async () => {
    const attempts = [
      startParams('dup', ['true']),
      startParams('dup', ['true']),
      startParams('empty', []),
      startParams('missing', ['definitely-not-a-program-xyz']),
      startParams('badcwd', ['true'], { cwd: 'file:///definitely/not/here' }),
      startParams('native', ['true'], { cwd: '/tmp' }),
      startParams('foreign', ['true'], { cwd: 'file://server/share' }),
      startParams('ttymissing', ['definitely-not-a-program-xyz'], { tty: true }),
      startParams('nullpipe', ['true'], { pipeStdin: null }),
    ];
    const run = async (server: RunningExecServer) => {
      const client = await connect(server);
      const replies: unknown[] = [];
      for (const params of attempts) {
        const reply = await client.request('process/start', params);
        replies.push(reply.error ?? reply.result);
      }
      return replies;
    };
    const [mine, theirs] = await Promise.all([run(ours), run(binary)]);
    expect(mine).toEqual(theirs);
    expect(shape(mine[0])).toEqual({ processId: 'string', sandboxType: 'string' });
  });
});
