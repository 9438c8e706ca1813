/**
 * Two linked in-memory Transports for tests: what one side sends, the other receives,
 * synchronously and in order. `sent` records each side's outbound messages.
 */
import { Subject } from 'rxjs';
import { DisconnectedError } from '../../src/protocol/errors.js';
import type { Transport } from '../../src/transport/transport.js';

export interface PairEnd extends Transport {
  /** Every message this end sent, in order. */
  readonly sent: string[];
  /** True once this end's `incoming$` has ended. */
  readonly isClosed: boolean;
  /** Simulates an abnormal loss: the *other* end's `incoming$` errors, this end's completes. */
  drop(reason: string): void;
}

export function createTransportPair(): { client: PairEnd; server: PairEnd } {
  const client = createEnd();
  const server = createEnd();
  client.link(server);
  server.link(client);
  return { client: client.end, server: server.end };
}

interface EndInternals {
  end: PairEnd;
  link(peer: EndInternals): void;
  deliver(message: string): void;
  finish(error?: Error): void;
}

function createEnd(): EndInternals {
  const incoming = new Subject<string>();
  const sent: string[] = [];
  let closed = false;
  let peer: EndInternals | undefined;
  const internals: EndInternals = {
    end: {
      incoming$: incoming.asObservable(),
      sent,
      get isClosed() {
        return closed;
      },
      send(message) {
        if (closed) return;
        sent.push(message);
        peer?.deliver(message);
      },
      close() {
        internals.finish();
        peer?.finish();
      },
      drop(reason) {
        internals.finish();
        peer?.finish(new DisconnectedError(`exec-server transport disconnected: ${reason}`));
      },
    },
    link(other) {
      peer = other;
    },
    deliver(message) {
      if (!closed) incoming.next(message);
    },
    finish(error) {
      if (closed) return;
      closed = true;
      if (error) incoming.error(error);
      else incoming.complete();
    },
  };
  return internals;
}
