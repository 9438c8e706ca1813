/**
 * The HTTP side of `execrx console`: serves the page (built into dist/console/ by
 * scripts/bundle-browser.mjs) and a same-origin WebSocket pass-through to one executor: a
 * WebSocket executor, or a transport this process opens (a stdio child, the local executor),
 * one per page connection and closed with it.
 *
 * Executors answer 403 to any upgrade that carries an `Origin` (codex 0.169.0 does, and so does
 * `execrx serve`), which keeps web pages off them. The pass-through must not reopen that hole,
 * so every request needs the random token of the printed URL (compared in constant time), and
 * an upgrade is accepted only when its `Origin` is the console's own: another page in the same
 * browser, or another user of the machine, gets 403 (spec/cli/console.spec.ts). Frames are
 * forwarded as they are, in both directions; nothing is added to the stream.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { take, type Observable } from 'rxjs';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { errorMessage } from '../transport/errorMessage.js';
import type { Transport } from '../transport/transport.js';
import { webSocketMessageText } from '../transport/webSocketMessageText.js';

/** An environment the page looks up in a registry and reaches over Noise, end to end. */
export interface RegistryTarget {
  readonly kind: 'registry';
  readonly registryUrl: string;
  readonly environmentId: string;
  readonly token: string;
}

/** How the page connects: through the pass-through to `url` or to a transport `open` opens, or to a registry. */
export type ConsoleTarget =
  | { readonly kind: 'executor'; readonly url: string; readonly label: string }
  | {
      readonly kind: 'transport';
      /** Cold: each subscription opens the transport of one page connection. */
      readonly open: () => Observable<Transport>;
      readonly label: string;
    }
  | RegistryTarget;

/** What the page reads from its `execrx-config` script element. */
export type ConsolePageConfig =
  { readonly kind: 'executor'; readonly path: string; readonly label: string } | RegistryTarget;

export interface ConsoleServerOptions {
  readonly target: ConsoleTarget;
  /** 127.0.0.1 port; 0 picks a free one. */
  readonly port: number;
  /** Directory holding index.html, console.js, console.css, xterm.css. */
  readonly assetsDir: string;
  /** A transport target's page is disconnected past this many unread bytes; default MAX_UNSENT_TO_PAGE_BYTES. */
  readonly maxUnsentToPageBytes?: number;
}

export interface ConsoleServer {
  /** `http://127.0.0.1:PORT/?token=…`: the only URL that opens the page. */
  readonly url: string;
  close(): Promise<void>;
}

const ASSETS: Readonly<Record<string, string>> = {
  '/console.js': 'text/javascript; charset=utf-8',
  '/console.css': 'text/css; charset=utf-8',
  '/xterm.css': 'text/css; charset=utf-8',
};

/** The executor accepts messages up to 64 MiB (tungstenite's default); so does the pass-through. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Pass-through connections open at once (a page needs one per client session). */
export const MAX_PASS_THROUGHS = 16;
/** Above this many unsent bytes on one side, the other side is paused until it drains. */
const HIGH_WATER_BYTES = 8 * 1024 * 1024;
/**
 * A transport cannot be paused: a page that leaves more than this unread is disconnected (1011)
 * instead of growing the console's memory.
 */
