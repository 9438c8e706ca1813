/**
 * `startExecServer`: the executor behind a `--listen` address (spec §1.2, §20):
 * `ws://IP:PORT` (port 0 picks a free one) or `stdio`/`stdio://` (one connection on the
 * given streams; its end shuts the executor down, killing every process).
 */
import { isIP } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { fromStdio } from '../transport/stdioTransport.js';
import { createExecutor, type Executor, type ExecutorOptions } from './executor.js';
import type { WebSocketAuth } from './webSocketAuth.js';
import { listenWebSocket } from './webSocketListener.js';

export const DEFAULT_LISTEN_URL = 'ws://127.0.0.1:0';

/**
 * Options of `startExecServer`: the listen address, the stdio streams and the executor's own
 * options.
 */
export interface ExecServerOptions extends ExecutorOptions {
  /** `ws://IP:PORT` or `stdio` / `stdio://`. Default `ws://127.0.0.1:0`. */
  listen?: string;
  /** stdio mode only: where requests come from (default `process.stdin`). */
  input?: Readable;
  /** stdio mode only: where replies go (default `process.stdout`). */
  output?: Writable;
  /** WebSocket ping interval. Default 30 s. */
  keepaliveIntervalMs?: number;
  /** ws:// only: the credential every upgrade must present (see `loadWebSocketAuth`). */
  webSocketAuth?: WebSocketAuth;
}

/** A running executor behind its `--listen` address. */
export interface ExecServer {
  /** `ws://<bound address>`, or `stdio`. */
  readonly url: string;
  /** The executor; hand it more transports (e.g. Noise streams) with `serveTransport`. */
  readonly executor: Executor;
  /** Resolves when the server has stopped (after `close()`, or at stdio end of input). */
  readonly closed: Promise<void>;
  /** Stops listening, closes every connection and kills every child process. */
  close(): Promise<void>;
}

/** A parsed `--listen` value. */
export type ListenAddress = { kind: 'stdio' } | { kind: 'websocket'; host: string; port: number };

/** Parses a `--listen` value with the binary's error texts. */
export function parseListenUrl(listen: string): ListenAddress {
  if (listen === 'stdio' || listen === 'stdio://') return { kind: 'stdio' };
  if (!listen.startsWith('ws://')) {
    throw new Error(
      `unsupported --listen URL \`${listen}\`; expected \`ws://IP:PORT\` or \`stdio\``,
    );
  }
  const invalid = new Error(
    `invalid websocket --listen URL \`${listen}\`; expected \`ws://IP:PORT\``,
  );
  const match = /^ws:\/\/(?:\[([^\]]+)\]|([^:/[\]]+)):(\d{1,5})$/.exec(listen);
  if (!match) throw invalid;
  const host = match[1] ?? (match[2] as string);
  const port = Number(match[3]);
  if (port > 65_535) throw invalid;
  if (match[1] !== undefined ? isIP(host) !== 6 : isIP(host) !== 4) throw invalid;
  return { kind: 'websocket', host, port };
}

export async function startExecServer(options: ExecServerOptions = {}): Promise<ExecServer> {
  const address = parseListenUrl(options.listen ?? DEFAULT_LISTEN_URL);
  const executor = createExecutor(options);
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));

  if (address.kind === 'stdio') {
    const transport = fromStdio(options.input ?? process.stdin, options.output ?? process.stdout);
    const connection = executor.serveTransport(transport, 'exec-server stdio');
    const stop = async (): Promise<void> => {
      await executor.shutdown();
      markClosed();
    };
    // Nobody else can ever connect: the end of input ends the executor.
    void connection.done.then(stop);
    return {
      url: 'stdio',
      executor,
      closed,
      close: async () => {
        connection.close();
        await stop();
      },
    };
  }

  const listener = await listenWebSocket({
    host: address.host,
    port: address.port,
    keepaliveIntervalMs: options.keepaliveIntervalMs,
    auth: options.webSocketAuth,
    onConnection: (transport, peerLabel) => executor.serveTransport(transport, peerLabel),
  });
  let closing: Promise<void> | undefined;
  return {
    url: listener.url,
    executor,
    closed,
    close: () => {
      closing ??= (async () => {
        await listener.close();
        await executor.shutdown();
        markClosed();
      })();
      return closing;
    },
  };
}
