/**
 * ExecServerClient against the real `codex exec-server` 0.169.0 over a real WebSocket on
 * 127.0.0.1: handshake, metadata, processes, stdin, filesystem, HTTP and session resume.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  filter,
  firstValueFrom,
  from,
  lastValueFrom,
  scan,
  timeout,
  toArray,
  type Observable,
} from 'rxjs';
import { ExecServerClient, type ExecServerClientOptions } from '../../src/client/index.js';
import { NotFoundError, ServerError } from '../../src/protocol/errors.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import type { Transport } from '../../src/transport/transport.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** Bounded await: every wait in this file fails after 10 s instead of hanging. */
const within = <T>(source: Observable<T>): Promise<T> =>
  firstValueFrom(source.pipe(timeout(10_000)));
const all = <T>(source: Observable<T>): Promise<T[]> =>
  lastValueFrom(source.pipe(toArray(), timeout(10_000)));
const text = (chunks: Uint8Array[]): string => Buffer.concat(chunks).toString('utf8');

let server: RunningExecServer;
let workDir: string;
const clients: ExecServerClient[] = [];

async function open(
  options: Partial<ExecServerClientOptions> = {},
): Promise<{ client: ExecServerClient; transport: Transport }> {
  const transport = await within(connectWebSocket(server.url));
  const client = await within(
    ExecServerClient.connect(transport, { clientName: 'execrx-spec', ...options }),
  );
  clients.push(client);
  return { client, transport };
}

beforeAll(async () => {
  server = await startCodexExecServer();
  workDir = realpathSync(await mkdtemp(join(tmpdir(), 'execrx-client-')));
});

