/**
 * The `--listen ws://IP:PORT` listener (spec §1.2): one HTTP server where `GET /readyz`
 * answers 200, `/` upgrades to a WebSocket connection (handshake checked as the binary's axum
 * checks it, see webSocketUpgrade.ts, then the bearer token when `auth` is set, see
 * webSocketAuth.ts), other paths answer 404, and any request carrying `Origin` is refused
 * with 403 (cross-site WebSocket hijacking). Each socket is one connection, pinged every 30 s.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Transport } from '../transport/transport.js';
import { acceptedWebSocket } from './acceptedWebSocket.js';
import { webSocketAuthRefusal, type WebSocketAuth } from './webSocketAuth.js';
import {
  closingResponse,
  firstHeader,
  switchingProtocols,
  upgradeRefusal,
  type HttpRefusal,
} from './webSocketUpgrade.js';

export const WEBSOCKET_KEEPALIVE_INTERVAL_MS = 30_000;

export interface WebSocketListenerOptions {
  host: string;
  port: number;
  keepaliveIntervalMs?: number;
  /** Upgrades must present this credential (`--ws-auth`). Default: none asked. */
  auth?: WebSocketAuth;
  /** Called with every accepted connection and its peer label (`exec-server websocket 127.0.0.1:5123`). */
  onConnection(transport: Transport, peerLabel: string): void;
}

export interface WebSocketListener {
  /** `ws://<bound address>` */
  readonly url: string;
  close(): Promise<void>;
}

/** How the listener answers a request that is not (or cannot become) a WebSocket. */
function routeRefusal(
  request: IncomingMessage,
  auth: WebSocketAuth | undefined,
): HttpRefusal | undefined {
  if (request.headers.origin !== undefined) return { status: 403, body: '' };
  const path = (request.url ?? '/').split('?')[0];
  if (path === '/readyz') return { status: 200, body: '' };
  if (path !== '/') return { status: 404, body: '' };
  const refusal = upgradeRefusal(request);
  if (refusal !== undefined || auth === undefined) return refusal;
  return webSocketAuthRefusal(auth, firstHeader(request, 'authorization'));
}

function respond(response: ServerResponse, { status, body }: HttpRefusal): void {
  const headers: Record<string, string | number> = { 'content-length': Buffer.byteLength(body) };
  if (body !== '') headers['content-type'] = 'text/plain; charset=utf-8';
  response.writeHead(status, headers);
  response.end(body);
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function listenWebSocket(
  options: WebSocketListenerOptions,
): Promise<WebSocketListener> {
  const upgraded = new Set<Socket>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) =>
    // A plain request to `/` fails the handshake checks (at the latest, for the missing
    // `Connection: upgrade`), exactly as the binary words it.
    respond(response, routeRefusal(request, options.auth) ?? { status: 400, body: '' }),
  );
  server.on('upgrade', (request: IncomingMessage, duplex: Duplex, head: Buffer) => {
    const socket = duplex as Socket;
    socket.on('error', () => undefined);
    const refusal = routeRefusal(request, options.auth);
    if (refusal) {
      socket.end(closingResponse(request.httpVersion, refusal, request.method));
      return;
    }
    socket.write(switchingProtocols(firstHeader(request, 'sec-websocket-key') ?? ''));
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    const peer = `${formatHost(socket.remoteAddress ?? 'unknown')}:${socket.remotePort ?? 0}`;
    const transport = acceptedWebSocket(socket, head, {
      keepaliveIntervalMs: options.keepaliveIntervalMs ?? WEBSOCKET_KEEPALIVE_INTERVAL_MS,
    });
    options.onConnection(transport, `exec-server websocket ${peer}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `ws://${formatHost(options.host)}:${port}`,
    close: async () => {
      for (const socket of upgraded) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
