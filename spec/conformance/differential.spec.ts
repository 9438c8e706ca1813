/**
 * Differential test: one scripted sequence of raw JSON-RPC messages (no client layer) is sent
 * to the real `codex exec-server` 0.169.0 and to our TypeScript executor, and everything that
 * comes back is compared structurally — same keys recursively, same JSON types, same error
 * codes and messages, same notifications in the same order per process / HTTP request.
 * Values that must differ between two executors (session ids, times, temp paths, executor
 * version, pids, peer ports) are masked to their JSON type first.
 *
 * Not compared: how responses interleave with notifications (the binary may send a process's
 * first output before the `process/start` response), and the values (not the keys) of
 * `environment/info`, whose host description legitimately differs.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '../../src/protocol/pathUri.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { RawClient, b64, startParams, type WireMessage } from '../server/rawClient.js';

/** What one run of the script saw: replies by step label, notification streams by key. */
interface Transcript {
  readonly replies: Map<string, unknown>;
  readonly streams: Map<string, unknown[]>;
}

/** Keys whose values differ between any two executors (or runs): compared by JSON type only. */
const TYPE_ONLY_KEYS = new Set([
  'sessionId',
  'executorVersion',
  'createdAtMs',
  'modifiedAtMs',
  'pid',
]);
/** Keys one executor may omit: dropped before comparing (listed as divergences in the report). */
const IGNORED_KEYS = new Set(['providerId']);

const jsonType = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

/**
 * Masks run-specific text (work dir, peer address, uuids) in every string, replaces the
 * values of TYPE_ONLY_KEYS with `<type>`, and — below a key in `shapeOnly` — every leaf.
 */
function normalize(value: unknown, workDir: string, shapeOnly = false, key = ''): unknown {
  if (IGNORED_KEYS.has(key)) return undefined;
  if (Array.isArray(value)) {
    // A host-dependent list (e.g. prependPathDirs) may be empty on one executor.
    if (shapeOnly) return '<array>';
    return value.map((item) => normalize(item, workDir, shapeOnly));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a.localeCompare(b),
    )) {
      if (IGNORED_KEYS.has(name)) continue;
      out[name] = normalize(item, workDir, shapeOnly || name === 'environmentInfo', name);
    }
    return out;
  }
  if (shapeOnly || TYPE_ONLY_KEYS.has(key)) return `<${jsonType(value)}>`;
  if (typeof value === 'string') {
    return value
      .replaceAll(pathToFileUri(workDir), 'file://<WORK>')
      .replaceAll(workDir, '<WORK>')
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<PORT>')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<UUID>');
  }
  return value;
}

/** An HTTP server on 127.0.0.1 whose `/stream` body comes in four chunks 80 ms apart. */
async function startChunkedServer(): Promise<{
  server: Server;
  base: string;
  sockets: Set<Socket>;
}> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-diff': 'stream' });
      const chunks = ['alpha ', 'beta ', 'gamma ', 'delta'];
      const next = (index: number): void => {
        if (index === chunks.length - 1) {
          res.end(chunks[index]);
          return;
        }
        res.write(chunks[index]);
        setTimeout(() => next(index + 1), 80);
      };
      next(0);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not here');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

/**
 * Runs the script on one executor. Every process sleeps briefly after its last output: output
 * written right before exit races the exit notification on both executors (either order is
 * valid, FINDINGS.md), and the comparison needs one deterministic order. `workDir` is a fresh
 * directory for the fs steps.
 */
