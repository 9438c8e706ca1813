/**
 * Test helper: the observable behaviour of a client {@link PlatformWebSocket} as a trace of
 * strings, so that two implementations can be held to the same list. An entry is
 * `event@readyState` (`open@1`, `error@2`, `close 1000 "reason"@3`, `unexpected-response 401@0`),
 * a message `text "…"` (up to 40 bytes) / `text 300B` / `binary 3B`, or `pong`. Also a `ws`
 * server on loopback to talk to. Every wait is bounded by {@link WAIT_MS}.
 */
import type { IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type {
  PlatformWebSocket,
  RefusedUpgrade,
  WebSocketData,
} from '../../src/platform/platform.js';

export const WAIT_MS = 5_000;

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The bytes of a message however it came (string, bytes, ArrayBuffer, fragments), copied. */
export function bytesOf(data: WebSocketData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data);
}

export interface Recording {
  readonly socket: PlatformWebSocket;
  readonly trace: string[];
  readonly errors: Error[];
  readonly messages: Array<{ bytes: Buffer; isBinary: boolean }>;
  /** The responses `unexpected-response` gave. */
  readonly refused: RefusedUpgrade[];
  /** Waits until an entry starting with `prefix` is in the trace. */
  until(prefix: string): Promise<void>;
  /** Waits until `count` messages came. */
  untilMessages(count: number): Promise<void>;
  /** Waits for `close`, then a moment more (nothing may follow it), and returns the trace. */
  ended(): Promise<string[]>;
}

/**
 * Records every event of `socket`. `refusals: false` leaves `unexpected-response` without a
 * listener (then a refused upgrade is an `error`).
 */
export function recordWebSocket(
  socket: PlatformWebSocket,
  { refusals = true }: { refusals?: boolean } = {},
): Recording {
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
    push(`close ${code} ${JSON.stringify(Buffer.from(reason).toString())}@${socket.readyState}`),
  );
  socket.on('error', (error) => {
    errors.push(error);
    push(`error@${socket.readyState}`);
  });
  socket.on('pong', () => push('pong'));
  if (refusals) {
    socket.on('unexpected-response', (_request, response) => {
      refused.push(response);
      push(`unexpected-response ${response.statusCode}@${socket.readyState}`);
    });
  }
  const waitFor = (what: string, done: () => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no ${what} within ${WAIT_MS} ms; trace: ${trace.join(', ')}`));
      }, WAIT_MS);
      const finish = (): void => {
        clearTimeout(timer);
        wakers.delete(check);
      };
      wakers.add(check);
      check();
    });
  const until = (prefix: string): Promise<void> =>
    waitFor(`\`${prefix}\``, () => trace.some((entry) => entry.startsWith(prefix)));
  return {
    socket,
    trace,
    errors,
    messages,
    refused,
    until,
    untilMessages: (count) => waitFor(`${count} messages`, () => messages.length >= count),
    ended: async () => {
      await until('close');
      await delay(50);
      return trace;
    },
  };
}

export interface WsServer {
  readonly url: string;
  /** The next connection the server accepted (already or within {@link WAIT_MS}). */
  nextSocket(): Promise<{ socket: WebSocket; request: IncomingMessage }>;
  close(): Promise<void>;
}

/** Sends every message back as it came. */
export const echo = (socket: WebSocket): void =>
  void socket.on('message', (data, isBinary) =>
    socket.send(bytesOf(data as WebSocketData), { binary: isBinary }),
  );

/**
 * A `ws` server on 127.0.0.1:0 (`wss://` with `tls`); `onConnection` (default {@link echo})
 * runs as soon as a connection is accepted.
 */
export async function startWsServer(
  onConnection: (socket: WebSocket) => void = echo,
  tls?: { cert: Buffer; key: Buffer },
): Promise<WsServer> {
  const https = tls ? createHttpsServer(tls) : undefined;
  const wss = new WebSocketServer(https ? { server: https } : { host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) =>
    https ? https.listen(0, '127.0.0.1', resolve) : wss.once('listening', () => resolve()),
  );
  const accepted: Array<{ socket: WebSocket; request: IncomingMessage }> = [];
  wss.on('connection', (socket, request) => {
    accepted.push({ socket, request });
    onConnection(socket);
  });
  const { port } = (https ?? wss).address() as AddressInfo;
  return {
    url: `${tls ? 'wss' : 'ws'}://127.0.0.1:${port}`,
    nextSocket: async () => {
      for (let waited = 0; accepted.length === 0; waited += 10) {
        if (waited > WAIT_MS) throw new Error('no connection reached the ws server');
        await delay(10);
      }
      return accepted.shift()!;
    },
    close: async () => {
      wss.clients.forEach((client) => client.terminate());
      await new Promise((resolve) => wss.close(resolve));
      if (https) await new Promise((resolve) => https.close(resolve));
    },
  };
}

/** The server side's close code and reason (`1000 "bye"`), once its socket closed. */
export function serverClose(socket: WebSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server socket did not close')), WAIT_MS);
    socket.once('close', (code, reason) => {
      clearTimeout(timer);
      resolve(`${code} ${JSON.stringify(reason.toString())}`);
    });
  });
}

/** The body of a refused upgrade, read as
 * src/transport/webSocketTransport.ts `onRefused` does. */
export function readRefusal(response: RefusedUpgrade): Promise<string> {
  return new Promise((resolve, reject) => {
    let read = '';
    const timer = setTimeout(() => reject(new Error('the body never ended')), WAIT_MS);
    response.setEncoding('utf8');
    response.on('data', (chunk) => (read += chunk));
    response.once('end', () => {
      clearTimeout(timer);
      resolve(read);
    });
  });
}
