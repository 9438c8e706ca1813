/**
 * The `--listen ws://IP:PORT` listener (spec §1.2): one HTTP server whose `/` upgrades to a
 * WebSocket connection, `GET /readyz` answers 200, and any request carrying `Origin` is
 * refused with 403 (cross-site WebSocket hijacking). Each socket is one connection, pinged
 * every 30 s.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Transport } from '../transport/transport.js';
import { acceptedWebSocket } from './acceptedWebSocket.js';

export const WEBSOCKET_KEEPALIVE_INTERVAL_MS = 30_000;
/** axum/tungstenite default message size limit. */
export const MAX_WEBSOCKET_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface WebSocketListenerOptions {
  host: string;
  port: number;
  keepaliveIntervalMs?: number;
  /** Called with every accepted connection and its peer label (`exec-server websocket 127.0.0.1:5123`). */
  onConnection(transport: Transport, peerLabel: string): void;
}

export interface WebSocketListener {
  /** `ws://<bound address>` */
  readonly url: string;
  close(): Promise<void>;
}

function respond(response: ServerResponse, status: number, body = '', contentType?: string): void {
  const headers: Record<string, string | number> = { 'content-length': Buffer.byteLength(body) };
  if (contentType) headers['content-type'] = contentType;
  response.writeHead(status, headers);
  response.end(body);
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function listenWebSocket(
  options: WebSocketListenerOptions,
): Promise<WebSocketListener> {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_WEBSOCKET_MESSAGE_BYTES,
  });
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.headers.origin !== undefined) return respond(response, 403);
    if (path === '/readyz') return respond(response, 200);
    if (path === '/')
      return respond(
        response,
        400,
        "Connection header did not include 'upgrade'",
        'text/plain; charset=utf-8',
      );
    respond(response, 404);
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    if (request.headers.origin !== undefined) return refuseUpgrade(socket, 403, 'Forbidden');
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/') return refuseUpgrade(socket, 404, 'Not Found');
    wss.handleUpgrade(request, socket, head, (ws) => {
      const peer = `${formatHost(request.socket.remoteAddress ?? 'unknown')}:${request.socket.remotePort ?? 0}`;
      const transport = acceptedWebSocket(ws, socket, {
        keepaliveIntervalMs: options.keepaliveIntervalMs ?? WEBSOCKET_KEEPALIVE_INTERVAL_MS,
      });
      options.onConnection(transport, `exec-server websocket ${peer}`);
    });
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
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
