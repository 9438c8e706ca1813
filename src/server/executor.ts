/**
 * The transport-independent executor: one session registry shared by every connection handed
 * to it. The listeners (WebSocket, stdio) and, later, the Noise relay feed it transports.
 */
import type { Transport } from '../transport/transport.js';
import { ConnectionProcessor } from './connectionProcessor.js';
import { limitConcurrentRequests } from './requestLimit.js';
import { DETACHED_SESSION_TTL_MS, SessionRegistry } from './sessionRegistry.js';

/** Options of every executor, whatever it listens on. */
export interface ExecutorOptions {
  /** How long a session survives without a connection. Default 30 s. */
  detachedSessionTtlMs?: number;
  /** At most this many requests of one connection handled at a time (requestLimit.ts). Default: no limit. */
  concurrentRequests?: number;
  /** Codex home read by `environmentConfig/read`. Default `$CODEX_HOME`, else `~/.codex`. */
  codexHome?: string;
}

/** One connection an executor serves. */
export interface ServedConnection {
  /** Resolves once the connection has ended. */
  readonly done: Promise<void>;
  /** Ends the connection. */
  close(): void;
}

/**
 * An executor without a listener: feed it transports (WebSocket, stdio, Noise streams, in-memory).
 */
export interface Executor {
  /**
   * Serves one connection. `peerLabel` names the peer in malformed-input errors, e.g.
   * `exec-server websocket 127.0.0.1:5123` (WebSocket wording) or `exec-server stdio`.
   */
  serveTransport(transport: Transport, peerLabel: string): ServedConnection;
  /** Number of live sessions (attached or detached). */
  readonly sessionCount: number;
  /** Closes every connection and kills every process of every session. */
  shutdown(): Promise<void>;
}

/** Malformed-input prefix per transport kind, as the binary words it. */
export function parseErrorPrefix(peerLabel: string): string {
  return peerLabel.startsWith('exec-server websocket')
    ? `failed to parse websocket JSON-RPC message from ${peerLabel}`
    : `failed to parse JSON-RPC message from ${peerLabel}`;
}

/**
 * A transport-independent executor: one session registry shared by every connection handed to
 * `serveTransport`, so a session can be resumed on another connection for `detachedSessionTtlMs`.
 */
export function createExecutor(options: ExecutorOptions = {}): Executor {
  const registry = new SessionRegistry(options.detachedSessionTtlMs ?? DETACHED_SESSION_TTL_MS);
  const connections = new Set<ConnectionProcessor>();
  return {
    serveTransport(transport, peerLabel) {
      const limit = options.concurrentRequests;
      const limited = limit === undefined ? transport : limitConcurrentRequests(transport, limit);
      const connection = new ConnectionProcessor(limited, {
        registry,
        parseErrorPrefix: parseErrorPrefix(peerLabel),
        codexHome: options.codexHome,
      });
      connections.add(connection);
      void connection.done.then(() => connections.delete(connection));
      return connection;
    },
    get sessionCount() {
      return registry.size;
    },
    async shutdown() {
      const closing = [...connections].map((connection) => {
        connection.close();
        return connection.done;
      });
      await Promise.all(closing);
      registry.shutdown();
    },
  };
}
