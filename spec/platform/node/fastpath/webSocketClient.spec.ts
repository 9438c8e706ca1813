/**
 * fastpath/webSocketClient.ts (our own RFC 6455 client) against its plain twin
 * (bench/plain/platform/node/fastpath/webSocketClient.ts, the `ws` package): every scenario runs
 * against both and asserts the same event trace — against a `ws` server, against a raw TCP
 * server scripting the bytes (spec/support/rawWebSocketServer.ts), and against the real
 * `codex exec-server`. A trace entry is `event@readyState` (`open@1`, `error@2`,
 * `close 1000 "reason"@3`, `unexpected-response 401@0`), a message `text "…"` / `binary 3B`, or
 * `pong`. Error texts may differ; both must name the cause (the regular expressions below).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { openWebSocket as plainOpen } from '../../../../bench/plain/platform/node/fastpath/webSocketClient.js';
import { openWebSocket as fastOpen } from '../../../../src/platform/node/fastpath/webSocketClient.js';
import type {
  PlatformWebSocket,
  RefusedUpgrade,
  WebSocketData,
  WebSocketOpenOptions,
} from '../../../../src/platform/platform.js';
import { startCodexExecServer, type RunningExecServer } from '../../../support/codexExecServer.js';
import { startConnectProxy } from '../../../support/connectProxy.js';
import { selfSignedCertificate } from '../../../support/selfSignedCertificate.js';
import {
  closeFrame,
  frame,
  OPCODE,
  startRawServer,
  type RawConnection,
} from '../../../support/rawWebSocketServer.js';

type Open = (url: string, options?: WebSocketOpenOptions) => PlatformWebSocket;

const IMPLEMENTATIONS: Array<[string, Open]> = [
  ['ws twin', plainOpen],
  ['own client', fastOpen],
];

/** Every wait in this file is bounded by this. */
const WAIT_MS = 5_000;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

let codex: RunningExecServer;
let tls: { cert: Buffer; key: Buffer };
beforeAll(async () => {
  tls = selfSignedCertificate();
  codex = await startCodexExecServer();
}, 30_000);
afterAll(() => codex?.stop());

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function bytesOf(data: WebSocketData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data);
}

interface Recording {
  readonly socket: PlatformWebSocket;
  readonly trace: string[];
  readonly errors: Error[];
  readonly messages: Array<{ bytes: Buffer; isBinary: boolean }>;
  readonly refused: RefusedUpgrade[];
  /** Waits until an entry starting with `prefix` is in the trace. */
  until(prefix: string): Promise<void>;
  /** Waits for `close`, then a moment more (nothing may follow it), and returns the trace. */
  ended(): Promise<string[]>;
}

function record(socket: PlatformWebSocket): Recording {
  const trace: string[] = [];
  const errors: Error[] = [];
  const messages: Array<{ bytes: Buffer; isBinary: boolean }> = [];
  const refused: RefusedUpgrade[] = [];
  const wakers = new Set<() => void>();
  const push = (entry: string): void => {
    trace.push(entry);
    wakers.forEach((wake) => wake());
  };
  socket.on('open', () => push(`open@${socket.readyState}`));
  socket.on('message', (data, isBinary) => {
    const bytes = bytesOf(data);
    messages.push({ bytes, isBinary });
    const shown =
      !isBinary && bytes.length <= 40 ? JSON.stringify(bytes.toString('utf8')) : `${bytes.length}B`;
    push(`${isBinary ? 'binary' : 'text'} ${shown}`);
  });
  socket.on('close', (code, reason) =>
    push(
      `close ${code} ${JSON.stringify(Buffer.from(reason).toString('utf8'))}@${socket.readyState}`,
    ),
  );
  socket.on('error', (error) => {
    errors.push(error);
    push(`error@${socket.readyState}`);
  });
  socket.on('pong', () => push('pong'));
  socket.on('unexpected-response', (_request, response) => {
    refused.push(response);
    push(`unexpected-response ${response.statusCode}@${socket.readyState}`);
  });
  cleanups.push(() => socket.terminate());
  const until = (prefix: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!trace.some((entry) => entry.startsWith(prefix))) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no \`${prefix}\` within ${WAIT_MS} ms; trace: ${trace.join(', ')}`));
      }, WAIT_MS);
      const finish = (): void => {
        clearTimeout(timer);
        wakers.delete(check);
      };
      wakers.add(check);
      check();
    });
  return {
    socket,
    trace,
    errors,
    messages,
    refused,
    until,
    ended: async () => {
      await until('close');
      await delay(50);
      return trace;
    },
  };
}

