/**
 * Captures wire fixtures from the real `codex exec-server` (0.169.0) over raw WebSockets.
 *
 *   npx tsx scripts/capture-fixtures.ts [scenario-name ...]
 *
 * Each scenario writes `spec/fixtures/wire/<name>.json`: every message sent and received, in
 * order, per connection. `spec/protocol/fixtures.spec.ts` parses them with our schemas.
 * Nothing is masked; temporary paths are whatever they were at capture time.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { WIRE_DIR, type TranscriptEntry, type WireFixture } from '../spec/protocol/wireFixtures.js';
import { startCodexExecServer, type RunningExecServer } from '../spec/support/codexExecServer.js';
import { PROXY } from '../spec/support/networkProxy.js';
import { pathToFileUri } from '../src/protocol/pathUri.js';

/** What one scenario writes: a wire fixture without its file name. */
type Fixture = Omit<WireFixture, 'file'>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Recorder {
  readonly transcript: TranscriptEntry[] = [];
  readonly startedAt = Date.now();
  elapsed(): number {
    return Date.now() - this.startedAt;
  }
}

/** One raw WebSocket connection whose traffic goes to a shared transcript. */
class Conn {
  private readonly inbox: unknown[] = [];
  private waiters: (() => void)[] = [];
  private nextId = 1;
  closed: { code: number; reason: string } | undefined;
  /** Builds the reply (response or error envelope) to a server→client request. */
  answer: ((request: Record<string, unknown>) => unknown) | undefined;

