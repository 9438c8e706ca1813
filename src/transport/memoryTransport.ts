/**
 * Two linked in-memory transports (an executor in this process and its client). What one end
 * sends, the other receives in order, each message in its own microtask, so a reply never
 * re-enters the sender's `send`. Closing either end completes both after the messages
 * already sent.
 */
import { Subject } from 'rxjs';
import type { Transport } from './transport.js';

export function createMemoryTransportPair(): readonly [Transport, Transport] {
  const inboxes = [new Subject<string>(), new Subject<string>()] as const;
  let closed = false;
  const end = (own: Subject<string>, peer: Subject<string>): Transport => ({
    incoming$: own.asObservable(),
    send(message) {
      if (closed) return;
      queueMicrotask(() => {
        if (!peer.closed) peer.next(message);
      });
    },
    close() {
      if (closed) return;
      closed = true;
      queueMicrotask(() => {
        own.complete();
        peer.complete();
      });
    },
  });
  return [end(inboxes[0], inboxes[1]), end(inboxes[1], inboxes[0])];
}