interface WsServer {
  url: string;
  nextSocket(): Promise<{ socket: WebSocket; request: IncomingMessage }>;
}

const echo = (socket: WebSocket): void =>
  void socket.on('message', (data, isBinary) =>
    socket.send(bytesOf(data as WebSocketData), { binary: isBinary }),
  );

/** A `ws` server on 127.0.0.1:0 (`wss://` with the self-signed certificate when `secure`). */
async function startWsServer(
  onConnection: (socket: WebSocket) => void = echo,
  secure = false,
): Promise<WsServer> {
  const https = secure ? createHttpsServer(tls) : undefined;
  const wss = new WebSocketServer(https ? { server: https } : { host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) =>
    https ? https.listen(0, '127.0.0.1', resolve) : wss.once('listening', () => resolve()),
  );
  const accepted: Array<{ socket: WebSocket; request: IncomingMessage }> = [];
  wss.on('connection', (socket, request) => {
    accepted.push({ socket, request });
    onConnection(socket);
  });
  cleanups.push(async () => {
    wss.clients.forEach((client) => client.terminate());
    await new Promise((resolve) => wss.close(resolve));
    if (https) await new Promise((resolve) => https.close(resolve));
  });
  const { port } = (https ?? wss).address() as AddressInfo;
  return {
    url: `${secure ? 'wss' : 'ws'}://127.0.0.1:${port}`,
    nextSocket: async () => {
      for (let waited = 0; accepted.length === 0; waited += 10) {
        if (waited > WAIT_MS) throw new Error('no connection reached the ws server');
        await delay(10);
      }
      return accepted.shift()!;
    },
  };
}

/** Opens `url`, sends one text and resolves with the trace once its echo came back. */
async function echoTrace(
  open: Open,
  url: string,
  options?: WebSocketOpenOptions,
): Promise<string[]> {
  const rec = record(open(url, options));
  await rec.until('open');
  rec.socket.send('over the tunnel');
  await rec.until('text');
  return rec.trace;
}

/** The server side's close code and reason, once its socket closed. */
function serverClose(socket: WebSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server socket did not close')), WAIT_MS);
    socket.once('close', (code, reason) => {
      clearTimeout(timer);
      resolve(`${code} ${JSON.stringify(reason.toString())}`);
    });
  });
}

async function rawServer(script: (connection: RawConnection) => void | Promise<void>) {
  const server = await startRawServer(script);
  cleanups.push(() => server.close());
  return server;
}

/** Writes `bytes` in pieces of `sizes` (the last size repeats), one write per macrotask. */
async function dribble(connection: RawConnection, bytes: Buffer, sizes: number[]): Promise<void> {
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[Math.min(i, sizes.length - 1)]!;
    connection.socket.write(bytes.subarray(offset, offset + size));
    offset += size;
    await delay(1);
  }
}

