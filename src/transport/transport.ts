/**
 * A transport carries whole JSON-RPC messages (one JSON text per item) between two peers.
 * Plain WebSocket, stdio and the Noise relay all look like this to the rpc layer.
 */
import type { Observable } from 'rxjs';

/**
 * Whole JSON-RPC messages between two peers, one JSON text per item. Every transport (WebSocket,
 * stdio, Noise harness, in-memory) looks like this to the rpc layer and the executor.
 */
export interface Transport {
  /**
   * Inbound messages in arrival order. Hot: subscribe synchronously when the transport is
   * handed to you; nothing is buffered before the first subscription. Completes when the peer
   * closes cleanly, errors (with an `ExecServerError`) when the transport fails.
   */
  readonly incoming$: Observable<string>;
  /**
   * Optional: the same messages as `incoming$`, except that one received as bytes may come
   * undecoded, as a Uint8Array holding its text in UTF-8 that the transport has already
   * validated. A consumer subscribes to this one or to `incoming$`, not to both (the rpc layer
   * reads process output straight from the bytes: src/rpc/fastpath/outputNotification.ts).
   */
  readonly incomingUtf8$?: Observable<string | Uint8Array>;
  /**
   * Queues one outbound message. Sending on a closed transport is a silent no-op. A message
   * the transport can never carry throws (`MessageTooLargeError`) and nothing is sent.
   */
  send(message: string): void;
  /** Closes the transport. Idempotent; `incoming$` completes afterwards. */
  close(): void;
  /**
   * Flow control for a slow consumer: while paused the transport stops reading from its peer,
   * so the peer's writes back up instead of our memory (a few messages already read may still
   * arrive). Idempotent. A transport that cannot stop reading (a browser WebSocket, an
   * in-memory pair) leaves it out or ignores it.
   */
  setPaused?(paused: boolean): void;
}

/** Opens a transport. Cold: each subscription opens a new one; unsubscribing before it opens aborts it. */
export type TransportFactory = () => Observable<Transport>;