  private constructor(
    private readonly ws: WebSocket,
    private readonly rec: Recorder,
    readonly name: string,
    private readonly timed: boolean,
  ) {
    ws.on('message', (data, isBinary) => {
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        this.log({ dir: 'recv', raw: text, ...(isBinary ? { binary: true } : {}) });
        return;
      }
      this.log({ dir: 'recv', message, ...(isBinary ? { binary: true } : {}) });
      const record = message as Record<string, unknown>;
      if (this.answer !== undefined && typeof record.method === 'string' && 'id' in record) {
        this.send(this.answer(record));
      }
      this.inbox.push(message);
      this.wake();
    });
    ws.on('ping', () => this.log({ dir: 'recv', event: 'ping', atMs: rec.elapsed() }));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.log({ dir: 'recv', event: 'close', code, reason: reason.toString() });
      this.wake();
    });
  }

  static async open(
    url: string,
    rec: Recorder,
    name = 'A',
    options: { timed?: boolean } = {},
  ): Promise<Conn> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Conn(ws, rec, name, options.timed ?? false);
  }

  private log(entry: Omit<TranscriptEntry, 'conn'>): void {
    this.rec.transcript.push({
      conn: this.name,
      ...entry,
      ...(this.timed ? { atMs: this.rec.elapsed() } : {}),
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  send(message: unknown, options: { binary?: boolean; variant?: string } = {}): void {
    this.log({
      dir: 'send',
      message,
      ...(options.binary ? { binary: true } : {}),
      ...(options.variant !== undefined ? { variant: options.variant } : {}),
    });
    this.ws.send(JSON.stringify(message), { binary: options.binary ?? false });
  }

  sendRaw(text: string): void {
    this.log({ dir: 'send', raw: text });
    this.ws.send(text);
  }

  /** Sends a request and resolves with the response or error message (the whole envelope). */
  async request(
    method: string,
    params?: unknown,
    options: { omitParams?: boolean; variant?: string } = {},
  ): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const variant = options.variant ?? (options.omitParams ? 'params member omitted' : undefined);
    this.send(
      options.omitParams ? { id, method } : { id, method, params },
      variant !== undefined ? { variant } : {},
    );
    return this.waitFor((m) => m.id === id && !('method' in m));
  }

  async result<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T> {
    const reply = await this.request(method, params);
    if (!('result' in reply)) throw new Error(`${method} failed: ${JSON.stringify(reply)}`);
    return reply.result as T;
  }

  notify(method: string, params: unknown): void {
    this.send({ method, params });
  }

  /** Waits for an inbound message matching `predicate` (consumed from the inbox). */
  async waitFor(
    predicate: (m: Record<string, unknown>) => boolean,
    timeoutMs = 10_000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.inbox.findIndex(
        (m) => typeof m === 'object' && m !== null && predicate(m as Record<string, unknown>),
      );
      if (index !== -1) return this.inbox.splice(index, 1)[0] as Record<string, unknown>;
      if (this.closed) throw new Error(`connection ${this.name} closed while waiting`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting on connection ${this.name}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for a notification `method` whose params match. */
  notification(
    method: string,
    match: (p: Record<string, unknown>) => boolean = () => true,
    timeoutMs = 10_000,
  ) {
    return this.waitFor(
      (m) =>
        m.method === method && !('id' in m) && match((m.params ?? {}) as Record<string, unknown>),
      timeoutMs,
    );
  }

  async waitClosed(timeoutMs = 5_000): Promise<{ code: number; reason: string } | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await sleep(20);
    return this.closed;
  }

  /** `open` + `handshake`: connection `A` with an initialized session. */
  static async session(url: string, rec: Recorder): Promise<Conn> {
    const conn = await Conn.open(url, rec);
    await conn.handshake();
    return conn;
  }

  /** `process/start` with `startParams(processId, argv, cwd, extra)`. */
  startProcess(
    processId: string,
    argv: string[],
    cwd: string,
    extra?: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    return this.request('process/start', startParams(processId, argv, cwd, extra));
  }

  async handshake(clientName = 'execrx-capture'): Promise<string> {
    const result = await this.result<{ sessionId: string }>('initialize', {
      clientName,
      resumeSessionId: null,
    });
    this.notify('initialized', {});
    return result.sessionId;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.ws.close(1000);
    await this.waitClosed();
  }
}

interface Context {
  url: string;
  rec: Recorder;
  /** Scratch directory for this scenario (created fresh). */
  dir: string;
  /** `file:` URI of `dir`. */
  dirUri: string;
  httpBase: string;
}

interface Scenario {
  name: string;
  description: string;
  /** Scenarios needing a dedicated executor (auth flags, long waits) start their own. */
  ownServer?: boolean;
  run(ctx: Context): Promise<void>;
}

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

function startParams(
  processId: string,
  argv: string[],
  cwd: string,
  extra: Record<string, unknown> = {},
) {
  return {
    processId,
    argv,
    cwd,
    envPolicy: null,
    env: PATH_ENV,
    tty: false,
    pipeStdin: false,
    arg0: null,
    sandbox: null,
    enforceManagedNetwork: false,
    managedNetwork: null,
    ...extra,
  };
}

async function untilClosed(conn: Conn, processId: string, timeoutMs = 10_000) {
  return conn.notification('process/closed', (p) => p.processId === processId, timeoutMs);
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

const scenarios: Scenario[] = [
  {
    name: 'initialize',
    description:
      'Handshake, environment/info with params null, absent and {}, environment/status, initialized with {} and the environment/info payload.',
    async run({ url, rec }) {
      const a = await Conn.open(url, rec);
      await a.request('initialize', { clientName: 'execrx-capture', resumeSessionId: null });
      a.notify('initialized', {});
      await a.request('environment/info', null);
      await a.request('environment/info', undefined, { omitParams: true });
      await a.request('environment/info', {}, { variant: 'params {} instead of null' });
      await a.request('environment/status', null);
      await a.request('environment/status', undefined, { omitParams: true });
      await a.close();
    },
  },
  {
    name: 'initialize-twice',
    description:
      'A second initialize on the same connection is refused; the connection stays usable.',
    async run({ url, rec }) {
      const a = await Conn.session(url, rec);
      await a.request('initialize', { clientName: 'execrx-capture', resumeSessionId: null });
      await a.request('environment/status', null);
      await a.close();
    },
  },
  {
    name: 'gating',
    description:
      'Every method family before initialize and before initialized: exact -32600 messages and family strings.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.open(url, rec);
      const probes: [string, unknown][] = [
        ['process/read', { processId: 'x', afterSeq: null, maxBytes: null, waitMs: null }],
        ['fs/getMetadata', { path: dirUri, sandbox: null }],
        [
          'http/request',
          {
            method: 'GET',
            url: 'http://127.0.0.1:9/',
            headers: [],
            bodyBase64: null,
            redirectPolicy: 'follow',
            requestId: 'g',
            streamResponse: false,
          },
        ],
        ['environment/info', null],
        ['environment/status', null],
        [
          'environmentConfig/read',
          { cwd: dirUri, configPaths: [['config.toml']], requirementsPaths: [] },
        ],
        ['capabilityRoots/discoverV1', { roots: [] }],
        ['capabilities/discoverV2', { cwd: dirUri }],
      ];
      for (const [method, params] of probes) await a.request(method, params);
      await a.request('initialize', { clientName: 'execrx-capture', resumeSessionId: null });
      for (const [method, params] of probes) await a.request(method, params);
      await a.close();
    },
  },
  {
    name: 'resume-unknown-session',
    description:
      'initialize with an unknown resumeSessionId fails with -32600; a fresh initialize afterwards succeeds.',
    async run({ url, rec }) {
      const a = await Conn.open(url, rec);
      await a.request('initialize', {
        clientName: 'execrx-capture',
        resumeSessionId: '00000000-0000-4000-8000-000000000000',
      });
      await a.request('initialize', { clientName: 'execrx-capture', resumeSessionId: null });
      a.notify('initialized', {});
      await a.request('environment/status', null);
      await a.close();
    },
  },
  {
    name: 'resume-attached-and-detached',
    description:
      'Connection B resumes the session of a live connection A (already attached), then A closes and B resumes it; a process that wrote output while detached is replayed with process/read.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.open(url, rec, 'A');
      const sessionId = await a.handshake();
      await a.startProcess(
        'bg',
        ['sh', '-c', 'sleep 0.4; printf detached-output; sleep 0.2'],
        dirUri,
      );
      const b = await Conn.open(url, rec, 'B');
      await b.request('initialize', { clientName: 'execrx-capture', resumeSessionId: sessionId });
      await b.close();
      await a.request('environment/status', null); // A is unaffected by the refused resume
      await a.close();
      await sleep(1200); // the process writes and exits while the session is detached
      const c = await Conn.open(url, rec, 'C');
      await c.request('initialize', { clientName: 'execrx-capture', resumeSessionId: sessionId });
      c.notify('initialized', {});
      await c.request('process/read', { processId: 'bg', afterSeq: 0, maxBytes: null, waitMs: 0 });
      await c.close();
    },
  },
  {
    name: 'resume-takeover',
    description:
      'A closes and B resumes the session immediately (no -32010 race with the detach), then uses it.',
    async run({ url, rec }) {
      const a = await Conn.open(url, rec, 'A');
      const sessionId = await a.handshake();
      await a.close();
      const b = await Conn.open(url, rec, 'B');
      await b.request('initialize', { clientName: 'execrx-capture', resumeSessionId: sessionId });
      b.notify('initialized', {});
      await b.request('environment/status', null);
      await b.close();
    },
  },
  {
    name: 'process-pipe',
    description:
      'Pipe-mode process writing stdout then stderr then exiting 7: process/output, process/exited, process/closed with one shared seq counter.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess(
        'p1',
        [
          'sh',
          '-c',
          "printf 'event output\\n'; sleep 0.1; printf 'event err\\n' >&2; sleep 0.1; exit 7",
        ],
        dirUri,
      );
      await untilClosed(a, 'p1');
      await a.close();
    },
  },
  {
    name: 'process-late-output',
    description:
      'A background grandchild writes after the shell exits: output after exited, closed last.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess(
        'late',
        ['sh', '-c', '(sleep 0.3; printf late) & printf early; exit 0'],
        dirUri,
      );
      await untilClosed(a, 'late');
      await a.request('process/read', {
        processId: 'late',
        afterSeq: 0,
        maxBytes: null,
        waitMs: 0,
      });
      await a.close();
    },
  },
  {
    name: 'process-tty',
    description:
      'PTY process: stream "pty", \\r\\n translation, exit code 3, and env only from `env` (no TERM injected).',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess(
        't1',
        [
          'sh',
          '-c',
          'echo tty-out; echo "TERM=${TERM-unset}"; test -t 0 && echo stdin-is-tty; exit 3',
        ],
        dirUri,
        { tty: true },
      );
      await untilClosed(a, 't1');
      await a.close();
    },
  },
  {
    name: 'process-read',
    description:
      'process/read replay: afterSeq 0, afterSeq in the middle, maxBytes 1, past the end; unknown process id.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess(
        'r1',
        ['sh', '-c', 'printf one; sleep 0.05; printf two; sleep 0.05; printf three; exit 2'],
        dirUri,
      );
      await untilClosed(a, 'r1');
      await a.request('process/read', { processId: 'r1', afterSeq: 0, maxBytes: null, waitMs: 0 });
      await a.request('process/read', { processId: 'r1', afterSeq: 1, maxBytes: null, waitMs: 0 });
      await a.request('process/read', { processId: 'r1', afterSeq: 0, maxBytes: 1, waitMs: 0 });
      await a.request('process/read', { processId: 'r1', afterSeq: 99, maxBytes: null, waitMs: 0 });
      await a.request('process/read', {
        processId: 'r1',
        afterSeq: null,
        maxBytes: null,
        waitMs: null,
      });
      await a.request('process/read', {
        processId: 'nope',
        afterSeq: 0,
        maxBytes: null,
        waitMs: 0,
      });
      await a.close();
    },
  },
  {
    name: 'process-read-wait',
    description:
      'process/read with waitMs on a running process returns when output arrives (long poll); whether a long poll delays a later request.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.open(url, rec, 'A', { timed: true });
      const ctxDir = (_: Conn) => dirUri;
      await a.handshake();
      await a.startProcess('w1', ['sh', '-c', 'sleep 0.3; printf woke; sleep 0.1'], dirUri);
      await a.request('process/read', {
        processId: 'w1',
        afterSeq: 0,
        maxBytes: null,
        waitMs: 2000,
      });
      await untilClosed(a, 'w1');
      // Default dispatch is inline: does a long poll hold back a later environment/status?
      await a.startProcess('w2', ['sh', '-c', 'sleep 0.5; printf later'], ctxDir(a));
      await Promise.all([
        a.request('process/read', { processId: 'w2', afterSeq: 0, maxBytes: null, waitMs: 2000 }),
        a.request('environment/status', null),
      ]);
      await untilClosed(a, 'w2');
      await a.close();
    },
  },
  {
    name: 'process-write',
    description:
      'pipeStdin cat: write, duplicate writeId (deduped), closeStdin probe, empty writeId, stdin of a non-pipeStdin process, unknown process.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess('cat', ['cat'], dirUri, { pipeStdin: true });
      await a.request('process/write', { processId: 'cat', chunk: b64('hello\n'), writeId: '1' });
      await a.notification('process/output', (p) => p.processId === 'cat');
      await a.request('process/write', { processId: 'cat', chunk: b64('hello\n'), writeId: '1' });
      await a.request('process/write', { processId: 'cat', chunk: b64('world\n'), writeId: '2' });
      await a.notification('process/output', (p) => p.processId === 'cat');
      await a.request('process/write', { processId: 'cat', chunk: b64('x'), writeId: '' });
      // Is there a way to close stdin? Try an extra field the 0.169.0 client might send.
      await a.request(
        'process/write',
        { processId: 'cat', chunk: '', writeId: '3', closeStdin: true },
        { variant: 'extra closeStdin field' },
      );
      await sleep(300);
      await a.request('process/terminate', { processId: 'cat' });
      await untilClosed(a, 'cat');
      await a.startProcess('nostdin', ['sleep', '5'], dirUri);
      await a.request('process/write', { processId: 'nostdin', chunk: b64('x'), writeId: '1' });
      await a.request('process/terminate', { processId: 'nostdin' });
      await untilClosed(a, 'nostdin');
      await a.request('process/write', { processId: 'unknown', chunk: b64('x'), writeId: '1' });
      await a.close();
    },
  },
  {
    name: 'process-write-tty',
    description: 'Writing to a PTY process (stdin always writable) and the echo it produces.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess('tw', ['sh', '-c', 'read line; echo "got:$line"'], dirUri, {
        tty: true,
      });
      await a.request('process/write', { processId: 'tw', chunk: b64('abc\n'), writeId: '1' });
      await untilClosed(a, 'tw');
      await a.close();
    },
  },
  {
    name: 'process-signal',
    description:
      'process/signal interrupt reaches a trap handler (exit 7); signal to an unknown and an exited process.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess(
        's1',
        ['sh', '-c', 'trap "exit 7" INT; echo ready; while :; do sleep 0.05; done'],
        dirUri,
      );
      await a.notification('process/output', (p) => p.processId === 's1');
      await a.request('process/signal', { processId: 's1', signal: 'interrupt' });
      await untilClosed(a, 's1');
      await a.request('process/signal', { processId: 's1', signal: 'interrupt' });
      await a.request('process/signal', { processId: 'unknown', signal: 'interrupt' });
      await a.request('process/signal', { processId: 's1', signal: 'terminate' });
      await a.close();
    },
  },
  {
    name: 'process-terminate',
    description:
      'process/terminate of a running pipe process and a running PTY process (exit codes), of an exited and an unknown process.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.startProcess('kp', ['sh', '-c', 'echo started; sleep 30'], dirUri);
      await a.notification('process/output', (p) => p.processId === 'kp');
      await a.request('process/terminate', { processId: 'kp' });
      await untilClosed(a, 'kp');
      await a.startProcess('kt', ['sh', '-c', 'echo started; sleep 30'], dirUri, { tty: true });
      await a.notification('process/output', (p) => p.processId === 'kt');
      await a.request('process/terminate', { processId: 'kt' });
      await untilClosed(a, 'kt');
      await a.request('process/terminate', { processId: 'kp' });
      await a.request('process/terminate', { processId: 'unknown' });
      await a.close();
    },
  },
  {
    name: 'process-start-errors',
    description:
      'process/start failures: empty argv, native cwd, Windows cwd, duplicate processId, missing program, missing params; envPolicy inherit core.',
    async run({ url, rec, dirUri, dir }) {
      const a = await Conn.session(url, rec);
      await a.startProcess('e1', [], dirUri);
      await a.startProcess('e2', ['true'], dir);
      await a.startProcess('e3', ['true'], 'file:///C:/Windows');
      await a.startProcess('dup', ['sleep', '1'], dirUri);
      await a.startProcess('dup', ['sleep', '1'], dirUri);
      await a.startProcess('e4', ['definitely-not-a-program-execrx'], dirUri);
      await a.request(
        'process/start',
        { processId: 'e5', argv: ['true'], cwd: dirUri },
        { variant: 'required env omitted' },
      );
      await a.startProcess('envp', ['sh', '-c', 'env | sort'], dirUri, {
        envPolicy: {
          inherit: 'none',
          ignoreDefaultExcludes: false,
          exclude: [],
          set: { FROM_SET: 'set', BOTH: 'set' },
          includeOnly: [],
        },
        env: { ...PATH_ENV, BOTH: 'env' },
      });
      await untilClosed(a, 'envp');
      await a.request('process/terminate', { processId: 'dup' });
      await untilClosed(a, 'dup');
      await a.close();
    },
  },
  {
    name: 'fs-basic',
    description:
      'fs/writeFile, readFile, createDirectory, getMetadata (file, dir, symlink, broken symlink), canonicalize, readDirectory (broken symlink skipped), copy, remove.',
    async run({ url, rec, dir, dirUri }) {
      await symlink(join(dir, 'file.txt'), join(dir, 'link.txt'));
      await symlink(join(dir, 'missing-target'), join(dir, 'broken-link'));
      const a = await Conn.session(url, rec);
      const file = `${dirUri}/file.txt`;
      await a.request('fs/writeFile', { path: file, dataBase64: b64('hello fs\n'), sandbox: null });
      await a.request('fs/readFile', { path: file, sandbox: null });
      await a.request('fs/readFile', { path: file, followSymlinks: false, sandbox: null });
      await a.request('fs/createDirectory', {
        path: `${dirUri}/sub/deeper`,
        recursive: null,
        sandbox: null,
      });
      await a.request('fs/createDirectory', {
        path: `${dirUri}/sub`,
        recursive: false,
        sandbox: null,
      });
      await a.request('fs/createDirectory', {
        path: `${dirUri}/sub`,
        recursive: true,
        sandbox: null,
      });
      await a.request('fs/getMetadata', { path: file, sandbox: null });
      await a.request('fs/getMetadata', { path: `${dirUri}/sub`, sandbox: null });
      await a.request('fs/getMetadata', { path: `${dirUri}/link.txt`, sandbox: null });
      await a.request('fs/getMetadata', {
        path: `${dirUri}/link.txt`,
        followSymlinks: false,
        sandbox: null,
      });
      await a.request('fs/getMetadata', { path: `${dirUri}/broken-link`, sandbox: null });
      await a.request('fs/canonicalize', { path: `${dirUri}/link.txt`, sandbox: null });
      await a.request('fs/readDirectory', { path: dirUri, sandbox: null });
      await a.request('fs/copy', {
        sourcePath: file,
        destinationPath: `${dirUri}/sub/copy.txt`,
        recursive: false,
        sandbox: null,
      });
      await a.request('fs/copy', {
        sourcePath: `${dirUri}/sub`,
        destinationPath: `${dirUri}/sub2`,
        recursive: false,
        sandbox: null,
      });
      await a.request('fs/copy', {
        sourcePath: `${dirUri}/sub`,
        destinationPath: `${dirUri}/sub/inner`,
        recursive: true,
        sandbox: null,
      });
      await a.request('fs/copy', {
        sourcePath: `${dirUri}/sub`,
        destinationPath: `${dirUri}/sub2`,
        recursive: true,
        sandbox: null,
      });
      await a.request('fs/copy', {
        sourcePath: `${dirUri}/link.txt`,
        destinationPath: `${dirUri}/link-copy`,
        recursive: false,
        sandbox: null,
      });
      await a.request('fs/readDirectory', { path: `${dirUri}/sub2`, sandbox: null });
      await a.request('fs/remove', {
        path: `${dirUri}/sub2`,
        recursive: false,
        force: null,
        sandbox: null,
      });
      await a.request('fs/remove', {
        path: `${dirUri}/sub2`,
        recursive: null,
        force: null,
        sandbox: null,
      });
      await a.request('fs/remove', {
        path: `${dirUri}/sub2`,
        recursive: null,
        force: false,
        sandbox: null,
      });
      await a.request('fs/remove', {
        path: `${dirUri}/sub2`,
        recursive: null,
        force: true,
        sandbox: null,
      });
      await a.request('fs/remove', {
        path: `${dirUri}/link.txt`,
        recursive: false,
        force: false,
        sandbox: null,
      });
      await a.request('fs/getMetadata', { path: file, sandbox: null });
      await a.close();
    },
  },
  {
    name: 'fs-errors',
    description:
      'Error mapping: missing path (-32004), native path and other schemes (-32602), Windows URI, directory as file, writeFile bad base64, missing parent, query/fragment/port URIs.',
    async run({ url, rec, dir, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.request('fs/readFile', { path: `${dirUri}/missing.txt`, sandbox: null });
      await a.request('fs/readFile', { path: join(dir, 'missing.txt'), sandbox: null });
      await a.request('fs/readFile', { path: 'http://example.com/x', sandbox: null });
      await a.request('fs/readFile', { path: 'file:///C:/Windows/win.ini', sandbox: null });
      await a.request('fs/readFile', { path: 'file://server/share/x', sandbox: null });
      await a.request('fs/readFile', { path: `${dirUri}/x?query=1`, sandbox: null });
      await a.request('fs/readFile', { path: `${dirUri}/x#frag`, sandbox: null });
      await a.request('fs/readFile', { path: 'file://localhost:8080/tmp', sandbox: null });
      await a.request('fs/readFile', { path: `file://localhost${dir}/missing.txt`, sandbox: null });
      await a.request('fs/readFile', { path: dirUri, sandbox: null });
      await a.request('fs/writeFile', {
        path: `${dirUri}/bad.txt`,
        dataBase64: 'not base64!',
        sandbox: null,
      });
      await a.request('fs/writeFile', {
        path: `${dirUri}/no/parent.txt`,
        dataBase64: b64('x'),
        sandbox: null,
      });
      await a.request('fs/writeFile', { path: dirUri, dataBase64: b64('x'), sandbox: null });
      await a.request('fs/getMetadata', { path: `${dirUri}/missing`, sandbox: null });
      await a.request('fs/canonicalize', { path: `${dirUri}/missing`, sandbox: null });
      await a.request('fs/readDirectory', { path: `${dirUri}/missing`, sandbox: null });
      await a.request('fs/getMetadata', { sandbox: null }, { variant: 'path omitted' });
      await a.close();
    },
  },
  {
    name: 'fs-path-encoding',
    description:
      'How the executor spells URIs for unusual file names (canonicalize, walk and readDirectory results).',
    async run({ url, rec, dir, dirUri }) {
      const names = [
        'a b',
        'pct%25',
        'hash#q?',
        'unicode-ü',
        'brackets[]{}',
        "semi;colon=&'()",
        'back\\slash',
        'caret^pipe|tick`',
      ];
      for (const name of names) await writeFile(join(dir, name), name);
      const a = await Conn.session(url, rec);
      for (const name of names)
        await a.request('fs/canonicalize', { path: pathToFileUri(join(dir, name)), sandbox: null });
      await a.request('fs/walk', {
        path: dirUri,
        options: {
          maxDepth: 1,
          maxDirectories: 10,
          maxEntries: 100,
          followDirectorySymlinks: false,
        },
        sandbox: null,
      });
      await a.request('fs/getMetadata', { path: `${dirUri}/a%20b`, sandbox: null });
      await a.request('fs/getMetadata', { path: `${dirUri}/a b`, sandbox: null });
      await a.close();
    },
  },
  {
    name: 'fs-walk',
    description:
      'fs/walk shapes: nested tree, hidden-directory pruning, truncation, limit errors, a file as root.',
    async run({ url, rec, dir, dirUri }) {
      await mkdir(join(dir, 'd1', 'd2'), { recursive: true });
      await mkdir(join(dir, '.hidden'), { recursive: true });
      await writeFile(join(dir, 'd1', 'f1'), '1');
      await writeFile(join(dir, 'd1', 'd2', 'f2'), '2');
      await writeFile(join(dir, '.hidden', 'h'), 'h');
      await symlink(join(dir, 'd1'), join(dir, 'dirlink'));
      const a = await Conn.session(url, rec);
      const walk = (options: Record<string, unknown>, path = dirUri) =>
        a.request('fs/walk', { path, options, sandbox: null });
      await walk({
        maxDepth: 5,
        maxDirectories: 100,
        maxEntries: 100,
        followDirectorySymlinks: false,
      });
      await walk({
        maxDepth: 5,
        maxDirectories: 100,
        maxEntries: 100,
        followDirectorySymlinks: true,
        pruneHiddenDirectories: true,
      });
      await walk({
        maxDepth: 0,
        maxDirectories: 100,
        maxEntries: 100,
        followDirectorySymlinks: false,
      });
      await walk({
        maxDepth: 5,
        maxDirectories: 100,
        maxEntries: 2,
        followDirectorySymlinks: false,
      });
      await walk({
        maxDepth: 5,
        maxDirectories: 0,
        maxEntries: 100,
        followDirectorySymlinks: false,
      });
      await walk({
        maxDepth: 65,
        maxDirectories: 100,
        maxEntries: 100,
        followDirectorySymlinks: false,
      });
      await walk(
        { maxDepth: 5, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false },
        `${dirUri}/d1/f1`,
      );
      await walk(
        { maxDepth: 5, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false },
        `${dirUri}/missing`,
      );
      await a.request(
        'fs/walk',
        { path: dirUri, options: { maxDepth: 5 }, sandbox: null },
        { variant: 'walk limits omitted' },
      );
      await a.close();
    },
  },
  {
    name: 'fs-streaming',
    description:
      'fs/open read + readBlock + close; open replace + writeBlock (offsets) + close; unknown handle, bad len, long handle id, duplicate handle id, open of a directory.',
    async run({ url, rec, dir, dirUri }) {
      await writeFile(join(dir, 'src.txt'), '0123456789');
      const a = await Conn.session(url, rec);
      await a.request('fs/open', {
        handleId: 'r1',
        path: `${dirUri}/src.txt`,
        mode: 'read',
        sandbox: null,
      });
      await a.request('fs/readBlock', { handleId: 'r1', offset: 0, len: 4 });
      await a.request('fs/readBlock', { handleId: 'r1', offset: 8, len: 4 });
      await a.request('fs/readBlock', { handleId: 'r1', offset: 100, len: 4 });
      await a.request('fs/readBlock', { handleId: 'r1', offset: 0, len: 0 });
      await a.request('fs/readBlock', { handleId: 'r1', offset: 0, len: 1048577 });
      await a.request('fs/open', {
        handleId: 'r1',
        path: `${dirUri}/src.txt`,
        mode: 'read',
        sandbox: null,
      });
      await a.request('fs/writeBlock', { handleId: 'r1', offset: 0, chunk: b64('x') });
      await a.request('fs/close', { handleId: 'r1' });
      await a.request('fs/close', { handleId: 'r1' });
      await a.request('fs/readBlock', { handleId: 'r1', offset: 0, len: 4 });
      await a.request(
        'fs/open',
        { handleId: 'no-mode', path: `${dirUri}/src.txt`, sandbox: null },
        { variant: 'mode omitted' },
      );
      await a.request('fs/close', { handleId: 'no-mode' });
      await a.request('fs/open', {
        handleId: 'w1',
        path: `${dirUri}/out.txt`,
        mode: 'replace',
        sandbox: null,
      });
      await a.request('fs/writeBlock', { handleId: 'w1', offset: 0, chunk: b64('hello ') });
      await a.request('fs/writeBlock', { handleId: 'w1', offset: 6, chunk: b64('world') });
      await a.request('fs/readBlock', { handleId: 'w1', offset: 0, len: 4 });
      await a.request('fs/readFile', { path: `${dirUri}/out.txt`, sandbox: null });
      await a.request('fs/writeBlock', { handleId: 'w1', offset: 20, chunk: b64('gap') });
      await a.request('fs/writeBlock', { handleId: 'w1', offset: 0, chunk: b64('HE') });
      await a.request('fs/close', { handleId: 'w1' });
      await a.request('fs/readFile', { path: `${dirUri}/out.txt`, sandbox: null });
      await a.request('fs/open', {
        handleId: 'w2',
        path: `${dirUri}/src.txt`,
        mode: 'replace',
        sandbox: null,
      });
      await a.request('fs/readFile', { path: `${dirUri}/src.txt`, sandbox: null });
      await a.request('fs/close', { handleId: 'w2' });
      await a.request('fs/readFile', { path: `${dirUri}/src.txt`, sandbox: null });
      await a.request('fs/open', {
        handleId: 'w3',
        path: `${dirUri}/missing-dir/out.txt`,
        mode: 'replace',
        sandbox: null,
      });
      await a.request('fs/open', {
        handleId: 'x'.repeat(33),
        path: `${dirUri}/src.txt`,
        mode: 'read',
        sandbox: null,
      });
      await a.request('fs/open', { handleId: 'd', path: dirUri, mode: 'read', sandbox: null });
      await a.request('fs/open', {
        handleId: 'm',
        path: `${dirUri}/missing`,
        mode: 'read',
        sandbox: null,
      });
      await a.request('fs/open', {
        handleId: 'bad',
        path: `${dirUri}/src.txt`,
        mode: 'append',
        sandbox: null,
      });
      await a.close();
    },
  },
  {
    name: 'http-request',
    description:
      'http/request against a local server: buffered GET with repeated headers, POST with body, 404, redirect follow vs stop, streamed body deltas, bad scheme, bad method, duplicate stream id, timeout.',
    async run({ url, rec, httpBase }) {
      const a = await Conn.session(url, rec);
      const req = (params: Record<string, unknown>) =>
        a.request('http/request', {
          headers: [],
          bodyBase64: null,
          redirectPolicy: 'follow',
          streamResponse: false,
          ...params,
        });
      await req({
        method: 'GET',
        url: `${httpBase}/hello`,
        headers: [
          { name: 'X-Test', value: 'one' },
          { name: 'x-test', value: 'two' },
        ],
        requestId: 'b1',
      });
      await req({
        method: 'POST',
        url: `${httpBase}/echo`,
        bodyBase64: b64('posted body'),
        requestId: 'b2',
        timeoutMs: 5000,
      });
      await req({ method: 'GET', url: `${httpBase}/missing`, requestId: 'b3' });
      await req({ method: 'GET', url: `${httpBase}/redirect`, requestId: 'b4' });
      await req({
        method: 'GET',
        url: `${httpBase}/redirect`,
        redirectPolicy: 'stop',
        requestId: 'b5',
      });
      await req({
        method: 'GET',
        url: `${httpBase}/stream`,
        requestId: 's1',
        streamResponse: true,
      });
      await a.notification(
        'http/request/bodyDelta',
        (p) => p.requestId === 's1' && p.done === true,
      );
      await req({
        method: 'GET',
        url: `${httpBase}/slow-stream`,
        requestId: 's2',
        streamResponse: true,
      });
      await req({
        method: 'GET',
        url: `${httpBase}/slow-stream`,
        requestId: 's2',
        streamResponse: true,
      });
      await a.notification(
        'http/request/bodyDelta',
        (p) => p.requestId === 's2' && p.done === true,
      );
      await req({
        method: 'GET',
        url: `${httpBase}/abort-stream`,
        requestId: 's3',
        streamResponse: true,
      });
      await a.notification(
        'http/request/bodyDelta',
        (p) => p.requestId === 's3' && p.done === true,
      );
      await req({ method: 'GET', url: `${httpBase}/slow`, requestId: 't1', timeoutMs: 100 });
      await req({ method: 'GET', url: 'ftp://127.0.0.1/x', requestId: 'e1' });
      await req({ method: 'GET', url: 'not a url', requestId: 'e2' });
      await req({ method: 'BAD METHOD', url: `${httpBase}/hello`, requestId: 'e3' });
      await req({
        method: 'GET',
        url: `${httpBase}/hello`,
        headers: [{ name: 'bad header', value: 'x' }],
        requestId: 'e4',
      });
      await req({ method: 'GET', url: 'http://127.0.0.1:1/', requestId: 'e5' });
      await a.request(
        'http/request',
        { method: 'GET', url: `${httpBase}/hello` },
        { variant: 'requestId and defaults omitted' },
      );
      await a.close();
    },
  },
  {
    name: 'environment-config',
    description:
      'environmentConfig/read with no paths (error), with candidate paths, and capability discovery V1/V2.',
    async run({ url, rec, dir, dirUri }) {
      await mkdir(join(dir, 'skills', 'demo'), { recursive: true });
      await writeFile(
        join(dir, 'skills', 'demo', 'SKILL.md'),
        '---\nname: demo\ndescription: demo skill\n---\nDo the demo.\n',
      );
      await writeFile(join(dir, 'config.toml'), 'model = "x"\n');
      const a = await Conn.session(url, rec);
      await a.request('environmentConfig/read', {
        cwd: dirUri,
        configPaths: [],
        requirementsPaths: [],
      });
      await a.request('environmentConfig/read', {
        cwd: dirUri,
        configPaths: [['config.toml']],
        requirementsPaths: [['requirements.toml']],
      });
      await a.request('environmentConfig/read', {
        cwd: dirUri,
        configPaths: [[join(dir, 'config.toml')]],
        requirementsPaths: [],
      });
      await a.request('capabilityRoots/discoverV1', {
        roots: [
          { id: 'r1', path: dirUri },
          { id: 'r2', path: `${dirUri}/missing` },
        ],
      });
      await a.request('capabilities/discoverV2', { cwd: dirUri });
      await a.close();
    },
  },
  {
    name: 'watch-missing',
    description:
      'fs/watchMissing: a watch fires fs/missingChanged once when the missing path appears; a watchId not above the last one is refused; present optional.',
    async run({ url, rec, dir, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.request('fs/watchMissing', { watchId: 1, missing: [`${dirUri}/a`] });
      await writeFile(join(dir, 'a'), '');
      await a.waitFor((m) => m.method === 'fs/missingChanged');
      await a.request('fs/watchMissing', { watchId: 1, missing: [`${dirUri}/b`] });
      await a.request('fs/watchMissing', {
        watchId: 2,
        missing: [`${dirUri}/b`],
        present: dirUri,
      });
      await a.request('fs/watchMissing', { watchId: 3, missing: [`${dirUri}/a`] });
      await a.close();
    },
  },
  {
    name: 'malformed-input',
    description:
      'Bad JSON, a JSON array (batch), a non-object, a wrong shape, duplicate keys, a binary frame with JSON, a "jsonrpc" member and a string id: replies and whether the connection stays open.',
    async run({ url, rec }) {
      const a = await Conn.session(url, rec);
      a.sendRaw('{not json');
      await a.waitFor((m) => m.id === -1);
      a.sendRaw('[{"id":50,"method":"environment/status","params":null}]');
      await a.waitFor((m) => m.id === -1);
      a.sendRaw('42');
      await a.waitFor((m) => m.id === -1);
      a.sendRaw('{"id":51,"method":7}');
      await a.waitFor((m) => m.id === -1);
      a.sendRaw(
        '{"id":52,"method":"environment/status","method":"environment/info","params":null}',
      );
      await a.waitFor((m) => m.id === -1 || m.id === 52);
      a.send({ id: 53, method: 'environment/status', params: null }, { binary: true });
      await a.waitFor((m) => m.id === 53);
      a.send({ jsonrpc: '2.0', id: 54, method: 'environment/status', params: null });
      await a.waitFor((m) => m.id === 54);
      a.send({ id: 'str-id', method: 'environment/status', params: null });
      await a.waitFor((m) => m.id === 'str-id');
      a.send({ id: 56, method: 'no/such/method', params: {} });
      await a.waitFor((m) => m.id === 56);
      a.send({ id: 57, method: 'process/read', params: { processId: 5 } });
      await a.waitFor((m) => m.id === 57);
      await a.request('environment/status', null);
      await a.close();
    },
  },
  {
    name: 'unimplemented-methods',
    description:
      'Method names suggested by capability flags or other versions that 0.169.0 does not serve.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      await a.request('fs/watch', { path: dirUri });
      await a.request('fs/unwatch', { path: dirUri });
      await a.request('process/resize', { processId: 'x', cols: 100, rows: 30 });
      await a.request('capabilities/discoverV1', { cwd: dirUri });
      await a.close();
    },
  },
  {
    name: 'unknown-notification',
    description: 'An unknown notification closes the connection.',
    async run({ url, rec }) {
      const a = await Conn.session(url, rec);
      a.notify('no/such/notification', {});
      await a.waitClosed();
      await a.close();
    },
  },
  {
    name: 'unexpected-response',
    description:
      'A client response whose id matches no pending server request closes the connection.',
    async run({ url, rec }) {
      const a = await Conn.session(url, rec);
      a.send({ id: 999, result: {} });
      await a.waitClosed();
      await a.close();
    },
  },
  {
    name: 'initialized-before-initialize',
    description: 'An initialized notification before initialize.',
    async run({ url, rec }) {
      const a = await Conn.open(url, rec);
      a.notify('initialized', {});
      await a.waitClosed(1000);
      if (!a.closed) await a.request('environment/status', null);
      await a.close();
    },
  },
  {
    name: 'http-routes',
    description: 'GET /readyz, and a WebSocket upgrade carrying an Origin header.',
    async run({ url, rec }) {
      const base = url.replace('ws://', 'http://');
      const get = (path: string, headers: Record<string, string> = {}) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpRequest(`${base}${path}`, { headers }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.end();
        });
      const readyz = await get('/readyz');
      rec.transcript.push({
        conn: 'http',
        dir: 'recv',
        event: 'http',
        detail: { request: 'GET /readyz', ...readyz },
      });
      const readyzOrigin = await get('/readyz', { Origin: 'http://evil.example' });
      rec.transcript.push({
        conn: 'http',
        dir: 'recv',
        event: 'http',
        detail: { request: 'GET /readyz with Origin', ...readyzOrigin },
      });
      const upgrade = await new Promise<unknown>((resolve) => {
        const ws = new WebSocket(url, { headers: { Origin: 'http://evil.example' } });
        ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
        ws.on('open', () => {
          ws.close();
          resolve({ opened: true });
        });
        ws.on('error', (error) => resolve({ error: error.message }));
      });
      rec.transcript.push({
        conn: 'http',
        dir: 'recv',
        event: 'http',
        detail: { request: 'WebSocket upgrade with Origin', ...(upgrade as object) },
      });
    },
  },
  {
    name: 'ws-auth-capability-token',
    description:
      'Executor started with --ws-auth capability-token --ws-token-file: upgrade without a token, with a wrong token, with Authorization: Bearer <token>.',
    ownServer: true,
    async run({ rec, dir }) {
      const tokenFile = join(dir, 'token');
      await writeFile(tokenFile, 'execrx-secret-token\n');
      const server = await startCodexExecServer({
        args: ['--ws-auth', 'capability-token', '--ws-token-file', tokenFile],
      });
      try {
        const attempt = (label: string, headers: Record<string, string>) =>
          new Promise<void>((resolve) => {
            const ws = new WebSocket(server.url, { headers });
            const done = (detail: unknown) => {
              rec.transcript.push({
                conn: 'http',
                dir: 'recv',
                event: 'http',
                detail: { request: label, ...(detail as object) },
              });
              resolve();
            };
            ws.on('unexpected-response', (_req, res) => {
              let body = '';
              res.on('data', (c: Buffer) => (body += c.toString()));
              res.on('end', () => done({ status: res.statusCode, body }));
            });
            ws.on('open', () => {
              ws.close();
              done({ opened: true });
            });
            ws.on('error', (error) => done({ error: error.message }));
          });
        await attempt('upgrade without token', {});
        await attempt('upgrade with wrong bearer token', { Authorization: 'Bearer wrong' });
        await attempt('upgrade with Authorization: Bearer <token>', {
          Authorization: 'Bearer execrx-secret-token',
        });
      } finally {
        await server.stop();
      }
    },
  },
  {
    name: 'fs-write-stream',
    description:
      'fs/open mode replace then fs/writeBlock at offset 0, a repeated offset, a gap past the end and a rewrite; file contents before and after close.',
    async run({ url, rec, dir, dirUri }) {
      await writeFile(join(dir, 'existing.txt'), 'previous contents');
      const a = await Conn.session(url, rec);
      const path = `${dirUri}/existing.txt`;
      await a.request('fs/open', { handleId: 'w', path, mode: 'replace', sandbox: null });
      await a.request('fs/readFile', { path, sandbox: null });
      await a.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: b64('hello') });
      await a.request('fs/writeBlock', { handleId: 'w', offset: 5, chunk: b64(' world') });
      await a.request('fs/readFile', { path, sandbox: null });
      await a.request('fs/writeBlock', { handleId: 'w', offset: 20, chunk: b64('gap') });
      await a.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: b64('HE') });
      await a.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: 'not base64!' });
      await a.request('fs/close', { handleId: 'w' });
      await a.request('fs/readFile', { path, sandbox: null });
      await a.request('fs/writeBlock', { handleId: 'w', offset: 0, chunk: b64('after close') });
      await a.request('fs/open', {
        handleId: 'n',
        path: `${dirUri}/new.txt`,
        mode: 'replace',
        sandbox: null,
      });
      await a.request('fs/writeBlock', { handleId: 'n', offset: 0, chunk: '' });
      await a.request('fs/close', { handleId: 'n' });
      await a.request('fs/getMetadata', { path: `${dirUri}/new.txt`, sandbox: null });
      await a.close();
    },
  },
  {
    name: 'resume-detached-ttl',
    description:
      'Detached-session lifetime: ten sessions (odd ones with a running process) are detached at once and resumed one pair each at ~35, 65, 78, 86 and 95 s.',
    async run({ url, rec, dirUri }) {
      const sessions: string[] = [];
      for (let i = 0; i < 10; i++) {
        const conn = await Conn.open(url, rec, `S${i}`, { timed: true });
        sessions.push(await conn.handshake());
        if (i % 2 === 1) await conn.startProcess(`long${i}`, ['sleep', '300'], dirUri);
        await conn.close();
      }
      const checkpoints = [35_000, 65_000, 78_000, 86_000, 95_000];
      for (const [index, at] of checkpoints.entries()) {
        await sleep(Math.max(0, at - rec.elapsed()));
        for (const i of [index * 2, index * 2 + 1]) {
          const conn = await Conn.open(url, rec, `R${i}`, { timed: true });
          await conn.request('initialize', {
            clientName: 'execrx-capture',
            resumeSessionId: sessions[i],
          });
          await conn.close();
        }
      }
    },
  },
  {
    name: 'network-policy',
    description:
      'Executor-local network proxy (networkProxy with policyDecisionTimeoutMs): baseline denial of a loopback target (policyDecision only), a network/policyRequest answered deny, one answered with a JSON-RPC error. No connection is ever allowed out.',
    async run({ url, rec, dirUri }) {
      const a = await Conn.session(url, rec);
      const proxy = PROXY;
      const curl = (target: string) => [
        'sh',
        '-c',
        `curl -s -m 5 ${target} -o /dev/null -w "code=%{http_code}\\n"; echo "proxy=$HTTP_PROXY"`,
      ];
      const start = (id: string, target: string) =>
        a.startProcess(id, curl(target), dirUri, {
          networkProxy: { proxy, policyDecisionTimeoutMs: 5000 },
        });
      await a.startProcess('np0', ['true'], dirUri, {
        networkProxy: { proxy: { ...proxy, enabled: false }, policyDecisionTimeoutMs: 5000 },
      });
      await a.startProcess('np00', ['true'], dirUri, {
        networkProxy: { proxy, policyDecisionTimeoutMs: 0 },
      });
      await start('np1', 'http://127.0.0.1:9/');
      await untilClosed(a, 'np1');
      a.answer = (request) => ({
        id: request.id,
        result: { decision: { type: 'deny', reason: 'execrx-capture' } },
      });
      await start('np2', 'http://example.com/');
      await untilClosed(a, 'np2');
      a.answer = (request) => ({
        id: request.id,
        error: { code: -32603, message: 'capture refuses to decide' },
      });
      await start('np3', 'http://example.org/');
      await untilClosed(a, 'np3');
      a.answer = undefined;
      await a.close();
    },
  },
  {
    name: 'keepalive-ping',
    description: 'An idle connection for 32 s: does the executor send WebSocket pings, and when.',
    async run({ url, rec }) {
      const a = await Conn.open(url, rec, 'A', { timed: true });
      await a.handshake();
      await sleep(32_000);
      await a.request('environment/status', null);
      await a.close();
    },
  },
];

