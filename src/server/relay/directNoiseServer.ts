/**
 * "Direct Noise" listening mode: the executor accepts relay WebSockets itself (no rendezvous in
 * between) and serves each one as a multiplexed relay socket. A harness connects straight to
 * it with a bundle naming this URL (codex's refresh tests run their executors this way).
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { NoiseChannelIdentity, type NoiseCryptoProvider } from '../../noise/index.js';
import { MAX_RELAY_WEBSOCKET_MESSAGE_SIZE } from '../../relay/index.js';
import { parseListenUrl } from '../execServer.js';
import { createExecutor, type Executor } from '../executor.js';
import { acceptAllHarnessKeys, type HarnessKeyValidator } from './harnessKeyValidator.js';
import {
  serveMultiplexedEnvironment,
  type MultiplexedEnvironmentLimits,
  type RelayDisconnectReason,
  type RelayEnvironmentEvent,
} from './multiplexedEnvironment.js';

/** Options of `startDirectNoiseExecServer`. */
export interface DirectNoiseExecServerOptions {
  /** `ws://IP:PORT`, default `ws://127.0.0.1:0`. */
  listen?: string;
  /** Bound into every prologue, default `environment`. */
  environmentId?: string;
  /** Bound into every prologue, default a fresh UUID. */
  registrationId?: string;
  /** Static identity, default a fresh one. */
  identity?: NoiseChannelIdentity;
  /** Default `acceptAllHarnessKeys`. */
  validator?: HarnessKeyValidator;
  /** Default a new `createExecutor()`, shut down by `close()`; a given one is left running. */
  executor?: Executor;
  keepalive?: { pingIntervalMs: number; pongTimeoutMs: number };
  limits?: Partial<MultiplexedEnvironmentLimits>;
  crypto?: NoiseCryptoProvider;
  /** Called for every relay event of every socket. */
  onEvent?: (event: RelayEnvironmentEvent) => void;
  /** Called when a socket's relay ends. */
  onSocketEnded?: (reason: RelayDisconnectReason) => void;
}

/** A running direct-Noise executor: its URL and identity, for a connect bundle. */
export interface DirectNoiseExecServer {
  /** `ws://<bound address>`: put it in a bundle's `websocketUrl`. */
  readonly url: string;
  readonly identity: NoiseChannelIdentity;
  readonly registrationId: string;
  readonly environmentId: string;
  readonly executor: Executor;
  /** Relay sockets currently served. */
  readonly socketCount: number;
  /** Drops every relay socket without a close handshake (tests of harness-side loss). */
  dropConnections(): void;
  /** Stops listening, ends every relay (`local_shutdown`), shuts down an owned executor. */
  close(): Promise<void>;
}

/**
 * An executor that speaks Noise directly on its own WebSocket listener (no registry, no
 * rendezvous). Resolves once it listens.
 */
export async function startDirectNoiseExecServer(
  options: DirectNoiseExecServerOptions = {},
): Promise<DirectNoiseExecServer> {
  const address = parseListenUrl(options.listen ?? 'ws://127.0.0.1:0');
  if (address.kind !== 'websocket') {
    throw new Error('direct Noise mode listens on `ws://IP:PORT` only');
  }
  const identity = options.identity ?? NoiseChannelIdentity.generate();
  const registrationId = options.registrationId ?? randomUUID();
  const environmentId = options.environmentId ?? 'environment';
  const ownsExecutor = options.executor === undefined;
  const executor = options.executor ?? createExecutor();
  const validator = options.validator ?? acceptAllHarnessKeys;
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal); // one listener per relay socket
  const sockets = new Set<WebSocket>();
  const relays = new Set<Promise<RelayDisconnectReason>>();

  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  });
  const server: Server = createServer((_request, response) => {
    response.writeHead(426, { 'content-length': 0 }).end();
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    wss.handleUpgrade(request, socket, head, (ws) => {
      sockets.add(ws);
      const relay = serveMultiplexedEnvironment(ws, {
        executor,
        environmentId,
        registrationId,
        identity,
        validator,
        signal: shutdown.signal,
        rawSocket: socket,
        ...(options.keepalive ? { keepalive: options.keepalive } : {}),
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.crypto ? { crypto: options.crypto } : {}),
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      });
      relays.add(relay);
      void relay.then((reason) => {
        relays.delete(relay);
        sockets.delete(ws);
        try {
          options.onSocketEnded?.(reason);
        } catch {
          // An observer's bug must not become an unhandled rejection.
        }
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : address.port;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;

  let closing: Promise<void> | undefined;
  return {
    url: `ws://${host}:${port}`,
    identity,
    registrationId,
    environmentId,
    executor,
    get socketCount() {
      return sockets.size;
    },
    dropConnections() {
      for (const socket of sockets) socket.terminate();
    },
    close() {
      closing ??= (async () => {
        shutdown.abort();
        await Promise.all(relays);
        for (const socket of sockets) socket.terminate();
        wss.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        if (ownsExecutor) await executor.shutdown();
      })();
      return closing;
    },
  };
}