async function runScript(url: string, workDir: string, httpBase: string): Promise<Transcript> {
  const client = await RawClient.connect(url);
  const replies = new Map<string, unknown>();
  const uri = (path: string): string => pathToFileUri(join(workDir, path));
  /** Sends one request, waits for its reply, records it under `label`. */
  const step = async (label: string, method: string, params: unknown): Promise<WireMessage> => {
    const reply = await client.request(method, params);
    const { id: _id, ...rest } = reply;
    replies.set(label, rest);
    return reply;
  };
  const cwd = pathToFileUri(workDir);
  try {
    // Handshake and environment.
    await step('initialize', 'initialize', { clientName: 'differential', resumeSessionId: null });
    client.notify('initialized', {});
    await step('environment/info', 'environment/info', null);
    await step('environment/status', 'environment/status', null);
    await step('initialize twice', 'initialize', {
      clientName: 'differential',
      resumeSessionId: null,
    });
    await step('unknown method', 'no/such/method', null);

    // Malformed JSON: answered with id -1, the connection stays open.
    client.sendRaw('{"id": 1, "method": ');
    const malformed = await client.waitFor((m) => m.id === -1);
    replies.set('malformed JSON', malformed);
    await step('status after malformed JSON', 'environment/status', null);

    // A process with stdout, stderr and an exit code, read back afterwards.
    await step(
      'process/start p1',
      'process/start',
      startParams(
        'p1',
        [
          'sh',
          '-c',
          'printf one; sleep 0.1; printf two >&2; sleep 0.1; printf three; sleep 0.1; exit 3',
        ],
        { cwd },
      ),
    );
    await client.waitClosedNotification('p1');
    await step('process/read p1 all', 'process/read', { processId: 'p1', afterSeq: 0 });
    await step('process/read p1 after 1, 1 byte', 'process/read', {
      processId: 'p1',
      afterSeq: 1,
      maxBytes: 1,
    });
    await step('process/read p1 past end', 'process/read', { processId: 'p1', afterSeq: 100 });
    await step('process/write p1 without stdin', 'process/write', {
      processId: 'p1',
      chunk: b64('x'),
      writeId: 'w0',
    });
    await step('process/start p1 again', 'process/start', startParams('p1', ['true'], { cwd }));

    // stdin through pipeStdin.
    await step(
      'process/start p2',
      'process/start',
      startParams('p2', ['sh', '-c', 'read line; printf "got:%s" "$line"; sleep 0.1'], {
        cwd,
        pipeStdin: true,
      }),
    );
    await step('process/write p2', 'process/write', {
      processId: 'p2',
      chunk: b64('hello\n'),
      writeId: 'w1',
    });
    await client.waitClosedNotification('p2');

    // A long-running process, interrupted and terminated.
    await step(
      'process/start p3',
      'process/start',
      startParams('p3', ['sh', '-c', 'echo ready; exec sleep 30'], { cwd }),
    );
    await client.waitFor((m) => m.method === 'process/output' && m.params?.processId === 'p3');
    await step('process/terminate p3', 'process/terminate', { processId: 'p3' });
    await client.waitClosedNotification('p3');
    await step('process/terminate p3 again', 'process/terminate', { processId: 'p3' });
    // A tty process: output on the pty stream; terminated on a terminal.
    await step(
      'process/start p6 tty',
      'process/start',
      startParams('p6', ['sh', '-c', 'echo ready; exec sleep 30'], { cwd, tty: true }),
    );
    await client.waitFor((m) => m.method === 'process/output' && m.params?.processId === 'p6');
    await step('process/terminate p6 tty', 'process/terminate', { processId: 'p6' });
    await client.waitClosedNotification('p6');
    // Interrupted: the shell's trap runs and picks the exit code.
    await step(
      'process/start p7',
      'process/start',
      startParams(
        'p7',
        [
          'sh',
          '-c',
          'trap "echo caught; sleep 0.1; exit 9" INT; echo ready; while :; do sleep 0.05; done',
        ],
        { cwd },
      ),
    );
    await client.waitFor((m) => m.method === 'process/output' && m.params?.processId === 'p7');
    await step('process/signal p7', 'process/signal', { processId: 'p7', signal: 'interrupt' });
    await client.waitClosedNotification('p7');
    await step('process/signal unknown', 'process/signal', {
      processId: 'nope',
      signal: 'interrupt',
    });
    await step('process/read unknown', 'process/read', { processId: 'nope' });
    await step(
      'process/start native cwd',
      'process/start',
      startParams('p4', ['true'], { cwd: workDir }),
    );
    await step(
      'process/start missing program',
      'process/start',
      startParams('p5', ['no-such-program-execrx'], { cwd }),
    );

    // Filesystem, including errors.
    await step('fs/createDirectory', 'fs/createDirectory', { path: uri('d/sub'), recursive: null });
    await step('fs/writeFile', 'fs/writeFile', { path: uri('d/f.txt'), dataBase64: b64('data') });
    await step('fs/readFile', 'fs/readFile', { path: uri('d/f.txt') });
    await step('fs/getMetadata', 'fs/getMetadata', { path: uri('d/f.txt') });
    await step('fs/canonicalize', 'fs/canonicalize', { path: uri('d/sub/../f.txt') });
    await step('fs/readDirectory', 'fs/readDirectory', { path: uri('d') });
    await step('fs/copy', 'fs/copy', {
      sourcePath: uri('d/f.txt'),
      destinationPath: uri('d/sub/g.txt'),
      recursive: false,
    });
    await step('fs/walk', 'fs/walk', {
      path: uri('d'),
      options: { maxDepth: 5, maxDirectories: 10, maxEntries: 10, followDirectorySymlinks: false },
    });
    await step('fs/open', 'fs/open', { handleId: 'h1', path: uri('d/f.txt'), mode: 'read' });
    await step('fs/readBlock', 'fs/readBlock', { handleId: 'h1', offset: 0, len: 3 });
    await step('fs/readBlock to eof', 'fs/readBlock', { handleId: 'h1', offset: 3, len: 100 });
    await step('fs/close', 'fs/close', { handleId: 'h1' });
    await step('fs/readBlock closed handle', 'fs/readBlock', { handleId: 'h1', offset: 0, len: 1 });
    await step('fs/readFile missing', 'fs/readFile', { path: uri('missing/f') });
    await step('fs/getMetadata missing', 'fs/getMetadata', { path: uri('missing') });
    await step('fs/readDirectory missing', 'fs/readDirectory', { path: uri('missing') });
    await step('fs/writeFile missing parent', 'fs/writeFile', {
      path: uri('missing/f'),
      dataBase64: b64('x'),
    });
    await step('fs/open missing', 'fs/open', {
      handleId: 'h2',
      path: uri('missing'),
      mode: 'read',
    });
    await step('fs/remove missing, no force', 'fs/remove', {
      path: uri('missing'),
      recursive: null,
      force: false,
    });
    await step('fs/readFile native path', 'fs/readFile', { path: join(workDir, 'd/f.txt') });
    await step('fs/readFile directory', 'fs/readFile', { path: uri('d') });
    await step('fs/createDirectory over file', 'fs/createDirectory', {
      path: uri('d/f.txt'),
      recursive: false,
    });
    await step('fs/remove non-empty, not recursive', 'fs/remove', {
      path: uri('d'),
      recursive: false,
      force: false,
    });
    await step('fs/remove', 'fs/remove', { path: uri('d'), recursive: true, force: false });

    // HTTP: a streamed body, a buffered 404, and a refused connection.
    await step('http/request streamed', 'http/request', {
      method: 'GET',
      url: `${httpBase}/stream`,
      headers: [],
      bodyBase64: null,
      redirectPolicy: 'follow',
      requestId: 'r1',
      streamResponse: true,
    });
    await client.waitFor(
      (m) =>
        m.method === 'http/request/bodyDelta' &&
        m.params?.requestId === 'r1' &&
        m.params.done === true,
    );
    await step('http/request buffered 404', 'http/request', {
      method: 'GET',
      url: `${httpBase}/missing`,
      headers: [{ name: 'x-probe', value: '1' }],
      bodyBase64: null,
      requestId: 'r2',
    });
    await step('http/request refused', 'http/request', {
      method: 'GET',
      url: 'http://127.0.0.1:1/',
      requestId: 'r3',
    });

    const streams = new Map<string, unknown[]>();
    for (const processId of ['p1', 'p2', 'p3', 'p6', 'p7']) {
      streams.set(
        `process ${processId}`,
        client.processEvents(processId).map(({ method, params }) => ({ method, params })),
      );
    }
    streams.set(
      'http r1',
      client
        .notifications('http/request/bodyDelta')
        .map(({ method, params }) => ({ method, params })),
    );
    return { replies, streams };
  } finally {
    await client.close();
  }
}

