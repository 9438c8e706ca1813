/**
 * Plain twin of src/server/backpressure.ts, for the side-by-side figure only: no transport
 * reports a backlog, so output is read from the children however far behind the client is
 * (unbounded memory; the shipped module is a resource bound, not a speed trick).
 */
import type { Transport } from '../../../src/transport/transport.js';

export interface BackpressureTransport extends Transport {
  readonly backedUp: boolean;
  onceDrained(drained: () => void): void;
}

export function reportsBackpressure(_transport: Transport): _transport is BackpressureTransport {
  return false;
}