describe.each(IMPLEMENTATIONS)('%s', (_name, open) => {
  describe('against a ws server', () => {
    it('echoes text and binary messages around the frame length boundaries; one callback per send', async () => {
      const server = await startWsServer();
      const rec = record(open(server.url));
      await rec.until('open');
      const sizes = [0, 1, 125, 126, 127, 65_535, 65_536, 1 << 20];
      const sent: Array<{ bytes: Buffer; isBinary: boolean }> = [];
      for (const size of sizes) sent.push({ bytes: Buffer.alloc(size, 'a'), isBinary: false });
      const utf8 = 'é€😀'.repeat(20_000);
      sent.push({ bytes: Buffer.from(utf8), isBinary: false });
      for (const size of sizes) sent.push({ bytes: randomBytes(size), isBinary: true });
      const callbacks: unknown[] = [];
      for (const [i, { bytes, isBinary }] of sent.entries()) {
        const data = isBinary
          ? new Uint8Array(bytes)
          : i === sizes.length
            ? utf8
            : bytes.toString();
        rec.socket.send(data, isBinary ? { binary: true } : {}, (error) =>
          callbacks.push(error ?? null),
        );
      }
      for (let waited = 0; rec.messages.length < sent.length && waited < WAIT_MS; waited += 10)
        await delay(10);
      // Compared as short strings: jest walks a Buffer byte by byte, which takes seconds at 1 MiB.
      const summary = (m: { bytes: Buffer; isBinary: boolean }) =>
        `${m.isBinary ? 'binary' : 'text'} ${m.bytes.length}B ${createHash('sha256').update(m.bytes).digest('hex')}`;
      expect(rec.messages.map(summary)).toEqual(sent.map(summary));
      expect(callbacks).toEqual(sent.map(() => null));
      expect(rec.socket.readyState).toBe(1);
    });

    it('sends and receives a fragmented text (fin: false … true) as one message, a UTF-8 character split between fragments', async () => {
      const received: Array<[string, boolean]> = [];
      const server = await startWsServer((peer) =>
        peer.on('message', (data, isBinary) => received.push([data.toString(), isBinary])),
      );
      const rec = record(open(server.url));
      const { socket: peer } = await server.nextSocket();
      await rec.until('open');
      const euro = Buffer.from('a€b'); // € is three bytes
      const callbacks: unknown[] = [];
      const done = (error?: Error) => callbacks.push(error ?? null);
      rec.socket.send('one ', { fin: false }, done);
      rec.socket.send('two ', { fin: false }, done);
      rec.socket.send('three', { fin: true }, done);
      rec.socket.send(euro.subarray(0, 2), { binary: false, fin: false }, done);
      rec.socket.send(euro.subarray(2), { binary: false, fin: true }, done);
      peer.send(euro.subarray(0, 3), { binary: false, fin: false });
      peer.send(euro.subarray(3), { binary: false, fin: true });
      await rec.until('text');
      for (let waited = 0; received.length < 2 && waited < WAIT_MS; waited += 10) await delay(10);
      expect(received).toEqual([
        ['one two three', false],
        ['a€b', false],
      ]);
      expect(callbacks).toEqual([null, null, null, null, null]);
      expect(rec.trace).toEqual(['open@1', 'text "a€b"']);
    });

    it("answers the server's Ping with a Pong; ping() gets a pong", async () => {
      const server = await startWsServer();
      const rec = record(open(server.url));
      const { socket: peer } = await server.nextSocket();
      await rec.until('open');
      const pong = new Promise<string>((resolve) =>
        peer.once('pong', (data) => resolve(data.toString())),
      );
      peer.ping('are you there');
      expect(await pong).toBe('are you there');
      rec.socket.ping();
      await rec.until('pong');
      expect(rec.trace).toEqual(['open@1', 'pong']);
    });

    it.each([
      [1000, ''],
      [1001, 'going away'],
      [4000, 'bye'],
    ])('reports the server closing with %i %j', async (code, reason) => {
      const server = await startWsServer();
      const rec = record(open(server.url));
      const { socket: peer } = await server.nextSocket();
      await rec.until('open');
      const seen = serverClose(peer);
      peer.close(code, reason);
      expect(await rec.ended()).toEqual(['open@1', `close ${code} ${JSON.stringify(reason)}@3`]);
      expect(await seen).toBe(`${code} ${JSON.stringify(reason)}`);
    });

    it('close(1000, reason): the server sees it; the client gets close once the server answers', async () => {
      const server = await startWsServer();
      const rec = record(open(server.url));
      const { socket: peer } = await server.nextSocket();
      await rec.until('open');
      const seen = serverClose(peer);
      rec.socket.close(1000, 'done');
      expect(rec.socket.readyState).toBe(2);
      expect(await rec.ended()).toEqual(['open@1', 'close 1000 "done"@3']);
      expect(await seen).toBe('1000 "done"');
    });

    it('terminate() while OPEN drops the connection: close 1006, no error', async () => {
      const server = await startWsServer();
      const rec = record(open(server.url));
      const { socket: peer } = await server.nextSocket();
      await rec.until('open');
      const seen = serverClose(peer);
      rec.socket.terminate();
      expect(await rec.ended()).toEqual(['open@1', 'close 1006 ""@3']);
      expect(await seen).toBe('1006 ""');
    });

    it.each(['terminate', 'close'] as const)(
      '%s() while CONNECTING: error, then close 1006',
      async (method) => {
        const server = await startWsServer();
        const rec = record(open(server.url));
        expect(rec.socket.readyState).toBe(0);
        rec.socket[method]();
        expect(await rec.ended()).toEqual(['error@2', 'close 1006 ""@3']);
        expect(rec.errors[0]!.message).toMatch(/before the connection was established/);
      },
    );

    it('send() while CONNECTING throws; after CLOSED it calls back with an error', async () => {
      const server = await startWsServer();
      const rec = record(open(server.url));
      expect(() => rec.socket.send('early')).toThrow(/not open|CONNECTING/);
      await rec.until('open');
      rec.socket.terminate();
      await rec.ended();
      const error = await new Promise<Error | undefined>((resolve) =>
        rec.socket.send('late', {}, resolve),
      );
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toMatch(/not open|CLOSED/);
      expect(rec.trace).toEqual(['open@1', 'close 1006 ""@3']);
    });

    it('sends extra upgrade headers', async () => {
      const server = await startWsServer();
      const rec = record(
        open(server.url, { headers: { authorization: 'Bearer t0ken', 'x-execrx': 'yes' } }),
      );
      const { request } = await server.nextSocket();
      await rec.until('open');
      expect(request.headers.authorization).toBe('Bearer t0ken');
      expect(request.headers['x-execrx']).toBe('yes');
    });

    it('pause(): no message while paused; after resume() all of them, in order', async () => {
      const server = await startWsServer((peer) =>
        peer.on('message', () => {
          for (let i = 0; i < 5; i++) peer.send(`m${i}`);
        }),
      );
      const rec = record(open(server.url));
      rec.socket.on('open', () => {
        rec.socket.pause();
        rec.socket.send('go');
      });
      await rec.until('open');
      await delay(300);
      expect(rec.trace).toEqual(['open@1']);
      rec.socket.resume();
      await rec.until('text "m4"');
      expect(rec.trace).toEqual([
        'open@1',
        'text "m0"',
        'text "m1"',
        'text "m2"',
        'text "m3"',
        'text "m4"',
      ]);
    });

    // After failing the connection a client stops reading, so it never sees the server's answering
    // Close: its own `close` is 1006 (RFC 6455 §7.1.7), while the server received the 1009.
    it('maxPayload: a message at the limit passes; one byte more fails it (1009 to the server, close 1006)', async () => {
      const server = await startWsServer();
      const rec = record(open(server.url, { maxPayload: 1000 }));
      const { socket: peer } = await server.nextSocket();
      await rec.until('open');
      const seen = serverClose(peer);
      peer.send(Buffer.alloc(1000));
      peer.send(Buffer.alloc(1001));
      expect(await rec.ended()).toEqual(['open@1', 'binary 1000B', 'error@2', 'close 1006 ""@3']);
      expect(rec.errors[0]!.message).toMatch(/payload/i);
      expect(await seen).toBe('1009 ""');
    });

    it.each(['not a url', 'ftp://127.0.0.1/', 'ws://127.0.0.1:1/#fragment'])(
      'throws at once for %j',
      (url) => {
        expect(() => open(url)).toThrow();
      },
    );
  });

  describe('against a raw server scripting the bytes', () => {
    it('sends a version 13 upgrade for the path and query, without extensions or subprotocols', async () => {
      const server = await rawServer((c) => void c.socket.write(c.switching()));
      const rec = record(open(`${server.url}/some/path?x=1&y=%20`));
      const connection = await server.nextConnection();
      await rec.until('open');
      expect(connection.requestLine).toBe('GET /some/path?x=1&y=%20 HTTP/1.1');
      expect(connection.headers).toMatchObject({
        host: `127.0.0.1:${server.port}`,
        upgrade: 'websocket',
        'sec-websocket-version': '13',
      });
      expect(connection.headers.connection).toMatch(/^upgrade$/i);
      expect(Buffer.from(connection.headers['sec-websocket-key']!, 'base64')).toHaveLength(16);
      expect(connection.headers['sec-websocket-extensions']).toBeUndefined();
      expect(connection.headers['sec-websocket-protocol']).toBeUndefined();
    });

    it.each([
      [
        'a wrong Sec-WebSocket-Accept',
        (c: RawConnection) => c.switching([], 'd3JvbmcK'),
        /Sec-WebSocket-Accept/i,
      ],
      [
        'a subprotocol not asked for',
        (c: RawConnection) => c.switching(['Sec-WebSocket-Protocol: chat']),
        /subprotocol/i,
      ],
      [
        'an extension not asked for',
        (c: RawConnection) => c.switching(['Sec-WebSocket-Extensions: permessage-deflate']),
        /extension/i,
      ],
      [
        'a 101 without Upgrade: websocket',
        (c: RawConnection) =>
          Buffer.from(c.switching().toString().replace('Upgrade: websocket', 'Upgrade: h2c')),
        /Upgrade/i,
      ],
    ])('refuses %s: error, close 1006, never open', async (_what, answer, message) => {
      const server = await rawServer(
        (c) => void c.socket.write(Buffer.concat([answer(c), frame(OPCODE.text, 'x')])),
      );
      const rec = record(open(server.url));
      expect(await rec.ended()).toEqual(['error@2', 'close 1006 ""@3']);
      expect(rec.errors[0]!.message).toMatch(message);
    });

    it('reports an HTTP 401 as unexpected-response with a readable body; terminate() then ends it', async () => {
      const body = 'invalid bearer token: ask your admin';
      const server = await rawServer(
        (c) =>
          void c.socket.end(
            `HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          ),
      );
      const rec = record(open(server.url));
      await rec.until('unexpected-response');
      const response = rec.refused[0]!;
      const text = await new Promise<string>((resolve, reject) => {
        let read = '';
        const timer = setTimeout(() => reject(new Error('the body never ended')), WAIT_MS);
        response.setEncoding('utf8');
        response.on('data', (chunk) => (read += chunk));
        response.once('end', () => {
          clearTimeout(timer);
          resolve(read);
        });
      });
      expect(text).toBe(body);
      rec.socket.terminate();
      expect(await rec.ended()).toEqual([
        'unexpected-response 401@0',
        'error@2',
        'close 1006 ""@3',
      ]);
    });

    it('reads frames that came in the same TCP chunk as the 101', async () => {
      const server = await rawServer(
        (c) =>
          void c.socket.write(
            Buffer.concat([
              c.switching(),
              frame(OPCODE.text, 'first'),
              frame(OPCODE.binary, Buffer.from([1, 2])),
              closeFrame(1000, 'end'),
            ]),
          ),
      );
      const rec = record(open(server.url));
      expect(await rec.ended()).toEqual([
        'open@1',
        'text "first"',
        'binary 2B',
        'close 1000 "end"@3',
      ]);
    });

    it('reads a response and frames split byte by byte, a Ping between fragments answered with its payload', async () => {
      const long = Buffer.alloc(300, 'L');
      const huge = randomBytes(70_000);
      const server = await rawServer(async (c) => {
        const bytes = Buffer.concat([
          c.switching(),
          frame(OPCODE.text, 'hé', { fin: false }),
          frame(OPCODE.ping, 'p1'),
          frame(OPCODE.continuation, 'llo'),
          frame(OPCODE.text, long),
          frame(OPCODE.binary, huge),
        ]);
        await dribble(c, bytes.subarray(0, bytes.length - huge.length + 20), [1]);
        await dribble(c, bytes.subarray(bytes.length - huge.length + 20), [10_000]);
      });
      const rec = record(open(server.url));
      const connection = await server.nextConnection();
      await rec.until('binary');
      expect(rec.trace).toEqual(['open@1', 'text "héllo"', 'text 300B', 'binary 70000B']);
      expect(rec.messages[2]!.bytes.equals(huge)).toBe(true);
      const pong = await connection.frame(OPCODE.pong);
      expect(pong).toMatchObject({ fin: true, masked: true, payload: Buffer.from('p1') });
    });

    it('a server Close without a code: close 1005, and the echo has no code either', async () => {
      const server = await rawServer(
        (c) => void c.socket.write(Buffer.concat([c.switching(), closeFrame()])),
      );
      const rec = record(open(server.url));
      const connection = await server.nextConnection();
      expect(await rec.ended()).toEqual(['open@1', 'close 1005 ""@3']);
      expect((await connection.frame(OPCODE.close)).payload).toHaveLength(0);
    });

    const violations: Array<[string, number, () => Buffer, RegExp]> = [
      [
        'a masked frame',
        1002,
        () => frame(OPCODE.text, 'hi', { mask: Buffer.from([1, 2, 3, 4]) }),
        /mask/i,
      ],
      ['RSV1 set', 1002, () => frame(OPCODE.text, 'hi', { rsv: 4 }), /RSV1/i],
      ['RSV3 set', 1002, () => frame(OPCODE.binary, 'hi', { rsv: 1 }), /RSV3/i],
      ['opcode 3', 1002, () => frame(3, 'hi'), /opcode/i],
      ['opcode 11', 1002, () => frame(11), /opcode/i],
      [
        'a Ping of 126 bytes',
        1002,
        () => frame(OPCODE.ping, Buffer.alloc(126)),
        /payload length|125/i,
      ],
      ['a fragmented Ping', 1002, () => frame(OPCODE.ping, 'x', { fin: false }), /FIN/i],
      [
        'a continuation with nothing to continue',
        1002,
        () => frame(OPCODE.continuation, 'x'),
        /opcode|continuation/i,
      ],
      [
        'a new text inside a fragmented one',
        1002,
        () => Buffer.concat([frame(OPCODE.text, 'a', { fin: false }), frame(OPCODE.text, 'b')]),
        /opcode|continuation/i,
      ],
      [
        'invalid UTF-8 in a text',
        1007,
        () => frame(OPCODE.text, Buffer.from([0x68, 0xc3, 0x28])),
        /UTF-8/i,
      ],
      [
        'UTF-8 invalid only once the fragments are joined',
        1007,
        () =>
          Buffer.concat([
            frame(OPCODE.text, Buffer.from([0xe2, 0x82]), { fin: false }),
            frame(OPCODE.continuation, 'x'),
          ]),
        /UTF-8/i,
      ],
      ['a Close with code 1005', 1002, () => closeFrame(1005), /code/i],
      ['a Close with code 1006', 1002, () => closeFrame(1006), /code/i],
      ['a Close with code 999', 1002, () => closeFrame(999), /code/i],
      [
        'a Close of one byte',
        1002,
        () => frame(OPCODE.close, Buffer.from([3])),
        /payload length|close/i,
      ],
      [
        'a Close reason that is not UTF-8',
        1007,
        () => frame(OPCODE.close, Buffer.from([3, 232, 0xff])),
        /UTF-8/i,
      ],
    ];
    it.each(violations)(
      'refuses %s: error, close 1006; the server gets %i',
      async (_what, code, bytes, message) => {
        const server = await rawServer(
          (c) => void c.socket.write(Buffer.concat([c.switching(), bytes()])),
        );
        const rec = record(open(server.url));
        const connection = await server.nextConnection();
        expect(await rec.ended()).toEqual(['open@1', 'error@2', 'close 1006 ""@3']);
        expect(rec.errors[0]!.message).toMatch(message);
        expect(connection.closeCode).toBe(code);
      },
    );

    it.each([
      [
        'announces more than maxPayload (the payload never comes)',
        () => frame(OPCODE.binary, '', { length: 10_000_000 }),
      ],
      [
        'is over maxPayload only once its fragments are joined',
        () =>
          Buffer.concat([
            frame(OPCODE.text, Buffer.alloc(600, 'a'), { fin: false }),
            frame(OPCODE.continuation, Buffer.alloc(600, 'b')),
          ]),
      ],
    ])(
      'refuses a message that %s: error, close 1006; the server gets 1009',
      async (_what, bytes) => {
        const server = await rawServer(
          (c) => void c.socket.write(Buffer.concat([c.switching(), bytes()])),
        );
        const rec = record(open(server.url, { maxPayload: 1000 }));
        const connection = await server.nextConnection();
        expect(await rec.ended()).toEqual(['open@1', 'error@2', 'close 1006 ""@3']);
        expect(rec.errors[0]!.message).toMatch(/payload/i);
        expect(connection.closeCode).toBe(1009);
      },
    );

    it('an upgrade the server never answers stays CONNECTING until terminate(): error, close 1006', async () => {
      const server = await rawServer(() => undefined);
      const rec = record(open(server.url));
      const connection = await server.nextConnection();
      await delay(200);
      expect(rec.trace).toEqual([]);
      expect(rec.socket.readyState).toBe(0);
      rec.socket.terminate();
      expect(await rec.ended()).toEqual(['error@2', 'close 1006 ""@3']);
      await connection.ended;
    });

    it('a refused connection: error naming ECONNREFUSED, then close 1006', async () => {
      const server = await rawServer(() => undefined);
      await server.close();
      const rec = record(open(server.url));
      expect(await rec.ended()).toEqual(['error@2', 'close 1006 ""@3']);
      expect(rec.errors[0]!.message).toMatch(/ECONNREFUSED/);
    });

    it('a server dropping TCP after the 101: close 1006, no error', async () => {
      const server = await rawServer(async (c) => {
        c.socket.write(c.switching());
        await delay(50);
        c.socket.destroy();
      });
      const rec = record(open(server.url));
      expect(await rec.ended()).toEqual(['open@1', 'close 1006 ""@3']);
    });
  });

  describe('over TLS and through an HTTP proxy', () => {
    it('wss:// trusts the certificate given as tls.ca; without it: error naming it, close 1006', async () => {
      const server = await startWsServer(echo, true);
      expect(await echoTrace(open, server.url, { tls: { ca: tls.cert } })).toEqual([
        'open@1',
        'text "over the tunnel"',
      ]);
      const rec = record(open(server.url));
      expect(await rec.ended()).toEqual(['error@2', 'close 1006 ""@3']);
      expect(rec.errors[0]!.message).toMatch(/self[- ]signed certificate/);
    });

    it('tunnels ws:// and wss:// through CONNECT, with credentials from the proxy URL', async () => {
      const proxy = await startConnectProxy();
      cleanups.push(() => proxy.close());
      const plain = await startWsServer();
      const secure = await startWsServer(echo, true);
      const proxyUrl = proxy.url.replace('http://', 'http://user:p%40ss@');
      expect(await echoTrace(open, plain.url, { proxy: proxyUrl })).toEqual([
        'open@1',
        'text "over the tunnel"',
      ]);
      expect(
        await echoTrace(open, secure.url, { proxy: proxy.url, tls: { ca: tls.cert } }),
      ).toEqual(['open@1', 'text "over the tunnel"']);
      expect(proxy.connects).toEqual([
        {
          target: plain.url.slice('ws://'.length),
          auth: `Basic ${Buffer.from('user:p@ss').toString('base64')}`,
        },
        { target: secure.url.slice('wss://'.length), auth: undefined },
      ]);
    });

    it('a proxy refusing CONNECT: error naming the status, close 1006', async () => {
      const proxy = await startConnectProxy(407);
      cleanups.push(() => proxy.close());
      const rec = record(open('ws://127.0.0.1:1', { proxy: proxy.url }));
      expect(await rec.ended()).toEqual(['error@2', 'close 1006 ""@3']);
      expect(rec.errors[0]!.message).toMatch(/refused CONNECT 127\.0\.0\.1:1: HTTP 407/);
    });
  });

  it('talks to codex exec-server: initialize returns a session id', async () => {
    const rec = record(open(codex.url));
    await rec.until('open');
    rec.socket.send(
      JSON.stringify({
        id: 1,
        method: 'initialize',
        params: { clientName: 'spec', resumeSessionId: null },
      }),
    );
    await rec.until('text');
    const reply = JSON.parse(rec.messages[0]!.bytes.toString()) as {
      id: number;
      result: { sessionId: string };
    };
    expect(reply.id).toBe(1);
    expect(reply.result.sessionId).toMatch(/\S/);
    // The executor ends TCP without answering the Close (spec/fixtures/FINDINGS.md): 1006.
    rec.socket.close(1000);
    expect(await rec.ended()).toEqual([
      'open@1',
      expect.stringMatching(/^text /),
      'close 1006 ""@3',
    ]);
  });
});