export const MAX_UNSENT_TO_PAGE_BYTES = MAX_MESSAGE_BYTES + HIGH_WATER_BYTES;
const BAD_GATEWAY = 'HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\ncontent-length: 0\r\n\r\n';

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const token = randomBytes(24).toString('hex');
  const tokenBytes = Buffer.from(token);
  const html = await readFile(`${options.assetsDir}/index.html`, 'utf8');
  const sockets = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_MESSAGE_BYTES,
  });
  let origin = '';
  let passThroughs = 0;

  const hasToken = (requestUrl: URL): boolean => {
    const given = Buffer.from(requestUrl.searchParams.get('token') ?? '');
    return given.length === tokenBytes.length && timingSafeEqual(given, tokenBytes);
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const requestUrl = new URL(request.url ?? '/', origin);
    if (request.method !== 'GET' || !hasToken(requestUrl)) {
      refuse(
        response,
        403,
        'execrx console: open the URL that `execrx console` printed (it carries the token)',
      );
      return;
    }
    if (requestUrl.pathname === '/') {
      servePage(response, html, token, pageConfig(options.target), options.target);
      return;
    }
    const type = ASSETS[requestUrl.pathname];
    if (type === undefined) {
      refuse(response, 404, 'not found');
      return;
    }
    readFile(`${options.assetsDir}${requestUrl.pathname}`).then(
      (body) => {
        response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
        response.end(body);
      },
      () => refuse(response, 500, 'console asset missing: run `npm run build`'),
    );
  });

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const requestUrl = new URL(request.url ?? '/', origin);
    const target = options.target;
    const allowed =
      requestUrl.pathname === '/executor' &&
      request.headers.origin === origin &&
      hasToken(requestUrl);
    if (target.kind === 'registry' || !allowed) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    if (passThroughs >= MAX_PASS_THROUGHS) {
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n',
      );
      return;
    }
    // Counted until the page's TCP socket closes, whichever way the pass-through ends.
    passThroughs += 1;
    socket.once('close', () => (passThroughs -= 1));
    // The page's upgrade is answered once the executor's side is open, so a missing executor
    // is a failed connect (502) to the page's client, not an open socket that closes at once.
    if (target.kind === 'transport') {
      openTransport(target.open, socket, (transport) =>
        sockets.handleUpgrade(request, socket, head, (page) =>
          relay(page, transport, options.maxUnsentToPageBytes ?? MAX_UNSENT_TO_PAGE_BYTES),
        ),
      );
      return;
    }
    const executor = new WebSocket(target.url, {
      perMessageDeflate: false,
      maxPayload: MAX_MESSAGE_BYTES,
    });
    const refuseUpgrade = (): void => {
      executor.terminate();
      socket.end(BAD_GATEWAY);
    };
    const abandon = (): void => executor.terminate();
    socket.once('close', abandon);
    executor.once('error', refuseUpgrade);
    executor.once('unexpected-response', refuseUpgrade);
    executor.once('open', () => {
      socket.off('close', abandon);
      executor.off('error', refuseUpgrade);
      executor.off('unexpected-response', refuseUpgrade);
      sockets.handleUpgrade(request, socket, head, (page) => passThrough(page, executor));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('console: no TCP address');
  origin = `http://127.0.0.1:${address.port}`;

  return {
    url: `${origin}/?token=${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function pageConfig(target: ConsoleTarget): ConsolePageConfig {
  return target.kind === 'registry'
    ? target
    : { kind: 'executor', path: '/executor', label: target.label };
}

function servePage(
  response: ServerResponse,
  html: string,
  token: string,
  config: ConsolePageConfig,
  target: ConsoleTarget,
): void {
  // `<` escaped: the JSON cannot end the script element it sits in.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  const body = html.replaceAll('%TOKEN%', token).replace('%CONFIG%', json);
  // The Noise path talks to the registry and the rendezvous the registry names. xterm sets its
  // theme with a <style> element of its own, hence inline styles (never inline scripts).
  const connect = target.kind === 'registry' ? "'self' http: https: ws: wss:" : "'self'";
  response.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // The token is in the URL: never send it on as a referrer.
    'referrer-policy': 'no-referrer',
    'content-security-policy': `default-src 'self'; connect-src ${connect}; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
  });
  response.end(body);
}

function refuse(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(`${text}\n`);
}

/**
 * Joins the page's socket to the executor's (opened without an `Origin`). Either side ending
 * ends the other: a clean close (1000/1001) is passed on, anything else becomes 1011 so the
 * page's client sees a lost connection and recovers.
 */