/** Response header values that depend on the time of the request. */
function maskDateHeaders(reply: unknown): unknown {
  const result = (reply as { result?: { headers?: { name: string; value: string }[] } }).result;
  if (result?.headers) {
    result.headers = result.headers.map((h) => (h.name === 'date' ? { ...h, value: '<date>' } : h));
  }
  return reply;
}

let ours: RunningExecServer | undefined;
let binary: RunningExecServer | undefined;
let http: Awaited<ReturnType<typeof startChunkedServer>> | undefined;
const workDirs: string[] = [];

beforeAll(async () => {
  [ours, binary, http] = await Promise.all([
    startTsExecServer(),
    startCodexExecServer(),
    startChunkedServer(),
  ]);
  for (let index = 0; index < 2; index += 1) {
    workDirs.push(await realpath(await mkdtemp(join(tmpdir(), 'execrx-differential-'))));
  }
});

afterAll(async () => {
  await Promise.all([ours?.stop(), binary?.stop()]);
  if (http) {
    for (const socket of http.sockets) socket.destroy();
    await new Promise<void>((resolve) => http!.server.close(() => resolve()));
  }
  await Promise.all(workDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('differential: raw JSON-RPC, TypeScript executor vs codex exec-server 0.169.0', () => {
  let theirs: Transcript;
  let mine: Transcript;
  let theirDir: string;
  let myDir: string;

  beforeAll(async () => {
    [theirDir, myDir] = workDirs as [string, string];
    [theirs, mine] = await Promise.all([
      runScript(binary!.url, theirDir, http!.base),
      runScript(ours!.url, myDir, http!.base),
    ]);
  }, 30_000);

  it('answers every scripted request with the same shape, codes and messages', () => {
    expect([...mine.replies.keys()]).toEqual([...theirs.replies.keys()]);
    for (const [label, reply] of theirs.replies) {
      // environment/info describes the host: keys and types only.
      const shapeOnly = label === 'environment/info';
      const expected = normalize(maskDateHeaders(reply), theirDir, shapeOnly);
      const actual = normalize(maskDateHeaders(mine.replies.get(label)), myDir, shapeOnly);
      expect({ label, reply: actual }).toEqual({ label, reply: expected });
    }
  });

  it('sends the same notifications in the same order per process and per HTTP request', () => {
    expect([...mine.streams.keys()]).toEqual([...theirs.streams.keys()]);
    for (const [label, events] of theirs.streams) {
      const expected = normalize(events, theirDir);
      const actual = normalize(mine.streams.get(label), myDir);
      expect({ label, events: actual }).toEqual({ label, events: expected });
    }
  });

  it('exercised what it claims: errors, process events and body deltas are present', () => {
    const errorCode = (label: string): unknown =>
      (theirs.replies.get(label) as WireMessage | undefined)?.error?.code;
    expect(errorCode('fs/readFile missing')).toBe(-32004);
    expect(errorCode('fs/readFile native path')).toBe(-32602);
    expect(errorCode('unknown method')).toBe(-32601);
    expect((theirs.replies.get('malformed JSON') as WireMessage).error?.code).toBe(-32600);
    expect(theirs.streams.get('process p1')?.length).toBeGreaterThanOrEqual(5);
    expect(theirs.streams.get('http r1')?.length).toBeGreaterThanOrEqual(4);
    const p6 = JSON.stringify(theirs.streams.get('process p6'));
    expect(p6).toContain('"stream":"pty"');
    expect(JSON.stringify(theirs.streams.get('process p7'))).toContain('"exitCode":9');
  });
});
