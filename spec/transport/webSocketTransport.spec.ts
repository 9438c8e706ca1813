import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  asyncScheduler,
  firstValueFrom,
  lastValueFrom,
  Subscription,
  toArray,
  type SchedulerLike,
} from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import WebSocket, { WebSocketServer } from 'ws';
import {
  ConnectError,
  DisconnectedError,
  ProtocolError,
  ServerError,
  TimeoutError,
} from '../../src/protocol/errors.js';
import { RpcConnection } from '../../src/rpc/rpcConnection.js';
import { connectWebSocket, fromWebSocket } from '../../src/transport/webSocketTransport.js';
import type { Transport } from '../../src/transport/transport.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface TestServer {
  url: string;
  wss: WebSocketServer;
  /** Resolves with the next accepted socket (and the upgrade request). */
  nextSocket(): Promise<{ socket: WebSocket; request: IncomingMessage }>;
}

async function startServer(options: { maxPayload?: number } = {}): Promise<TestServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, ...options });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const queue: Array<{ socket: WebSocket; request: IncomingMessage }> = [];
  const waiters: Array<(entry: { socket: WebSocket; request: IncomingMessage }) => void> = [];
  wss.on('connection', (socket, request) => {
    const waiter = waiters.shift();
    if (waiter) waiter({ socket, request });
    else queue.push({ socket, request });
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  );
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    wss,
    nextSocket: () => {
      const queued = queue.shift();
      return queued ? Promise.resolve(queued) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/** An HTTP server that accepts upgrade requests and never answers them. */
async function startStalledServer(): Promise<{
  url: string;
  upgrades: Socket[];
  nextUpgrade(): Promise<Socket>;
}> {
  const server: Server = createServer();
  const upgrades: Socket[] = [];
  const waiters: Array<(socket: Socket) => void> = [];
  server.on('upgrade', (_request, socket: Socket) => {
    upgrades.push(socket);
    socket.resume(); // read on, so the client's hang-up surfaces as 'end'
    waiters.shift()?.(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of upgrades) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    upgrades,
    nextUpgrade: () => new Promise((resolve) => waiters.push(resolve)),
  };
}

async function connect(
  url: string,
  options?: Parameters<typeof connectWebSocket>[1],
): Promise<Transport> {
  const transport = await firstValueFrom(connectWebSocket(url, options));
  cleanups.push(() => transport.close());
  return transport;
}

function waitFor<T>(
  emitter: { once(event: string, listener: (...args: never[]) => void): unknown },
  event: string,
): Promise<T[]> {
  return new Promise((resolve) => emitter.once(event, (...args: never[]) => resolve(args as T[])));
}

describe('connectWebSocket', () => {
  it('emits one open Transport and completes; sends text frames, accepts text and binary frames', async () => {
    const server = await startServer();
    const emissions = lastValueFrom(connectWebSocket(server.url).pipe(toArray()));
    const [{ socket: peer, request }, transports] = await Promise.all([
      server.nextSocket(),
      emissions,
    ]);
    expect(transports).toHaveLength(1);
    expect(request.headers.origin).toBeUndefined();
    const transport = transports[0]!;
    cleanups.push(() => transport.close());

    const received: string[] = [];
    transport.incoming$.subscribe((text) => received.push(text));
    const inbound = waitFor<[Buffer, boolean]>(peer, 'message');
    transport.send('{"id":1,"method":"initialize","params":{}}');
    const [data, isBinary] = (await inbound) as unknown as [Buffer, boolean];
    expect(isBinary).toBe(false);
    expect(data.toString('utf8')).toBe('{"id":1,"method":"initialize","params":{}}');

    peer.send('{"id":1,"result":{"text":"é"}}');
    peer.send(Buffer.from('{"id":2,"result":{"binary":"ü"}}', 'utf8'), { binary: true });
    await until(() => received.length === 2);
    expect(received).toEqual([
      '{"id":1,"result":{"text":"é"}}',
      '{"id":2,"result":{"binary":"ü"}}',
    ]);
  });

  it('sends the configured headers on the upgrade request', async () => {
    const server = await startServer();
    await connect(server.url, { headers: { authorization: 'Bearer token-1' } });
    const { request } = await server.nextSocket();
    expect(request.headers.authorization).toBe('Bearer token-1');
  });

  it('sends a bearer token, and names a refusal by the text the server answered', async () => {
    const server = createServer();
    server.on('upgrade', (request, socket: Socket) => {
      const body =
        request.headers.authorization === 'Bearer right' ? 'odd' : 'invalid websocket bearer token';
      socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const wrong = await firstValueFrom(connectWebSocket(url, { bearerToken: 'wrong' })).catch(
      (e: unknown) => e,
    );
    expect(wrong).toBeInstanceOf(ConnectError);
    expect((wrong as Error).message).toBe(
      `failed to connect to exec-server websocket \`${url}\`: HTTP 401: invalid websocket bearer token`,
    );
    const right = await firstValueFrom(connectWebSocket(url, { bearerToken: 'right' })).catch(
      (e: unknown) => e,
    );
    expect((right as Error).message).toMatch(/HTTP 401: odd$/);
  });

  it('fails with ConnectError when the connection is refused', async () => {
    const probe = await startServer();
    const url = probe.url;
    await cleanups.pop()!(); // stop it so the port refuses connections
    const error = await firstValueFrom(connectWebSocket(url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as Error).message).toMatch(
      new RegExp(`^failed to connect to exec-server websocket \`${url}\`: .*ECONNREFUSED`),
    );
  });

  it('fails with ConnectError on an HTTP rejection and on a malformed URL', async () => {
    const server = createServer((_req, res) => res.writeHead(401).end());
    server.on('upgrade', (_req, socket: Socket) =>
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const rejected = await firstValueFrom(connectWebSocket(url)).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(ConnectError);
    expect((rejected as Error).message).toBe(
      `failed to connect to exec-server websocket \`${url}\`: HTTP 401`,
    );
    const malformed = await firstValueFrom(connectWebSocket('not a url')).catch((e: unknown) => e);
    expect(malformed).toBeInstanceOf(ConnectError);
    expect((malformed as Error).message).toMatch(
      /^failed to connect to exec-server websocket `not a url`: /,
    );
  });

  it('clears its deadline once open, after handing the Transport on (also to a subscriber that stays)', async () => {
    const server = await startServer();
    const deadlines: Subscription[] = [];
    const scheduler: SchedulerLike = {
      now: () => asyncScheduler.now(),
      schedule: ((work: () => void, delay?: number) => {
        const deadline = asyncScheduler.schedule(work, delay);
        deadlines.push(deadline);
        return deadline;
      }) as SchedulerLike['schedule'],
    };
    let pendingDuringNext: boolean | undefined;
    const transport = await new Promise<Transport>((resolve, reject) => {
      connectWebSocket(server.url, { scheduler }).subscribe({
        next: (opened) => {
          pendingDuringNext = deadlines.some((deadline) => !deadline.closed);
          resolve(opened);
        },
        error: reject,
      });
    });
    cleanups.push(() => transport.close());
    expect(deadlines).toHaveLength(1);
    // Still armed while the Transport is being handed on; gone once the Observable completed.
    expect(pendingDuringNext).toBe(true);
    expect(deadlines[0]!.closed).toBe(true);
  });

  it('times out with TimeoutError when the upgrade never completes (virtual time)', async () => {
    const stalled = await startStalledServer();
    const scheduler = (): TestScheduler =>
      new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler().run(({ expectObservable }) => {
      expectObservable(connectWebSocket(stalled.url, { connectTimeoutMs: 250 })).toBe(
        '250ms #',
        undefined,
        new TimeoutError(
          `timed out connecting to exec-server websocket \`${stalled.url}\` after 250ms`,
        ),
      );
    });
    // The default deadline is 10 s and prints as such.
    scheduler().run(({ expectObservable }) => {
      expectObservable(connectWebSocket(stalled.url)).toBe(
        '10s #',
        undefined,
        new TimeoutError(
          `timed out connecting to exec-server websocket \`${stalled.url}\` after 10s`,
        ),
      );
    });
  });

  it('aborts a connecting socket on unsubscribe without errors or a leaked connection', async () => {
    const stalled = await startStalledServer();
    const unexpected: unknown[] = [];
    const onUncaught = (error: unknown): void => void unexpected.push(error);
    process.on('uncaughtException', onUncaught);
    cleanups.push(() => void process.off('uncaughtException', onUncaught));

    const upgrade = stalled.nextUpgrade();
    const outcome: unknown[] = [];
    const subscription: Subscription = connectWebSocket(stalled.url).subscribe({
      next: (t) => outcome.push(t),
      error: (e: unknown) => outcome.push(e),
    });
    const serverSide = await upgrade;
    const serverClosed = waitFor(serverSide, 'end');
    subscription.unsubscribe();
    await serverClosed; // the client really dropped the TCP connection
    await new Promise((resolve) => setTimeout(resolve, 20)); // let ws emit its abort 'error'
    expect(outcome).toEqual([]);
    expect(unexpected).toEqual([]);
  });
});

describe('WebSocket Transport', () => {
  it('completes incoming$ on a clean close from the peer', async () => {
    const server = await startServer();
    const transport = await connect(server.url);
    const done = lastValueFrom(transport.incoming$.pipe(toArray()));
    const { socket: peer } = await server.nextSocket();
    peer.send('{"method":"a"}');
    peer.close(1000);
    await expect(done).resolves.toEqual(['{"method":"a"}']);
  });

  it('errors incoming$ with DisconnectedError when the connection is lost', async () => {
    const server = await startServer();
    const transport = await connect(server.url);
    const done = lastValueFrom(transport.incoming$);
    const { socket: peer } = await server.nextSocket();
    peer.terminate();
    const error = await done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DisconnectedError);
    expect((error as Error).message).toMatch(/^exec-server transport disconnected: /);
  });

  it('drops the connection with DisconnectedError on an oversize message', async () => {
    const server = await startServer();
    const transport = await connect(server.url, { maxPayloadBytes: 1024 });
    const done = lastValueFrom(transport.incoming$.pipe(toArray()));
    const { socket: peer } = await server.nextSocket();
    peer.send('{"method":"small"}');
    peer.send(`{"method":"big","params":"${'x'.repeat(2048)}"}`);
    const error = await done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DisconnectedError);
    expect((error as Error).message).toBe(
      'exec-server transport disconnected: Max payload size exceeded',
    );
  });

  it('incomingUtf8$ hands a text frame over as its UTF-8 bytes, a binary frame as its text', async () => {
    const server = await startServer();
    const transport = await connect(server.url);
    const received: (string | Uint8Array)[] = [];
    transport.incomingUtf8$!.subscribe((message) => received.push(message));
    const { socket: peer } = await server.nextSocket();
    peer.send('{"id":1,"result":{"text":"é"}}');
    peer.send(Buffer.from('{"id":2,"result":{"binary":"ü"}}', 'utf8'), { binary: true });
    await until(() => received.length === 2);
    expect(received[0]).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(received[0] as Uint8Array).toString('utf8')).toBe(
      '{"id":1,"result":{"text":"é"}}',
    );
    expect(received[1]).toBe('{"id":2,"result":{"binary":"ü"}}');
  });

  it('rejects a binary message that is not UTF-8 with a ProtocolError', async () => {
    const server = await startServer();
    const transport = await connect(server.url);
    const done = lastValueFrom(transport.incoming$);
    const { socket: peer } = await server.nextSocket();
    peer.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: true });
    const error = await done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    const [code] = (await waitFor<number>(peer, 'close')) as number[];
    expect(code).toBe(1007);
  });

  it('close() is idempotent, completes incoming$, closes cleanly and ignores later sends', async () => {
    const server = await startServer();
    const transport = await connect(server.url);
    const done = lastValueFrom(transport.incoming$.pipe(toArray()));
    const { socket: peer } = await server.nextSocket();
    const peerClosed = waitFor<number>(peer, 'close');
    const peerMessages: string[] = [];
    peer.on('message', (data: Buffer) => peerMessages.push(data.toString()));
    transport.close();
    transport.close();
    transport.send('{"method":"late"}');
    await expect(done).resolves.toEqual([]);
    const [code] = (await peerClosed) as number[];
    expect(code).toBe(1000);
    expect(peerMessages).toEqual([]);
  });

  it('close() works on a socket that is still connecting and on one already closed', async () => {
    const stalled = await startStalledServer();
    const upgrade = stalled.nextUpgrade();
    const raw = new WebSocket(stalled.url);
    const transport = fromWebSocket(raw);
    const done = lastValueFrom(transport.incoming$.pipe(toArray()));
    const serverSide = await upgrade;
    const serverClosed = waitFor(serverSide, 'end');
    transport.close();
    await expect(done).resolves.toEqual([]);
    await serverClosed;
    await waitUntilClosed(raw);
    transport.close();

    const closedTransport = fromWebSocket(raw);
    await expect(
      lastValueFrom(closedTransport.incoming$.pipe(toArray())).catch((e: unknown) => e),
    ).resolves.toBeInstanceOf(DisconnectedError);
    closedTransport.close();
  });

  it('wraps an accepted server-side socket and can send keepalive pings', async () => {
    const server = await startServer();
    const raw = new WebSocket(server.url);
    cleanups.push(() => raw.terminate());
    const [{ socket }] = await Promise.all([server.nextSocket(), waitFor(raw, 'open')]);
    const accepted = fromWebSocket(socket, { keepaliveIntervalMs: 10 });
    cleanups.push(() => accepted.close());
    const received: string[] = [];
    accepted.incoming$.subscribe((text) => received.push(text));
    await waitFor(raw, 'ping');
    raw.send('{"method":"hello"}');
    await until(() => received.length === 1);
    expect(received).toEqual(['{"method":"hello"}']);
  });
});

describe('RpcConnection over a real WebSocket', () => {
  it('matches out-of-order responses and delivers notifications before the disconnect', async () => {
    const server = await startServer();
    const rpc = new RpcConnection(await connect(server.url));
    cleanups.push(() => rpc.close());
    const { socket: peer } = await server.nextSocket();
    const requests: Array<{ id: number; method: string }> = [];
    peer.on('message', (data: Buffer) => {
      requests.push(JSON.parse(data.toString()) as { id: number; method: string });
      if (requests.length === 2) {
        // Answer the second first, then a notification, then drop the connection.
        peer.send(JSON.stringify({ id: requests[1]!.id, result: { which: requests[1]!.method } }));
        peer.send(JSON.stringify({ id: requests[0]!.id, result: { which: requests[0]!.method } }));
        peer.send(JSON.stringify({ method: 'process/exited', params: { processId: 'p' } }));
        peer.terminate();
      }
    });
    const notifications = lastValueFrom(rpc.notifications$.pipe(toArray()));
    const first = firstValueFrom(rpc.request('fs/readFile', {}));
    const second = firstValueFrom(rpc.request('fs/getMetadata', {}));
    const third = firstValueFrom(rpc.request('never/answered', {}).pipe()).catch((e: unknown) => e);
    await expect(first).resolves.toEqual({ which: 'fs/readFile' });
    await expect(second).resolves.toEqual({ which: 'fs/getMetadata' });
    await expect(notifications).resolves.toEqual([
      { method: 'process/exited', params: { processId: 'p' } },
    ]);
    expect(await third).toBeInstanceOf(DisconnectedError);
    expect(requests.map((r) => r.id)).toEqual([1, 2, 3]);
  });
});

describe('the real codex exec-server over WebSocket', () => {
  it('initializes, answers requests and keeps going after our malformed message (its id -1 reply is dropped)', async () => {
    const codexHome = mkdtempSync(join(tmpdir(), 'execrx-codex-home-'));
    const child = spawn(
      'node_modules/.bin/codex',
      ['exec-server', '--listen', 'ws://127.0.0.1:0'],
      {
        env: { ...process.env, CODEX_HOME: codexHome },
        stdio: ['ignore', 'pipe', 'ignore'],
        detached: true, // own process group: the npm wrapper runs the native binary as its child
      },
    );
    cleanups.push(async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await exited;
      rmSync(codexHome, { recursive: true, force: true });
    });
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const line = output.split('\n').find((l) => l.startsWith('ws://'));
        if (line) resolve(line.trim());
      });
      child.once('exit', () => reject(new Error(`codex exited early: ${output}`)));
    });
    const transport = await connect(url);
    const seen: string[] = [];
    transport.incoming$.subscribe((text) => seen.push(text));
    const rpc = new RpcConnection(transport);
    cleanups.push(() => rpc.close());
    const init = (await firstValueFrom(
      rpc.request('initialize', { clientName: 'execrx-spec', resumeSessionId: null }),
    )) as {
      sessionId: string;
    };
    expect(init.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    rpc.notify('initialized', {});
    transport.send('not json');
    const info = (await firstValueFrom(rpc.request('environment/info', null))) as {
      executorVersion: string;
    };
    expect(info.executorVersion).toBe('0.169.0');
    expect(rpc.isClosed).toBe(false);
    const parseError = seen
      .map((t) => JSON.parse(t) as { id: number; error?: { code: number; message: string } })
      .find((m) => m.id === -1);
    expect(parseError?.error?.code).toBe(-32600);
    expect(parseError?.error?.message).toMatch(
      /^failed to parse websocket JSON-RPC message from exec-server websocket /,
    );
    const unknown = await firstValueFrom(rpc.request('no/suchMethod', {})).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ServerError);
  });
});

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function waitUntilClosed(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return;
  await waitFor(socket, 'close');
}
