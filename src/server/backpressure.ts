/**
 * Backpressure from a connection to the processes whose output it carries. A transport that
 * reports its backlog lets the connection stop reading process output while the peer is
 * behind (the children block on full pipes, as under the binary), instead of the executor
 * holding the whole output in memory (spec/server/acceptedWebSocket.spec.ts "stops reading a
 * child while the client does not read").
 */
import type { Transport } from '../transport/transport.js';

/** A transport that reports a backlog of unsent output. */
export interface BackpressureTransport extends Transport {
  /** True while more outbound bytes wait in memory than the transport wants to hold. */
  readonly backedUp: boolean;
  /** Calls `drained` once the backlog has been written; never if the transport closes first. */
  onceDrained(drained: () => void): void;
}

export function reportsBackpressure(transport: Transport): transport is BackpressureTransport {
  return typeof (transport as Partial<BackpressureTransport>).onceDrained === 'function';
}