afterAll(async () => {
  for (const client of clients) client.close();
  await server?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('ExecServerClient on codex exec-server 0.169.0', () => {
  it('initializes, reports environment info from initialize, and answers status', async () => {
    const { client } = await open();
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const info = await within(client.environmentInfo());
    expect(info.executorVersion).toBe('0.169.0');
    expect(info.shell.path.length).toBeGreaterThan(0);
    expect(info.capabilities.fileWriteStreaming).toBe(true);
    expect(await within(client.environmentStatus())).toBe('ready');
  });

  it('runs a process: stdout, stderr, exit code, ordered events ending with closed', async () => {
    const { client } = await open();
    const handle = await within(
      client.startProcess({
        argv: ['sh', '-c', 'printf out; sleep 0.05; printf err >&2; exit 3'],
        cwd: workDir,
        env: PATH_ENV,
      }),
    );
    expect(handle.sandboxType).toBe('none');
    const [events, stdout, stderr, exitCode] = await Promise.all([
      all(handle.events$),
      all(handle.stdout$),
      all(handle.stderr$),
      within(handle.exit$),
    ]);
    expect(text(stdout)).toBe('out');
    expect(text(stderr)).toBe('err');
    expect(exitCode).toBe(3);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.type).toBe('closed');
  });

  it('writes to stdin and terminates with exit code 137', async () => {
    const { client } = await open();
    const handle = await within(
      client.startProcess({ argv: ['cat'], cwd: workDir, env: PATH_ENV, pipeStdin: true }),
    );
    const echoed = within(
      handle.stdout$.pipe(
        scan((acc, chunk) => acc + Buffer.from(chunk).toString('utf8'), ''),
        filter((all) => all === 'one\ntwo\n'),
      ),
    );
    await within(handle.write('one\n'));
    await within(handle.write('two\n'));
    expect(await echoed).toBe('one\ntwo\n');
    expect(await within(handle.terminate())).toBe(true);
    expect(await within(handle.exit$)).toBe(137);
  });

  it('round-trips files and directories with native paths', async () => {
    const { client } = await open();
    const dir = join(workDir, 'a dir');
    const file = join(dir, 'hello.txt');
    await within(client.fs.createDirectory(dir));
    await within(client.fs.writeFile(file, 'hello world'));
    expect(Buffer.from(await within(client.fs.readFile(file))).toString()).toBe('hello world');
    const metadata = await within(client.fs.getMetadata(file));
    expect(metadata).toMatchObject({
      isFile: true,
      isDirectory: false,
      isSymlink: false,
      size: 11,
    });
    await within(client.fs.copy(file, join(dir, 'copy.txt')));
    const entries = await within(client.fs.readDirectory(dir));
    expect(entries.map((e) => e.fileName).sort()).toEqual(['copy.txt', 'hello.txt']);
    expect(await within(client.fs.canonicalize(join(dir, '.', 'copy.txt')))).toBe(
      join(dir, 'copy.txt'),
    );
    expect(text(await all(client.fs.readFileStream(file)))).toBe('hello world');
    const streamed = join(dir, 'streamed.bin');
    const parts = [Buffer.from('part one, '), Buffer.alloc(0), Buffer.from('part two')];
    await within(
      client.fs.writeFileStream(streamed, from(parts.map((part) => new Uint8Array(part)))),
    );
    expect(Buffer.from(await within(client.fs.readFile(streamed))).toString()).toBe(
      'part one, part two',
    );
    await within(client.fs.remove(dir));
    await expect(within(client.fs.getMetadata(dir))).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reports a missing path as NotFoundError naming the path', async () => {
    const { client } = await open();
    const missing = join(workDir, 'does-not-exist.txt');
    const error = await within(client.fs.readFile(missing)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).path).toBe(missing);
    expect((error as Error).message).toContain(missing);
    expect((error as NotFoundError).serverMessage).toContain('No such file or directory');
  });

  it('performs a streamed HTTP request from the executor host', async () => {
    const http: Server = createServer((request, response) => {
      response.setHeader('x-seen-method', request.method ?? '');
      response.end('hello from http');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = http.address() as AddressInfo;
      const { client } = await open();
      const response = await within(
        client.http.request({ method: 'GET', url: `http://127.0.0.1:${port}/x` }),
      );
      expect(response.status).toBe(200);
      expect(response.headers).toContainEqual({ name: 'x-seen-method', value: 'GET' });
      expect(text(await all(response.body$))).toBe('hello from http');
    } finally {
      await new Promise<void>((resolve) => http.close(() => resolve()));
    }
  });

  it('refuses to resume a session that is still attached (-32010)', async () => {
    const { client } = await open();
    const transport = await within(connectWebSocket(server.url));
    const error = await within(
      ExecServerClient.connect(transport, {
        clientName: 'execrx-spec',
        resumeSessionId: client.sessionId,
      }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe(-32010);
  });

  it('resumes on a new socket, catches up output missed while disconnected, and replays a pending write', async () => {
    const { client, transport } = await open({ recovery: true });
    const marker = join(workDir, 'missed.marker');
    // Prints 200 ms after our first line arrives (so after we drop the socket), then echoes.
    const script = `read first; sleep 0.2; echo "missed-$first"; touch '${marker}'; exec cat`;
    const handle = await within(
      client.startProcess({
        argv: ['sh', '-c', script],
        cwd: workDir,
        env: PATH_ENV,
        pipeStdin: true,
      }),
    );
    const seqs: number[] = [];
    const output: string[] = [];
    handle.events$.subscribe((event) => {
      seqs.push(event.seq);
      if (event.type === 'output') output.push(Buffer.from(event.chunk).toString());
    });
    await within(handle.write('one\n'));
    transport.close();
    expect(client.state).toBe('recovering');
    const pendingWrite = within(handle.write('during\n'));

    // Watch for the marker through a second session while the first one is down.
    const { client: observer } = await open();
    for (let attempt = 0; attempt < 100; attempt++) {
      const found = await within(observer.fs.getMetadata(marker)).then(
        () => true,
        () => false,
      );
      if (found) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(output.join('')).toBe('');

    const sessionId = client.sessionId;
    await within(client.resume(await within(connectWebSocket(server.url))));
    expect(client.state).toBe('connected');
    expect(client.sessionId).toBe(sessionId);
    expect(output.join('')).toBe('missed-one\n');
    await pendingWrite;
    await within(
      handle.stdout$.pipe(
        scan((acc, chunk) => acc + Buffer.from(chunk).toString('utf8'), ''),
        filter((all) => all.endsWith('during\n')),
      ),
    );
    await within(handle.terminate());
    await within(handle.events$.pipe(filter((e) => e.type === 'closed')));
    expect(output.join('')).toBe('missed-one\nduring\n');
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});
