/**
 * An executor inside this process, reached without a socket: each `connect()` hands one end of
 * an in-memory transport pair to a shared executor (one session registry, so sessions can be
 * resumed on a new connection). This is what a `local` environment runs on.
 */
import { defer, of, type Observable } from 'rxjs';
import { createMemoryTransportPair } from '../transport/memoryTransport.js';
import type { Transport } from '../transport/transport.js';
import { createExecutor, type ExecutorOptions } from './executor.js';

/** An executor in this process (`startLocalExecutor`). */
export interface LocalExecutor {
  /** Cold: each subscription opens one new connection to the executor. */
  connect(): Observable<Transport>;
  /** Closes every connection and kills every process the executor started. */
  shutdown(): Promise<void>;
}

/**
 * An executor in this process, reached through in-memory transports: what a `local` environment
 * runs on. Sessions can be resumed on a new connection, as over a socket.
 */
export function startLocalExecutor(options: ExecutorOptions = {}): LocalExecutor {
  const executor = createExecutor(options);
  return {
    connect: () =>
      defer(() => {
        const [client, server] = createMemoryTransportPair();
        executor.serveTransport(server, 'exec-server local');
        return of(client);
      }),
    shutdown: () => executor.shutdown(),
  };
}