function passThrough(page: WebSocket, executor: WebSocket): void {
  let ended = false;
  const end = (code: number, reason: string): void => {
    if (ended) return;
    ended = true;
    const clean = code === 1000 || code === 1001;
    for (const socket of [page, executor]) {
      if (socket.readyState === WebSocket.OPEN) socket.close(clean ? code : 1011, reason);
      else socket.terminate();
    }
  };
  page.on('message', (data, isBinary) => forward(page, executor, data, isBinary));
  executor.on('message', (data, isBinary) => forward(executor, page, data, isBinary));
  executor.on('error', (error) => end(1011, `executor: ${error.message}`.slice(0, 120)));
  page.on('error', () => end(1011, 'page socket error'));
  executor.on('close', (code) => end(code, 'executor closed the connection'));
  page.on('close', (code) => end(code, 'page closed the connection'));
}

/** Sends on `to`; pauses `from` while `to` has more than HIGH_WATER_BYTES unsent. */
function forward(from: WebSocket, to: WebSocket, data: RawData, isBinary: boolean): void {
  if (to.readyState !== WebSocket.OPEN) return;
  to.send(data as Buffer, { binary: isBinary }, () => {
    if (from.isPaused && to.bufferedAmount < HIGH_WATER_BYTES / 2) from.resume();
  });
  if (to.bufferedAmount > HIGH_WATER_BYTES && !from.isPaused) from.pause();
}

/**
 * Opens the transport of one page connection and hands it to `upgrade`; a failed open is a 502.
 * The transport is closed when the page's TCP socket closes, whether or not it was upgraded
 * (spec/cli/consoleEnvironment.spec.ts: one stdio child per page connection, gone with it).
 */
function openTransport(
  open: () => Observable<Transport>,
  socket: Duplex,
  upgrade: (transport: Transport) => void,
): void {
  let opened = false;
  const opening = open()
    .pipe(take(1))
    .subscribe({
      next: (transport) => {
        opened = true;
        socket.once('close', () => transport.close());
        if (socket.destroyed) transport.close();
        else upgrade(transport);
      },
      error: () => socket.end(BAD_GATEWAY),
      complete: () => {
        if (!opened) socket.end(BAD_GATEWAY);
      },
    });
  socket.once('close', () => opening.unsubscribe());
}

/**
 * Joins the page's socket to a transport: each page message is sent as one JSON text, each
 * transport message becomes one text frame. The transport ending cleanly closes the page with
 * 1000, failing with 1011; the page closing closes the transport. A page leaving more than
 * `maxUnsentBytes` unread is disconnected (spec/cli/consoleServer.spec.ts).
 */
function relay(page: WebSocket, transport: Transport, maxUnsentBytes: number): void {
  let ended = false;
  const end = (code: number, reason: string): void => {
    if (ended) return;
    ended = true;
    transport.close();
    if (page.readyState === WebSocket.OPEN) page.close(code, reason);
    else page.terminate();
  };
  const incoming = transport.incoming$.subscribe({
    next: (text) => {
      if (page.readyState !== WebSocket.OPEN) return;
      page.send(text);
      if (page.bufferedAmount > maxUnsentBytes) end(1011, 'page is not reading');
    },
    error: (error: unknown) => end(1011, `executor: ${errorMessage(error)}`.slice(0, 120)),
    complete: () => end(1000, 'executor closed the connection'),
  });
  page.on('message', (data, isBinary) => {
    const text = webSocketMessageText(data as Buffer, isBinary);
    if (text === undefined) return end(1007, 'a binary message that is not UTF-8');
    try {
      transport.send(text);
    } catch (error) {
      end(1009, errorMessage(error).slice(0, 120));
    }
  });
  page.on('error', () => end(1011, 'page socket error'));
  page.on('close', (code) => {
    incoming.unsubscribe();
    end(code, 'page closed the connection');
  });
}
