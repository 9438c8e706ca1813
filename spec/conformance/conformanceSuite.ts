/**
 * The conformance suite: one set of assertions about exec-server behaviour, written once and
 * run against every executor we ship or must interoperate with (the real `codex exec-server`
 * binary, our TypeScript executor, later the Noise relay path). A target is anything that can
 * open `Transport`s to a fresh executor, so the suite never assumes a WebSocket URL.
 *
 * Every assertion is the same for every target: a target that needs a different expectation
 * has a bug (or the difference belongs in FINDINGS.md), never a branch in here.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Observable,
  defer,
  filter,
  firstValueFrom,
  lastValueFrom,
  retry,
  scan,
  switchMap,
  throwError,
  timeout,
  timer,
  toArray,
} from 'rxjs';
import {
  ExecServerClient,
  isRetryableResumeError,
  type ProcessHandle,
  type StartProcessOptions,
} from '../../src/client/index.js';
import {
  MessageTooLargeError,
  NotFoundError,
  ProcessWriteRejectedError,
} from '../../src/protocol/errors.js';
import type { Transport } from '../../src/transport/transport.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import type { ExecServerFactory } from '../support/codexExecServer.js';

/** A running executor the suite can open sessions on. */
export interface ConformanceTarget {
  /** Opens a new transport to the executor (cold: one per subscription). */
  connect(): Observable<Transport>;
  /** Stops the executor and everything it started. */
  stop(): Promise<void>;
}

/** Starts one executor for one run of the suite. */
export type ConformanceTargetFactory = () => Promise<ConformanceTarget>;

/** Tests a target may declare as known failures (each one is a bug to fix, see the report). */
export type ConformanceTestId = 'pipe-stdio' | 'dev-stdout';

export interface ConformanceOptions {
  /** Known bugs of this target: those tests must fail (jest `it.failing`) until fixed. */
  readonly knownFailures?: readonly ConformanceTestId[];
}

/** Adapts a WebSocket server factory (`{ url, stop }`) to a conformance target. */
export function webSocketTarget(factory: ExecServerFactory): ConformanceTargetFactory {
  return async () => {
    const server = await factory();
    return { connect: () => connectWebSocket(server.url), stop: () => server.stop() };
  };
}

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const WAIT_MS = 10_000;
const BIG_OUTPUT_BYTES = 16 * 1024 * 1024;

/** Bounded awaits: nothing in the suite can hang past WAIT_MS. */
const first = <T>(source: Observable<T>, ms = WAIT_MS): Promise<T> =>
  firstValueFrom(source.pipe(timeout(ms)));
const all = <T>(source: Observable<T>, ms = WAIT_MS): Promise<T[]> =>
  lastValueFrom(source.pipe(toArray(), timeout(ms)));
const text = (chunks: readonly Uint8Array[]): string => Buffer.concat(chunks).toString('utf8');
const sha256 = (chunks: readonly Uint8Array[]): string => {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(chunk);
  return hash.digest('hex');
};

/** Resolves with the accumulated text of `source` once it contains `needle`. */
const textContaining = (source: Observable<Uint8Array>, needle: string): Promise<string> =>
  first(
    source.pipe(
      scan((acc, chunk) => acc + Buffer.from(chunk).toString('utf8'), ''),
      filter((acc) => acc.includes(needle)),
    ),
  );

/**
 * A loopback HTTP server for `http/request`: `/stream` sends its body in three chunks, the
 * second only after `release()` (so a test can prove the head arrived before the body was
 * complete), `/echo` answers with the request's method, a header and body.
 */
class ChunkedHttpServer {
  private releaseNext: (() => void) | undefined;
  private released = new Promise<void>((resolve) => (this.releaseNext = resolve));
  readonly sockets = new Set<Socket>();

