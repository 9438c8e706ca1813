/**
 * Where `execrx run` sends its requests: an executor at a URL, or one embedded in this
 * process. An endpoint only knows how to open transports; the client stack on top is the same.
 */
import type { Observable } from 'rxjs';
import { startExecServer } from '../server/index.js';
import type { Transport } from '../transport/transport.js';
import { connectWebSocket } from '../transport/webSocketTransport.js';

export interface Endpoint {
  /** For status and error lines, e.g. `ws://127.0.0.1:4321`. */
  readonly label: string;
  /** Whether a lost connection is worth re-opening (an embedded executor dies with us). */
  readonly reconnectable: boolean;
  /** Opens one transport per subscription. */
  connect(): Observable<Transport>;
  /** Releases what the endpoint owns (the embedded executor and its processes). */
  close(): Promise<void>;
}

/** An executor somewhere else, reached over plain WebSocket. */
export function remoteEndpoint(url: string): Endpoint {
  return {
    label: url,
    reconnectable: true,
    connect: () => connectWebSocket(url),
    close: async () => undefined,
  };
}

/**
 * Starts an executor inside this process and reaches it through the full client stack over
 * loopback. This is the one function to swap when the embedded path changes transport (e.g.
 * to the direct Noise channel).
 */
export async function startEmbeddedEndpoint(): Promise<Endpoint> {
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  return {
    label: `embedded executor (${server.url})`,
    reconnectable: false,
    connect: () => connectWebSocket(server.url),
    close: () => server.close(),
  };
}