function startHttpServer(): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/hello') {
      res.setHeader('X-Repeated', ['a', 'b']);
      res.setHeader('Content-Type', 'text/plain');
      res.end(`hello; you sent x-test=${JSON.stringify(req.headers['x-test'])}`);
    } else if (path === '/echo') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`${req.method} ${Buffer.concat(chunks).toString()}`));
    } else if (path === '/redirect') {
      res.statusCode = 302;
      res.setHeader('Location', '/hello');
      res.end('redirecting');
    } else if (path === '/stream' || path === '/slow-stream') {
      res.setHeader('Content-Type', 'text/plain');
      let n = 0;
      const tick = () => {
        n += 1;
        res.write(`chunk-${n}\n`);
        if (n < 3) setTimeout(tick, path === '/slow-stream' ? 150 : 30);
        else res.end();
      };
      tick();
    } else if (path === '/abort-stream') {
      res.setHeader('Content-Length', '1000');
      res.write('partial');
      setTimeout(() => res.destroy(), 50);
    } else if (path === '/slow') {
      setTimeout(() => res.end('too late'), 1000);
    } else {
      res.statusCode = 404;
      res.end('not found');
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no address');
      resolve({ server, base: `http://127.0.0.1:${address.port}` });
    }),
  );
}

async function runScenario(
  scenario: Scenario,
  server: RunningExecServer,
  httpBase: string,
  scratch: string,
) {
  const rec = new Recorder();
  const dir = await mkdtemp(join(scratch, `${scenario.name}-`));
  const ctx: Context = { url: server.url, rec, dir, dirUri: pathToFileUri(dir), httpBase };
  let failure: string | undefined;
  try {
    await scenario.run(ctx);
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  const fixture: Fixture = {
    name: scenario.name,
    description: scenario.description,
    executor: 'codex exec-server 0.169.0 (--listen ws://127.0.0.1:0)',
    transcript: rec.transcript,
    ...(failure !== undefined ? { captureError: failure } : {}),
  };
  await writeFile(join(WIRE_DIR, `${scenario.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
  console.log(
    `${failure ? 'FAILED' : 'ok    '} ${scenario.name} (${rec.transcript.length} entries)${failure ? `: ${failure}` : ''}`,
  );
}

/** Scenarios that mostly sleep; started first so they overlap the busy ones. */
const IDLE = new Set(['keepalive-ping', 'resume-detached-ttl']);

async function main() {
  const only = process.argv.slice(2);
  const selected = (only.length ? scenarios.filter((s) => only.includes(s.name)) : scenarios).sort(
    (x, y) => Number(IDLE.has(y.name)) - Number(IDLE.has(x.name)),
  );
  if (selected.length === 0)
    throw new Error(
      `no scenario named ${only.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`,
    );
  await mkdir(WIRE_DIR, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'execrx-capture-'));
  const { server: http, base } = await startHttpServer();
  // Each scenario gets a fresh executor so sessions and processes never leak between fixtures;
  // they run concurrently (the keepalive one idles for 32 s).
  try {
    const queue = [...selected];
    const worker = async () => {
      for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
        const server = await startCodexExecServer({ cwd: scratch });
        try {
          await runScenario(scenario, server, base, scratch);
        } finally {
          await server.stop();
        }
      }
    };
    // The two idle scenarios take a worker each; three workers run the busy ones.
    await Promise.all([worker(), worker(), worker(), worker(), worker()]);
  } finally {
    http.close();
    http.closeAllConnections();
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