  private constructor(readonly server: Server) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<ChunkedHttpServer> {
    const handler: { target?: ChunkedHttpServer } = {};
    const server = createServer((req, res) => void handler.target?.handle(req, res));
    const self = new ChunkedHttpServer(server);
    handler.target = self;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  release(): void {
    this.releaseNext?.();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body: Buffer[] = [];
    for await (const chunk of req) body.push(chunk as Buffer);
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-conformance': 'stream' });
      res.write('first-');
      await this.released;
      res.write('second-');
      await new Promise((resolve) => setTimeout(resolve, 60));
      res.write('third-');
      await new Promise((resolve) => setTimeout(resolve, 60));
      res.end('last');
      return;
    }
    res.writeHead(201, { 'content-type': 'text/plain', 'x-method': req.method ?? '' });
    res.end(`${req.headers['x-probe'] ?? ''}|${Buffer.concat(body).toString('utf8')}`);
  }

  async close(): Promise<void> {
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Registers a `describe` block that starts one executor from `factory`, runs every
 * conformance assertion against it, and stops it (and every client) in afterAll.
 */
export function describeConformance(
  name: string,
  factory: ConformanceTargetFactory,
  options: ConformanceOptions = {},
): void {
  const knownFailures = new Set(options.knownFailures ?? []);
  /**
   * A test with an id that a target may list as a known failure: the assertions stay the
   * same, and jest's `it.failing` turns red as soon as the target is fixed.
   */
  const conformanceIt = (
    id: ConformanceTestId,
    title: string,
    fn: () => Promise<void>,
    ms?: number,
  ) =>
    knownFailures.has(id)
      ? it.failing(`${title} [known failure: ${id}]`, fn, ms)
      : it(title, fn, ms);

  describe(`exec-server conformance: ${name}`, () => {
    let target: ConformanceTarget | undefined;
    let workDir = '';
    let http: ChunkedHttpServer | undefined;
    const clients: ExecServerClient[] = [];
    const handles: ProcessHandle[] = [];

    const session = async (): Promise<ExecServerClient> => {
      if (!target) throw new Error('conformance target did not start');
      const transport = await first(target.connect());
      const client = await first(
        ExecServerClient.connect(transport, { clientName: 'execrx-conformance' }),
      );
      clients.push(client);
      return client;
    };

    const start = async (
      client: ExecServerClient,
      options: Omit<StartProcessOptions, 'cwd'>,
    ): Promise<ProcessHandle> => {
      const handle = await first(client.startProcess({ cwd: workDir, env: PATH_ENV, ...options }));
      handles.push(handle);
      return handle;
    };

    beforeAll(async () => {
      // realpath: on some hosts tmpdir() is itself a symlink, and canonicalize resolves it.
      workDir = await realpath(await mkdtemp(join(tmpdir(), 'execrx-conformance-')));
      [target, http] = await Promise.all([factory(), ChunkedHttpServer.start()]);
    });

    afterAll(async () => {
      for (const handle of handles) {
        await first(handle.terminate(), 2_000).catch(() => undefined);
      }
      for (const client of clients) client.close();
      await Promise.all([target?.stop(), http?.close()]);
      if (workDir) await rm(workDir, { recursive: true, force: true });
    });

    describe('environment', () => {
      it('environment/info describes the host, environment/status is ready', async () => {
        const client = await session();
        const info = await first(client.environmentInfo());
        // Free text: "0.169.0" on the binary, "execrx <version>" on ours.
        expect(info.executorVersion.length).toBeGreaterThan(0);
        expect(info.shell.path.length).toBeGreaterThan(0);
        expect(['zsh', 'bash', 'sh', 'powershell', 'cmd']).toContain(info.shell.name);
        expect(info.platformOs).toBe(process.platform === 'darwin' ? 'macos' : process.platform);
        expect(info.cwd).toMatch(/^file:\/\//);
        expect(info.tempDir).toMatch(/^file:\/\//);
        expect(info.capabilities.fileWriteStreaming).toBe(true);
        expect(info.capabilities.windowsMxc).toBe(false);
        expect(await first(client.environmentStatus())).toBe('ready');
      });
    });

    describe('processes', () => {
      it('separates stdout from stderr and reports the exit code, closed last', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: ['sh', '-c', 'printf out-1; printf err-1 >&2; sleep 0.05; printf out-2; exit 7'],
        });
        const [events, stdout, stderr, exitCode] = await Promise.all([
          all(handle.events$),
          all(handle.stdout$),
          all(handle.stderr$),
          first(handle.exit$),
        ]);
        expect(text(stdout)).toBe('out-1out-2');
        expect(text(stderr)).toBe('err-1');
        expect(exitCode).toBe(7);
        expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
        expect(events.filter((event) => event.type === 'exited')).toHaveLength(1);
        expect(events.at(-1)?.type).toBe('closed');
        expect(handle.sandboxType).toBe('none');
      });

      conformanceIt(
        'pipe-stdio',
        'gives a pipe-mode child real pipes (FIFOs) as stdin, stdout and stderr',
        async () => {
          const client = await session();
          const handle = await start(client, {
            argv: [
              'sh',
              '-c',
              'for fd in 0 1 2; do if [ -p /dev/fd/$fd ]; then echo "$fd:fifo"; elif [ -S /dev/fd/$fd ]; then echo "$fd:socket"; else echo "$fd:other"; fi; done',
            ],
            pipeStdin: true,
          });
          expect(text(await all(handle.stdout$))).toBe('0:fifo\n1:fifo\n2:fifo\n');
        },
      );

      conformanceIt(
        'dev-stdout',
        'lets a pipe-mode child open /dev/stdout and /dev/stderr by path',
        async () => {
          const client = await session();
          const handle = await start(client, {
            argv: [
              'sh',
              '-c',
              'echo to-dev-stdout > /dev/stdout; echo to-dev-stderr > /dev/stderr',
            ],
          });
          const [stdout, stderr] = await Promise.all([all(handle.stdout$), all(handle.stderr$)]);
          expect([text(stdout), text(stderr)]).toEqual(['to-dev-stdout\n', 'to-dev-stderr\n']);
          expect(await first(handle.exit$)).toBe(0);
        },
      );

      it('feeds stdin through pipeStdin', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: ['sh', '-c', 'read a; read b; printf "%s+%s" "$a" "$b"'],
          pipeStdin: true,
        });
        const stdout = all(handle.stdout$);
        await first(handle.write('alpha\n'));
        await first(handle.write(new TextEncoder().encode('beta\n')));
        expect(text(await stdout)).toBe('alpha+beta');
        expect(await first(handle.exit$)).toBe(0);
      });

      it('runs a tty process: output on the pty stream, stdin/stdout are terminals', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: ['sh', '-c', 'test -t 0 && test -t 1 && echo "tty:yes"; echo "to-stderr" >&2'],
          tty: true,
        });
        const [events, stderr, exitCode] = await Promise.all([
          all(handle.events$),
          all(handle.stderr$),
          first(handle.exit$),
        ]);
        const outputs = events.filter((event) => event.type === 'output');
        expect(outputs.length).toBeGreaterThan(0);
        expect(outputs.every((event) => event.stream === 'pty')).toBe(true);
        const printed = text(outputs.map((event) => event.chunk));
        // A terminal turns "\n" into "\r\n" and merges stderr into the same stream.
        expect(printed).toBe('tty:yes\r\nto-stderr\r\n');
        expect(stderr).toEqual([]);
        expect(exitCode).toBe(0);
      });

      it('accepts stdin on a tty process (echoed by the terminal)', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: ['sh', '-c', 'read line; echo "got:$line"'],
          tty: true,
        });
        const stdout = textContaining(handle.stdout$, 'got:hello');
        await first(handle.write('hello\n'));
        expect(await stdout).toContain('hello\r\n');
        expect(await first(handle.exit$)).toBe(0);
      });

      it('runs in the given cwd with exactly the given environment', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: ['sh', '-c', 'pwd; echo "A=$A"; echo "HOME=${HOME-unset}"'],
          env: { ...PATH_ENV, A: 'from-client' },
        });
        expect(text(await all(handle.stdout$))).toBe(`${workDir}\nA=from-client\nHOME=unset\n`);
      });

      it('rejects a write to a process started without pipeStdin', async () => {
        const client = await session();
        const handle = await start(client, { argv: ['sh', '-c', 'sleep 0.2'] });
        const error = await first(handle.write('ignored')).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(ProcessWriteRejectedError);
        expect((error as ProcessWriteRejectedError).status).toBe('stdinClosed');
        expect(await first(handle.exit$)).toBe(0);
      });

      it('passes 1 MiB through stdin intact', async () => {
        const client = await session();
        const bytes = 1024 * 1024;
        const handle = await start(client, {
          argv: ['sh', '-c', `head -c ${bytes} | sha256sum`],
          pipeStdin: true,
        });
        const stdout = all(handle.stdout$);
        const payload = Buffer.alloc(bytes);
        for (let index = 0; index < bytes; index += 1) payload[index] = (index * 7 + 3) & 0xff;
        // Several writes; each must be applied once and in order.
        for (let offset = 0; offset < bytes; offset += 256 * 1024) {
          await first(handle.write(payload.subarray(offset, offset + 256 * 1024)));
        }
        expect(text(await stdout).split(' ')[0]).toBe(sha256([payload]));
      });

      it('keeps delivering output after exit until the pipes close (closed is last)', async () => {
        const client = await session();
        const handle = await start(client, {
          // The pause after `early` lets the executor read it before it reaps the exit; without
          // it either order is legal on both servers (output may follow exited).
          argv: ['sh', '-c', '(sleep 0.6; echo late) & echo early; sleep 0.2; exit 4'],
        });
        const events = await all(handle.events$);
        const kinds = events.map((event) =>
          event.type === 'output' ? Buffer.from(event.chunk).toString() : event.type,
        );
        expect(kinds).toEqual(['early\n', 'exited', 'late\n', 'closed']);
        expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4]);
      });

      it('long-polls process/read until new output arrives', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: ['sh', '-c', 'echo first; sleep 0.3; echo second'],
        });
        await textContaining(handle.stdout$, 'first');
        const before = await first(handle.read({ afterSeq: 0 }));
        expect(before.chunks.map((c) => Buffer.from(c.chunk).toString())).toEqual(['first\n']);
        // Without waitMs this would return no chunks; with it the reply waits for "second". It
        // may come back first with the exit alone: either server can reap the exit before it
        // reads the last output (seen on the binary in CI), and an exit past afterSeq ends a
        // long poll (spec/protocol.md §6.6 step 5). Never empty-handed otherwise.
        const later: string[] = [];
        let afterSeq = before.nextSeq - 1;
        for (let reply = 0; reply < 3 && !later.includes('second\n'); reply += 1) {
          const after = await first(handle.read({ afterSeq, waitMs: 5_000 }));
          if (after.chunks.length === 0) expect(after.exited || after.closed).toBe(true);
          later.push(...after.chunks.map((c) => Buffer.from(c.chunk).toString()));
          afterSeq = after.nextSeq - 1;
        }
        expect(later).toEqual(['second\n']);
      });

      it('interrupts a long-running process (SIGINT to its process group)', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: [
            'sh',
            '-c',
            'trap "echo interrupted; exit 42" INT; echo ready; while :; do sleep 0.05; done',
          ],
        });
        await textContaining(handle.stdout$, 'ready');
        await first(handle.signal('interrupt'));
        expect(await first(handle.exit$)).toBe(42);
        expect(text(await all(handle.stdout$))).toBe('ready\ninterrupted\n');
      });

      it('reports 128+2 for a process killed by the interrupt', async () => {
        const client = await session();
        const handle = await start(client, { argv: ['sh', '-c', 'echo ready; exec sleep 30'] });
        await textContaining(handle.stdout$, 'ready');
        await first(handle.signal('interrupt'));
        expect(await first(handle.exit$)).toBe(130);
      });

      it('terminates a long-running pipe process with exit code 137', async () => {
        const client = await session();
        const handle = await start(client, { argv: ['sh', '-c', 'echo ready; sleep 30'] });
        await textContaining(handle.stdout$, 'ready');
        expect(await first(handle.terminate())).toBe(true);
        expect(await first(handle.exit$)).toBe(137);
        const events = await all(handle.events$);
        expect(events.at(-1)?.type).toBe('closed');
        // Once reaped, terminate reports that nothing was running.
        expect(await first(handle.terminate())).toBe(false);
      });

      it('reads retained output with an afterSeq cursor', async () => {
        const client = await session();
        const handle = await start(client, {
          argv: ['sh', '-c', 'printf a; sleep 0.05; printf b >&2; sleep 0.05; printf c; exit 5'],
        });
        const events = await all(handle.events$);
        const closed = events.at(-1);
        expect(closed?.type).toBe('closed');

        const everything = await first(handle.read({ afterSeq: 0 }));
        expect(everything.exited).toBe(true);
        expect(everything.exitCode).toBe(5);
        expect(everything.closed).toBe(true);
        expect(everything.nextSeq).toBe(closed!.seq + 1);
        const outputs = events.filter((event) => event.type === 'output');
        expect(
          everything.chunks.map((c) => [c.seq, c.stream, Buffer.from(c.chunk).toString()]),
        ).toEqual(outputs.map((c) => [c.seq, c.stream, Buffer.from(c.chunk).toString()]));
        expect(
          text(everything.chunks.filter((c) => c.stream === 'stdout').map((c) => c.chunk)),
        ).toBe('ac');

        const firstChunk = everything.chunks[0]!;
        const rest = await first(handle.read({ afterSeq: firstChunk.seq }));
        expect(rest.chunks.map((c) => c.seq)).toEqual(everything.chunks.slice(1).map((c) => c.seq));
        expect(rest.nextSeq).toBe(everything.nextSeq);

        const one = await first(handle.read({ afterSeq: 0, maxBytes: 1 }));
        expect(one.chunks.map((c) => c.seq)).toEqual([firstChunk.seq]);
        expect(one.nextSeq).toBe(firstChunk.seq + 1);

        const none = await first(handle.read({ afterSeq: everything.nextSeq - 1 }));
        expect(none.chunks).toEqual([]);
        expect(none.nextSeq).toBe(everything.nextSeq);
        expect(none.closed).toBe(true);
      });

      it('delivers 16 MiB of output complete and in order', async () => {
        const client = await session();
        // Waits for a line on stdin so the subscription is in place before any output.
        const handle = await start(client, {
          argv: [
            'bash',
            // --norc: bash sources ~/.bashrc when stdin is a socket (see the stdio test).
            '--norc',
            '-c',
            `read go; head -c ${BIG_OUTPUT_BYTES} /dev/urandom | tee >(sha256sum >&2)`,
          ],
          pipeStdin: true,
        });
        const stdout = all(handle.stdout$, 40_000);
        const stderr = all(handle.stderr$, 40_000);
        const events = all(handle.events$, 40_000);
        await first(handle.write('go\n'));
        const delivered = await stdout;
        const total = delivered.reduce((sum, chunk) => sum + chunk.byteLength, 0);
        expect(total).toBe(BIG_OUTPUT_BYTES);
        const produced = text(await stderr).split(' ')[0];
        expect(sha256(delivered)).toBe(produced);
        const seqs = (await events).map((event) => event.seq);
        expect(seqs).toEqual(seqs.map((_, index) => index + 1));
        expect(await first(handle.exit$)).toBe(0);
      }, 45_000);
    });

    describe('sessions', () => {
      it('resumes the session on a new transport after a loss; the process keeps its stdin and output', async () => {
        if (!target) throw new Error('conformance target did not start');
        const connectTarget = target.connect.bind(target);
        const transport = await first(connectTarget());
        const client = await first(
          ExecServerClient.connect(transport, { clientName: 'execrx-conformance', recovery: true }),
        );
        clients.push(client);
        const sessionId = client.sessionId;
        const handle = await first(
          client.startProcess({
            argv: ['sh', '-c', 'echo one; read x; echo "two:$x"'],
            cwd: workDir,
            env: PATH_ENV,
            pipeStdin: true,
          }),
        );
        handles.push(handle);
        const stdout = all(handle.stdout$);
        await textContaining(handle.stdout$, 'one');

        transport.close();
        await first(client.state$.pipe(filter((state) => state === 'recovering')));
        // The executor may not have noticed the loss yet (-32010 "already attached"): retry.
        await lastValueFrom(
          defer(() => connectTarget()).pipe(
            switchMap((next) => client.resume(next)),
            retry({
              count: 50,
              delay: (error: unknown) =>
                isRetryableResumeError(error) ? timer(100) : throwError(() => error),
            }),
            timeout(WAIT_MS),
          ),
          { defaultValue: undefined },
        );
        expect(client.state).toBe('connected');
        expect(client.sessionId).toBe(sessionId);

        await first(handle.write('after-resume\n'));
        expect(text(await stdout)).toBe('one\ntwo:after-resume\n');
        expect(await first(handle.exit$)).toBe(0);
      });
    });

    describe('filesystem', () => {
      it('writes a file whose request is over one 16 MiB WebSocket frame; refuses one over 64 MiB without losing the session', async () => {
        const client = await session();
        const file = join(workDir, 'large.bin');
        // 13 MiB is ~17.3 MiB of base64: more than one frame of the executor's WebSocket.
        await first(client.fs.writeFile(file, Buffer.alloc(13 * 1024 * 1024, 0x61)));
        expect((await first(client.fs.getMetadata(file))).size).toBe(13 * 1024 * 1024);
        // 49 MiB is ~65.3 MiB of base64: over any connection's 64 MiB message limit.
        await expect(
          first(client.fs.writeFile(file, Buffer.alloc(49 * 1024 * 1024, 0x62))),
        ).rejects.toBeInstanceOf(MessageTooLargeError);
        expect((await first(client.fs.getMetadata(file))).size).toBe(13 * 1024 * 1024);
      }, 30_000);

      it('writes, reads, stats, lists, canonicalizes, copies, walks and removes', async () => {
        const client = await session();
        const dir = join(workDir, 'fs tree');
        const nested = join(dir, 'sub', 'deeper');
        const file = join(dir, 'hello.txt');
        await first(client.fs.createDirectory(nested));
        await first(client.fs.writeFile(file, 'hello conformance'));
        expect(Buffer.from(await first(client.fs.readFile(file))).toString()).toBe(
          'hello conformance',
        );

        const fileMeta = await first(client.fs.getMetadata(file));
        expect(fileMeta).toMatchObject({
          isFile: true,
          isDirectory: false,
          isSymlink: false,
          size: 17,
        });
        expect(fileMeta.modifiedAtMs).toBeGreaterThan(Date.now() - 600_000);
        const dirMeta = await first(client.fs.getMetadata(dir));
        expect(dirMeta).toMatchObject({ isFile: false, isDirectory: true, isSymlink: false });

        const entries = await first(client.fs.readDirectory(dir));
        expect([...entries].sort((a, b) => a.fileName.localeCompare(b.fileName))).toEqual([
          { fileName: 'hello.txt', isDirectory: false, isFile: true },
          { fileName: 'sub', isDirectory: true, isFile: false },
        ]);

        expect(await first(client.fs.canonicalize(join(dir, 'sub', '..', 'hello.txt')))).toBe(file);

        const copy = join(dir, 'sub', 'copy.txt');
        await first(client.fs.copy(file, copy));
        expect(Buffer.from(await first(client.fs.readFile(copy))).toString()).toBe(
          'hello conformance',
        );
        const treeCopy = join(workDir, 'fs tree copy');
        await first(client.fs.copy(dir, treeCopy, { recursive: true }));
        expect((await first(client.fs.getMetadata(join(treeCopy, 'sub', 'copy.txt')))).size).toBe(
          17,
        );

        const walked = await first(
          client.fs.walk(dir, {
            maxDepth: 10,
            maxDirectories: 100,
            maxEntries: 100,
            followDirectorySymlinks: false,
          }),
        );
        expect(walked.truncated).toBe(false);
        expect(walked.errors).toEqual([]);
        expect(walked.entries).toEqual([
          { path: file, kind: 'file' },
          { path: join(dir, 'sub'), kind: 'directory' },
          { path: copy, kind: 'file' },
          { path: nested, kind: 'directory' },
        ]);
        const truncated = await first(
          client.fs.walk(dir, {
            maxDepth: 10,
            maxDirectories: 100,
            maxEntries: 1,
            followDirectorySymlinks: false,
          }),
        );
        expect(truncated.truncated).toBe(true);
        expect(truncated.entries).toHaveLength(1);

        await first(client.fs.remove(file, { recursive: false, force: false }));
        await expect(first(client.fs.getMetadata(file))).rejects.toBeInstanceOf(NotFoundError);
        await first(client.fs.remove(dir));
        await expect(first(client.fs.readDirectory(dir))).rejects.toBeInstanceOf(NotFoundError);
        await first(client.fs.remove(treeCopy));
      });

      it('streams a file in and out (fs/open, readBlock, writeBlock, close)', async () => {
        const client = await session();
        const file = join(workDir, 'streamed.bin');
        const blocks = [0, 1, 2].map((index) => Buffer.alloc(700_000 + index, 65 + index));
        await first(
          client.fs.writeFileStream(
            file,
            new Observable<Uint8Array>((subscriber) => {
              for (const block of blocks) subscriber.next(block);
              subscriber.complete();
            }),
          ),
        );
        const read = await all(client.fs.readFileStream(file));
        expect(read.length).toBeGreaterThan(1);
        expect(sha256(read)).toBe(sha256(blocks));
      });

      it('fails with NotFoundError for a missing path, on every method that takes one', async () => {
        const client = await session();
        const missing = join(workDir, 'no such dir', 'no-such-file');
        const calls: [string, () => Observable<unknown>][] = [
          ['readFile', () => client.fs.readFile(missing)],
          ['writeFile (missing parent)', () => client.fs.writeFile(missing, 'x')],
          ['getMetadata', () => client.fs.getMetadata(missing)],
          ['canonicalize', () => client.fs.canonicalize(missing)],
          ['readDirectory', () => client.fs.readDirectory(missing)],
          ['remove (force: false)', () => client.fs.remove(missing, { force: false })],
          ['copy (missing source)', () => client.fs.copy(missing, join(workDir, 'copy-target'))],
          ['readFileStream', () => client.fs.readFileStream(missing)],
        ];
        for (const [label, call] of calls) {
          const error = await first(call()).then(
            () => new Error(`${label} succeeded`),
            (caught: unknown) => caught,
          );
          expect([label, error]).toEqual([label, expect.any(NotFoundError)]);
          expect([label, (error as NotFoundError).path]).toEqual([label, missing]);
          expect([label, (error as NotFoundError).code]).toEqual([label, -32004]);
        }
        // force (the default) makes removing a missing path a no-op.
        await first(client.fs.remove(missing));
      });
    });

    describe('http', () => {
      it('streams a response body delta by delta as the server sends it', async () => {
        const client = await session();
        const response = await first(
          client.http.request({ method: 'GET', url: `${http!.base}/stream` }),
        );
        expect(response.status).toBe(200);
        expect(response.headers).toContainEqual({ name: 'x-conformance', value: 'stream' });
        const deltas: string[] = [];
        const body = new Promise<string>((resolve, reject) => {
          response.body$.pipe(timeout(WAIT_MS)).subscribe({
            next: (chunk) => {
              deltas.push(Buffer.from(chunk).toString());
              // The server holds the rest until the first chunk has reached the client.
              if (deltas.join('') === 'first-') http!.release();
            },
            complete: () => resolve(deltas.join('')),
            error: reject,
          });
        });
        expect(await body).toBe('first-second-third-last');
        expect(deltas[0]).toBe('first-');
        expect(deltas.filter((delta) => delta.length > 0).length).toBeGreaterThanOrEqual(3);
      });

      it('sends method, headers and body, and returns status and headers', async () => {
        const client = await session();
        const response = await first(
          client.http.request({
            method: 'PUT',
            url: `${http!.base}/echo`,
            headers: [{ name: 'x-probe', value: 'probe-value' }],
            body: 'request body',
          }),
        );
        expect(response.status).toBe(201);
        expect(response.headers).toContainEqual({ name: 'x-method', value: 'PUT' });
        expect(text(await all(response.body$))).toBe('probe-value|request body');
      });
    });
  });
}
